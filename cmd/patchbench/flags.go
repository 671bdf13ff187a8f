package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
)

// flagSet is a subcommand's flags with its usage line and examples.
type flagSet struct {
	*flag.FlagSet
	usageLine, examples string
	stdout, stderr      io.Writer
	choices             []choiceFlag
}

// choiceFlag is a string flag that takes one of a fixed list of values
// (flagSet.choice).
type choiceFlag struct {
	name    string
	value   *string
	allowed []string
}

// choice defines a string flag whose value must be one of allowed (or
// empty, when value is empty: the flag left unset). parse and
// parseWithArgs refuse any other value with one message, "--NAME must be
// a, b or c, not "x"", as a usage error.
func (f *flagSet) choice(name, value, usage string, allowed ...string) *string {
	p := f.String(name, value, usage)
	f.choices = append(f.choices, choiceFlag{name: name, value: p, allowed: allowed})
	return p
}

// badChoice returns the first choice flag that holds a value it does not
// allow, as a usage error.
func (f *flagSet) badChoice() error {
	for _, c := range f.choices {
		if v := *c.value; !slices.Contains(c.allowed, v) && !(v == "" && f.Lookup(c.name).DefValue == "") {
			return usagef("--%s must be %s, not %q", c.name, orList(c.allowed), v)
		}
	}
	return nil
}

// orList writes "a", "a or b", "a, b or c".
func orList(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// newFlags makes the FlagSet of a subcommand. Its -h output (on stdout)
// is the usage line, the flags and the examples.
func newFlags(name, usageLine, examples string, stdout, stderr io.Writer) *flagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // errors are reported by parse
	return &flagSet{FlagSet: fs, usageLine: usageLine, examples: examples, stdout: stdout, stderr: stderr}
}

func (f *flagSet) printUsage(w io.Writer) {
	fmt.Fprintf(w, "Usage:\n  %s\n\nFlags (-name and --name both work):\n", f.usageLine)
	f.SetOutput(w)
	f.PrintDefaults()
	f.SetOutput(io.Discard)
	if f.examples != "" {
		fmt.Fprintf(w, "\nExamples:\n%s", f.examples)
	}
}

// parse parses args. An error says the command must stop: flag.ErrHelp
// when help was asked (the usage is printed on stdout), a usage error for
// bad flags (f.exit maps both).
func (f *flagSet) parse(args []string) error {
	if err := f.parseFlags(args); err != nil {
		return err
	}
	if f.NArg() > 0 {
		return usagef("unexpected argument %q", f.Arg(0))
	}
	return f.badChoice()
}

// parseFlags parses the flags of args: flag.ErrHelp when help was asked
// (the usage is printed on stdout), a usage error for a bad flag.
func (f *flagSet) parseFlags(args []string) error {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printUsage(f.stdout)
			return err
		}
		return usagef("%v", err)
	}
	return nil
}

// required checks that each named string flag was given.
func (f *flagSet) required(names ...string) error {
	var missing []string
	for _, n := range names {
		if fl := f.Lookup(n); fl != nil && fl.Value.String() == "" {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}

// parseWithArgs is parse for commands that take up to max positional
// arguments, which may come before, between or after the flags. It
// returns the positional arguments.
func (f *flagSet) parseWithArgs(args []string, max int) ([]string, error) {
	var pos []string
	for {
		if err := f.parseFlags(args); err != nil {
			return nil, err
		}
		if f.NArg() == 0 {
			break
		}
		pos = append(pos, f.Arg(0))
		args = f.Args()[1:]
	}
	if len(pos) > max {
		return nil, usagef("unexpected argument %q", pos[max])
	}
	if err := f.badChoice(); err != nil {
		return nil, err
	}
	return pos, nil
}

// parseDirs is parseWithArgs for report and browse, which take one run
// directory or several.
func (f *flagSet) parseDirs(args []string) ([]string, error) {
	pos, err := f.parseWithArgs(args, 1<<20)
	if err == nil && len(pos) == 0 {
		err = usagef("give the run directory (or several)")
	}
	return pos, err
}

// casesArg defines --cases, then parses a command's flags and its
// optional positional case set (a directory or a case file), which may
// also be given as --cases.
func casesArg(fs *flagSet, args []string) (string, error) {
	flagValue := fs.String("cases", "", "the case set `dir` or file, as the positional argument (default: the embedded suite)")
	pos, err := fs.parseWithArgs(args, 1)
	if err != nil {
		return "", err
	}
	if len(pos) == 1 {
		if *flagValue != "" && *flagValue != pos[0] {
			return "", usagef("two case sets: %q and --cases %q", pos[0], *flagValue)
		}
		return pos[0], nil
	}
	return *flagValue, nil
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}
