package main

import (
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestCheckoutRevisionRefusesSpecialFiles checks that the checkout read
// of `version` and `run` takes no revision, at once, from a git directory
// whose packed-refs is /dev/zero (every run went out of memory) or whose
// HEAD is a FIFO (it hung until a signal).
func TestCheckoutRevisionRefusesSpecialFiles(t *testing.T) {
	const module = "example.com/m"
	for name, setup := range map[string]func(git string) error{
		"packed-refs is /dev/zero": func(git string) error {
			if err := os.WriteFile(filepath.Join(git, "HEAD"), []byte("ref: refs/heads/main\n"), 0o644); err != nil {
				return err
			}
			return os.Symlink("/dev/zero", filepath.Join(git, "packed-refs"))
		},
		"HEAD is a FIFO": func(git string) error { return syscall.Mkfifo(filepath.Join(git, "HEAD"), 0o644) },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			os.WriteFile(filepath.Join(dir, "go.mod"), []byte("module "+module+"\n"), 0o644)
			git := filepath.Join(dir, ".git")
			os.Mkdir(git, 0o755)
			if err := setup(git); err != nil {
				t.Skip(err)
			}
			done := make(chan string, 1)
			go func() { rev, _ := checkoutRevision(dir, module); done <- rev }()
			select {
			case rev := <-done:
				if rev != "" {
					t.Errorf("revision %q", rev)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("checkoutRevision did not return")
			}
		})
	}
}
