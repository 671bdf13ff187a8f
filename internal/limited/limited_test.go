package limited

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/patchbench/patchbench/internal/regularfile"
)

func TestReadFile(t *testing.T) {
	fsys := fstest.MapFS{"a": {Data: []byte("12345")}}
	for _, tc := range []struct {
		max  int64
		want string
		err  bool
	}{{5, "12345", false}, {6, "12345", false}, {4, "", true}} {
		b, err := ReadFile(fsys, "a", tc.max)
		var tl *TooLargeError
		if tc.err {
			if !errors.As(err, &tl) || tl.Max != tc.max {
				t.Errorf("max %d: got %v, want a TooLargeError of %d", tc.max, err, tc.max)
			}
			continue
		}
		if err != nil || string(b) != tc.want {
			t.Errorf("max %d: got %q, %v; want %q", tc.max, b, err, tc.want)
		}
	}
	if _, err := ReadFile(fsys, "absent", 10); err == nil {
		t.Error("an absent file read without error")
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{8 << 20: "8 MiB", 64 << 10: "64 KiB", 1000: "1000 bytes", 1<<20 + 1024: "1025 KiB"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	if got := (&TooLargeError{Max: 1 << 20}).Error(); !strings.Contains(got, "1 MiB") {
		t.Errorf("error %q does not name the limit", got)
	}
}

// TestReadFileRefusesProcFiles checks that a case file that is a symlink
// to a file of /proc (regular, and /proc/kmsg's read blocks) is refused:
// validate hung on a link to /proc/kmsg (/proc/self/status stands in,
// it does not block).
func TestReadFileRefusesProcFiles(t *testing.T) {
	dir := t.TempDir()
	if err := os.Symlink("/proc/self/status", filepath.Join(dir, "zz.yaml")); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc")
	}
	var nre *regularfile.NotRegularError
	if _, err := ReadFile(os.DirFS(dir), "zz.yaml", 1<<20); !errors.As(err, &nre) || nre.FS == "" {
		t.Errorf("error %v, want a *NotRegularError naming /proc", err)
	}
}
