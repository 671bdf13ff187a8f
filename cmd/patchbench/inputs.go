package main

import (
	"fmt"
	"io"
	"os"
	"path"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/regularfile"
	"github.com/patchbench/patchbench/runtime"
)

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
		if fs := regularfile.PseudoFS(f); fs != "" {
			return nil, &regularfile.NotRegularError{Path: path, FS: fs}
		}
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

// loadEmbeddedCases loads the embedded suite (bench.LoadEmbeddedCases).
// The tests, which run many commands in one process, load it once: the
// commands only read the cases.
var loadEmbeddedCases = bench.LoadEmbeddedCases

// loadCases loads the case set in dir, or the embedded suite when dir is
// empty. Problems are cases that failed to load; the others are returned.
func loadCases(dir string) ([]*bench.Case, bench.Problems, error) {
	if dir == "" {
		return loadEmbeddedCases()
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

func displayDir(dir string) string {
	if dir == "" {
		return "the embedded suite"
	}
	return dir
}
