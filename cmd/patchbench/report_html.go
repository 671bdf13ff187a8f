package main

import (
	"fmt"
	"io"
)

// reportHTML is a placeholder until the browse package lands on this
// branch (it is built on branch issue13b); it says so and fails.
func reportHTML(dirs []string, casesDir, baseline string, stdout, stderr io.Writer) int {
	fmt.Fprintln(stderr, "patchbench report: --format html is not built on this branch yet")
	return exitUsage
}
