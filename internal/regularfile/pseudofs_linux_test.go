//go:build linux

package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestPseudoFilesAreRefused checks that a file of /proc or /sys, which
// calls itself regular, is refused by Open, Read and Check, directly and
// through a symlink in a run directory: /proc/kmsg there hung every reader
// until a signal (/proc/self/status stands in for it, it does not
// block).
func TestPseudoFilesAreRefused(t *testing.T) {
	dir := t.TempDir()
	link := filepath.Join(dir, "runs.jsonl")
	if err := os.Symlink("/proc/self/status", link); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{"/proc/self/status", link, "/sys/kernel/mm/transparent_hugepage/enabled"} {
		if _, err := os.Stat(path); err != nil {
			continue
		}
		var nre *NotRegularError
		f, err := Open(path)
		if f != nil {
			f.Close()
		}
		if !errors.As(err, &nre) || nre.FS == "" {
			t.Errorf("Open(%s): %v, want a *NotRegularError naming the file system", path, err)
		}
		if _, err := Read(path, 1<<20); !errors.As(err, &nre) {
			t.Errorf("Read(%s): %v", path, err)
		}
		if err := Check(path); !errors.As(err, &nre) {
			t.Errorf("Check(%s): %v", path, err)
		}
	}
	// A regular file on a real file system still opens.
	plain := filepath.Join(dir, "plain")
	os.WriteFile(plain, []byte("x"), 0o644)
	if b, err := Read(plain, 10); err != nil || string(b) != "x" {
		t.Errorf("Read(plain) = %q, %v", b, err)
	}
}
