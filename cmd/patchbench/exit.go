package main

import (
	"errors"
	"flag"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/report"
)

// usageErr is bad usage of a command (a flag's value, a missing or an
// extra argument): exitCode prints it with a pointer to -h, exit 2.
type usageErr struct {
	msg string
	// flag, when set, is the run flag whose value msg refuses; value
	// the item refused when the flag is repeated (an --actor spec);
	// why the refusal without the flag's name, which a plan file's
	// key takes instead (runFlags.inPlan).
	flag, value, why string
	// with is the other run flag a refusal names (--sample's refusal of
	// --limit), and planWhy why with it named by its plan key, which
	// inPlan takes when the command line did not give it.
	with, planWhy string
}

func (e *usageErr) Error() string { return e.msg }

// usagef makes a usage error of fmt.Sprintf's message.
func usagef(format string, a ...any) error {
	return &usageErr{msg: fmt.Sprintf(format, a...)}
}

// flagf is a usage error about the value of the run flag name: why (of
// fmt.Sprintf) says what is wrong without naming the flag. It reads
// "--name why"; a plan file that set the flag is named instead, with the
// key and its line (runFlags.inPlan).
func flagf(name, why string, a ...any) error {
	w := fmt.Sprintf(why, a...)
	return &usageErr{msg: "--" + name + " " + w, flag: name, why: w}
}

// flagCausef is flagf for a cause quoted after the flag: "--name: why".
func flagCausef(name, why string, a ...any) error {
	w := fmt.Sprintf(why, a...)
	return &usageErr{msg: "--" + name + ": " + w, flag: name, why: w}
}

// valueErr is a usage error msg about one value of the repeated run flag
// name (an --actor spec), why its refusal without the flag's name.
func valueErr(name, value, msg, why string) error {
	return &usageErr{msg: msg, flag: name, value: value, why: why}
}

// exitErr is an error with an exit code of its own (exitIncomplete: run's
// work is not done).
type exitErr struct {
	code int
	err  error
}

func (e *exitErr) Error() string { return e.err.Error() }

func (e *exitErr) Unwrap() error { return e.err }

// exitCode is the one place where an error becomes an exit code and the
// lines on stderr of the command name:
//
//   - nil: exitOK, nothing printed;
//   - flag.ErrHelp: the usage was printed on stdout as asked: exitOK;
//   - a usage error: "patchbench NAME: message" and the pointer to -h, exitUsage;
//   - an exitErr: "patchbench NAME: message", its code;
//   - any other error: "patchbench NAME: message", exitUsage.
//
// The message is printed with its control and format characters escaped
// (report.Printable).
func exitCode(stderr io.Writer, name string, err error) int {
	var usage *usageErr
	var exit *exitErr
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		return exitOK
	case errors.As(err, &usage):
		fmt.Fprintf(stderr, "patchbench %s: %s\nRun \"patchbench %s -h\" for usage.\n", name, report.Printable(err.Error()), name)
		return exitUsage
	}
	// A message may name a path or quote a file; its control characters
	// (a directory named with ESC) reach the terminal escaped.
	fmt.Fprintf(stderr, "patchbench %s: %s\n", name, report.Printable(err.Error()))
	if errors.As(err, &exit) {
		return exit.code
	}
	return exitUsage
}

// exit is exitCode for this command's name and stderr.
func (f *flagSet) exit(err error) int { return exitCode(f.stderr, f.Name(), err) }

// usageError reports bad usage with a pointer to -h and returns exitUsage.
func (f *flagSet) usageError(format string, a ...any) int {
	return f.exit(usagef(format, a...))
}

// failf prints "patchbench NAME: message" to stderr and returns exitUsage.
func failf(stderr io.Writer, name, format string, a ...any) int {
	return exitCode(stderr, name, fmt.Errorf(format, a...))
}
