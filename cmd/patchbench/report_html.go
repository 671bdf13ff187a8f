package main

import (
	"fmt"
	"io"

	"github.com/patchbench/patchbench/browse"
)

// reportHTML writes the browser's overview and every run page as one
// self-contained HTML file on standard output.
func reportHTML(dirs []string, casesDir, baseline string, stdout, stderr io.Writer) int {
	b, err := browse.Open(dirs, browse.Options{CasesDir: casesDir, Baseline: baseline, Warn: func(msg string) {
		fmt.Fprintf(stderr, "patchbench report: %s\n", msg)
	}})
	if err != nil {
		return failf(stderr, "report", "%v", err)
	}
	if err := b.WriteHTML(stdout); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	return exitOK
}
