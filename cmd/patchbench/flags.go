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

// loadCases loads the case set in dir, or the embedded suite when dir is
// empty. Problems are cases that failed to load; the others are returned.
func loadCases(dir string) ([]*bench.Case, bench.Problems, error) {
	if dir == "" {
		return bench.LoadEmbeddedCases()
	}
	return bench.LoadCaseDir(dir)
}

// loadAllCases is loadCases for a command that needs every case of the
// set: a case that does not load is an error (notLoaded).
func loadAllCases(dir string) ([]*bench.Case, error) {
	cases, problems, err := loadCases(dir)
	if err == nil && len(problems) > 0 {
		err = notLoaded(problems)
	}
	return cases, err
}

// notLoaded is the error of a case set some of whose cases do not load.
func notLoaded(problems bench.Problems) error {
	return fmt.Errorf("the case set does not load:\n%v\nRun \"patchbench validate\" for every problem.", problems)
}

// loadConfigs loads the configurations in dir, or the embedded ones when
// dir is empty.
func loadConfigs(dir string) ([]*bench.Config, error) {
	if dir == "" {
		return bench.LoadConfigs(bench.EmbeddedConfigs(), func(p string) string { return path.Join("bench/configs", p) })
	}
	return bench.LoadConfigDir(dir)
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
