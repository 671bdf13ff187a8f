// Package testenv lets a test that needs something outside the module (a
// browser, TeX, the conformance suites) say so when it is missing: one line
// that `go test ./...` shows without -v, then a skip, or a failure where
// the environment says the thing must be there (as .ci/run does).
//
// go test in package-list mode prints nothing of a passing package but its
// "ok" line, so a t.Skip is invisible there. On Linux the line is written
// to the go command's own standard error as well (the test binary's parent
// process) when that is a terminal or a pipe (`go test ./... 2>&1 | tee
// log`); elsewhere, and where it is a regular file (`go test ./... >log
// 2>&1`, whose offset another descriptor cannot share, so that the go
// command would write over the line), it goes to the test log only (-v
// shows it). A cached result does not print the line again.
package testenv

import (
	"fmt"
	"os"
	"testing"
)

// Missing reports that what a test needs is absent. If the environment
// variable require is set (non-empty), the test fails with the message;
// otherwise one line "--- SKIP: TestName: what is missing (how to get it)"
// is shown and the test is skipped. It does not return.
func Missing(t testing.TB, require, what, how string) {
	t.Helper()
	msg := what
	if how != "" {
		msg += " (" + how + ")"
	}
	if require != "" && os.Getenv(require) != "" {
		t.Fatalf("%s, and %s is set: it must be there", msg, require)
	}
	Announce(fmt.Sprintf("--- SKIP: %s: %s", t.Name(), msg))
	t.Skip(msg)
}

// Announce writes line to the go command's standard error when it can
// (Linux: the parent process's descriptor 2), so that it is seen without
// -v. It reports whether the line was written there.
func Announce(line string) bool {
	path := fmt.Sprintf("/proc/%d/fd/2", os.Getppid())
	if fi, err := os.Stat(path); err != nil || fi.Mode().IsRegular() {
		return false
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return false
	}
	defer f.Close()
	_, err = fmt.Fprintln(f, line)
	return err == nil
}
