package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// newFlags makes a FlagSet for a subcommand whose -h output is the usage
// line, the flags and the examples.
func newFlags(name, usageLine, examples string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage:\n  %s\n\nFlags:\n", usageLine)
		fs.PrintDefaults()
		if examples != "" {
			fmt.Fprintf(fs.Output(), "\nExamples:\n%s", examples)
		}
	}
	return fs
}

// parseFlags parses args; it returns an exit code and false when the
// command must stop (help asked: 0; bad flags: 2).
func parseFlags(fs *flag.FlagSet, args []string) (int, bool) {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return exitOK, false
		}
		return exitUsage, false
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(fs.Output(), "%s: unexpected argument %q\n", fs.Name(), fs.Arg(0))
		fs.Usage()
		return exitUsage, false
	}
	return 0, true
}

// failf prints "patchbench NAME: message" to stderr and returns exitUsage.
func failf(stderr io.Writer, name, format string, a ...any) int {
	fmt.Fprintf(stderr, "patchbench %s: %s\n", name, fmt.Sprintf(format, a...))
	return exitUsage
}

// stdin is where "-" reads from; tests replace it.
var stdin io.Reader = os.Stdin

// readInput reads a file, or standard input when path is "-".
func readInput(path string, stdin io.Reader) ([]byte, error) {
	if path == "-" {
		return io.ReadAll(stdin)
	}
	return os.ReadFile(path)
}

// loadState reads and strictly decodes a JSON state file; errors name the
// file, line and column.
func loadState(path string) (*runtime.Document, error) {
	b, err := readInput(path, stdin)
	if err != nil {
		return nil, err
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

// required checks that each named string flag was given.
func required(fs *flag.FlagSet, names ...string) error {
	var missing []string
	for _, n := range names {
		if f := fs.Lookup(n); f != nil && f.Value.String() == "" {
			missing = append(missing, "--"+n)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("missing %s", strings.Join(missing, ", "))
	}
	return nil
}
