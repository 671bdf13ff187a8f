//go:build unix

package runner

import (
	"errors"
	"os"
	"syscall"
)

// errLocked is returned when another process holds a run directory.
var errLocked = errors.New("another patchbench process is writing to this run directory")

// lock takes an exclusive advisory lock on f, released when f is closed
// or the process ends (a crashed run leaves no stale lock).
func lock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return errLocked
	}
	return err
}
