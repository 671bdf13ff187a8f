package regularfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestOpenAppendRefusesSymlink: a symlink where a run directory's file is
// appended to is refused, and its target is left as it was (a run
// directory from elsewhere made repair append to any file).
func TestOpenAppendRefusesSymlink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "target")
	if err := os.WriteFile(target, []byte("as it was\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, to := range []string{target, filepath.Join(dir, "missing")} {
		link := filepath.Join(dir, "link-to-"+filepath.Base(to))
		if err := os.Symlink(to, link); err != nil {
			t.Fatal(err)
		}
		f, err := OpenAppend(link)
		if err == nil {
			f.Write([]byte("appended\n"))
			f.Close()
			t.Fatalf("OpenAppend(%s -> %s) opened it", link, to)
		}
		var nr *NotRegularError
		if !errors.As(err, &nr) || nr.Mode&os.ModeSymlink == 0 || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("OpenAppend(%s): %v; want a NotRegularError for a symlink", link, err)
		}
	}
	if b, _ := os.ReadFile(target); string(b) != "as it was\n" {
		t.Errorf("the target holds %q", b)
	}
	if _, err := os.Stat(filepath.Join(dir, "missing")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a missing target was created: %v", err)
	}
}

// TestOpenAppend: a regular file (new or existing) is appended to; a FIFO
// is refused without blocking.
func TestOpenAppend(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "runs.jsonl")
	for _, line := range []string{"a\n", "b\n"} {
		f, err := OpenAppend(p)
		if err != nil {
			t.Fatal(err)
		}
		f.WriteString(line)
		f.Close()
	}
	if b, _ := os.ReadFile(p); string(b) != "a\nb\n" {
		t.Errorf("got %q", b)
	}
	fifo := filepath.Join(dir, "fifo")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	if _, err := OpenAppend(fifo); err == nil {
		t.Error("a FIFO was opened")
	}
}
