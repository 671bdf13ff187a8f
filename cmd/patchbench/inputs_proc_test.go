package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchbench/patchbench/internal/regularfile"
)

// TestReadInputRefusesProcFiles checks that --state, --patch, --plan and
// --prompt-template refuse a file of /proc, which calls itself regular:
// /proc/kmsg blocked view, verify, plan and run until a signal, and some
// of them past it (/proc/self/status stands in, it does not block). A
// regular file is read.
func TestReadInputRefusesProcFiles(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	var nre *regularfile.NotRegularError
	if _, err := readInput("/proc/self/status", 1<<20); !errors.As(err, &nre) || nre.FS == "" {
		t.Errorf("error %v, want a *NotRegularError naming /proc", err)
	}
	p := filepath.Join(t.TempDir(), "s.json")
	os.WriteFile(p, []byte(`{}`), 0o644)
	if b, err := readInput(p, 1<<20); err != nil || string(b) != `{}` {
		t.Errorf("a regular file: %q, %v", b, err)
	}
}
