package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/patchbench/patchbench/browse"
)

// reportHTML writes the browser's overview and every run page as one
// self-contained HTML file on standard output (browse.B.WriteHTML).
func reportHTML(dirs []string, casesDir, baseline string, stdout, stderr io.Writer) int {
	b, err := browse.Open(dirs, browse.Options{CasesDir: casesDir, Baseline: baseline, Warn: func(msg string) {
		fmt.Fprintf(stderr, "patchbench report: %s\n", msg)
	}})
	if err != nil {
		return failf(stderr, "report", "%v", err)
	}
	if n := b.Runs(); n > largeHTML {
		fmt.Fprintf(stderr, "patchbench report: the file holds the pages of %d runs, tens of kilobytes each; \"patchbench browse %s\" serves them from disk instead\n", n, strings.Join(dirs, " "))
	}
	if err := b.WriteHTML(stdout); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	return exitOK
}

// largeHTML is the number of runs past which report --format html says
// that browse suits the directory better.
const largeHTML = 2000
