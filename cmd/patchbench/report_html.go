package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchbench/patchbench/browse"
)

// reportHTML writes the browser's overview and every run page as one
// self-contained HTML file on standard output (browse.Browser.WriteBundle),
// with the hidden values in it when reveal is set, over the cases every
// directory holds when common is set.
func reportHTML(dirs []string, casesDir, baseline string, reveal, common bool, stdout, stderr io.Writer) error {
	b, err := browse.Open(dirs, browse.Options{CasesDir: casesDir, Baseline: baseline, Common: common, Warn: func(msg string) {
		fmt.Fprintf(stderr, "patchbench report: %s\n", msg)
	}})
	if err != nil && !common {
		return commonHint(err)
	}
	if err != nil {
		return err
	}
	sayLeftOut(stderr, "report", b.LeftOut())
	if n := b.Runs(); n > largeHTML {
		fmt.Fprintf(stderr, "patchbench report: the file holds the data of %d runs; \"patchbench browse %s\" serves them from disk instead\n", n, strings.Join(dirs, " "))
	}
	if reveal {
		fmt.Fprintln(stderr, "patchbench report: --reveal: the file holds the hidden values and the secrets of every case; share it as you would the run directory")
	}
	if err := b.WriteBundle(stdout, browse.BundleOptions{Reveal: reveal}); err != nil {
		return err
	}
	return nil
}

// largeHTML is the number of runs past which report --format html says
// that browse suits the directory better.
const largeHTML = 20000
