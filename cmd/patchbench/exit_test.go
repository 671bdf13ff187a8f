package main

import (
	"errors"
	"strings"
	"testing"
)

// TestExitCodeEscapesTheMessage: a message that names a directory made
// with a terminal escape reaches stderr escaped (report used to print
// such a name raw).
func TestExitCodeEscapesTheMessage(t *testing.T) {
	for _, err := range []error{
		errors.New("/tmp/we ird\x1b[31mdir is not a run directory"),
		usagef("/tmp/we ird\x1b[31mdir is given twice"),
	} {
		var stderr strings.Builder
		if code := exitCode(&stderr, "report", err); code != exitUsage {
			t.Errorf("exit %d", code)
		}
		if got := stderr.String(); strings.ContainsRune(got, 0x1b) || !strings.Contains(got, `ird\u001b[31mdir`) {
			t.Errorf("stderr %q", got)
		}
	}
}
