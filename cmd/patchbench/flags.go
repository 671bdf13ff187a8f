package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
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

// badChoice reports the first choice flag that holds a value it does not
// allow, as a usage error.
func (f *flagSet) badChoice() (int, bool) {
	for _, c := range f.choices {
		if v := *c.value; !slices.Contains(c.allowed, v) && !(v == "" && f.Lookup(c.name).DefValue == "") {
			return f.usageError("--%s must be %s, not %q", c.name, orList(c.allowed), v), true
		}
	}
	return 0, false
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

// parse parses args; it returns an exit code and false when the command
// must stop (help asked: usage on stdout, 0; bad flags: 2).
func (f *flagSet) parse(args []string) (int, bool) {
	if err := f.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			f.printUsage(f.stdout)
			return exitOK, false
		}
		return f.usageError("%v", err), false
	}
	if f.NArg() > 0 {
		return f.usageError("unexpected argument %q", f.Arg(0)), false
	}
	if code, bad := f.badChoice(); bad {
		return code, false
	}
	return 0, true
}

// usageError reports bad usage with a pointer to -h and returns exitUsage.
func (f *flagSet) usageError(format string, a ...any) int {
	fmt.Fprintf(f.stderr, "patchbench %s: %s\nRun \"patchbench %s -h\" for usage.\n", f.Name(), fmt.Sprintf(format, a...), f.Name())
	return exitUsage
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

// failf prints "patchbench NAME: message" to stderr and returns exitUsage.
func failf(stderr io.Writer, name, format string, a ...any) int {
	fmt.Fprintf(stderr, "patchbench %s: %s\n", name, fmt.Sprintf(format, a...))
	return exitUsage
}

// stdin is where "-" reads from; tests replace it.
var stdin io.Reader = os.Stdin

// readInput reads a file, or standard input when path is "-", but never
// more than limit+1 bytes: a caller that gets more than limit bytes knows
// the input is too large without having read all of it.
func readInput(path string, limit int64) ([]byte, error) {
	var r io.Reader = stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return b, nil
}

// loadState reads and strictly decodes a JSON state file of at most
// limit bytes; errors name the file, line and column.
func loadState(path string, limit int64) (*runtime.Document, error) {
	b, err := readInput(path, limit)
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than the contract's max_document_bytes (%d bytes)", path, limit)
	}
	d, err := runtime.ParseDocument(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return d, nil
}

// loadContract reads a YAML or JSON step contract.
func loadContract(path string) (*runtime.Contract, error) {
	return bench.LoadContractFile(path)
}

// parseWithArgs is parse for commands that take up to max positional
// arguments, which may come before, between or after the flags. It
// returns the positional arguments.
func (f *flagSet) parseWithArgs(args []string, max int) ([]string, int, bool) {
	var pos []string
	for {
		if err := f.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				f.printUsage(f.stdout)
				return nil, exitOK, false
			}
			return nil, f.usageError("%v", err), false
		}
		if f.NArg() == 0 {
			break
		}
		pos = append(pos, f.Arg(0))
		args = f.Args()[1:]
	}
	if len(pos) > max {
		return nil, f.usageError("unexpected argument %q", pos[max]), false
	}
	if code, bad := f.badChoice(); bad {
		return nil, code, false
	}
	return pos, 0, true
}

// loadCases loads the case set in dir, or the embedded suite when dir is
// empty. Problems are cases that failed to load; the others are returned.
func loadCases(dir string) ([]*bench.Case, bench.Problems, error) {
	if dir == "" {
		return bench.LoadEmbeddedCases()
	}
	return bench.LoadCaseDir(dir)
}

// loadConfigs loads the configurations in dir, or the embedded ones when
// dir is empty.
func loadConfigs(dir string) ([]*bench.Config, error) {
	if dir == "" {
		return bench.LoadConfigs(bench.EmbeddedConfigs(), func(p string) string { return path.Join("bench/configs", p) })
	}
	return bench.LoadConfigDir(dir)
}

// casesArg parses a command's flags and its optional positional case set
// (a directory or a case file), which may also be given as --cases.
func casesArg(fs *flagSet, args []string, flagValue *string) (string, int, bool) {
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return "", code, false
	}
	if len(pos) == 1 {
		if *flagValue != "" && *flagValue != pos[0] {
			return "", fs.usageError("two case sets: %q and --cases %q", pos[0], *flagValue), false
		}
		return pos[0], 0, true
	}
	return *flagValue, 0, true
}

// repeated is a repeatable flag whose values keep their commas.
type repeated []string

func (s *repeated) String() string     { return strings.Join(*s, " ") }
func (s *repeated) Set(v string) error { *s = append(*s, v); return nil }

// optionalFloat is a number flag that may be left unset (no default is
// printed, and none is sent).
type optionalFloat struct {
	v   float64
	set bool
}

func (f *optionalFloat) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	f.v, f.set = v, true
	return nil
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

func displayDir(dir string) string {
	if dir == "" {
		return "the embedded suite"
	}
	return dir
}
