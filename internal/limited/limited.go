// Package limited reads files and streams with a bound on their size, so
// that a case file, a prompt or an answer file larger than it should be is
// an error rather than a read of everything it holds.
package limited

import (
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/patchbench/patchbench/internal/regularfile"
)

// TooLargeError says that what was read holds more than Max bytes.
type TooLargeError struct {
	Max int64
}

func (e *TooLargeError) Error() string { return "larger than " + Size(e.Max) }

// Size writes a byte count as people read a limit: "8 MiB", "64 KiB",
// "1000 bytes" (the largest binary unit that divides it exactly).
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// Read reads r to its end, or fails with a *TooLargeError once it has
// given more than max bytes (it reads at most max+1).
func Read(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, &TooLargeError{Max: max}
	}
	return b, nil
}

// ReadFile reads the file name of fsys (fs.ValidPath rules) with Read's
// bound; a file that is not regular (a FIFO, a device) is an error,
// before it is opened, and so is a file of /proc or /sys
// (regularfile.PseudoFS), once opened.
func ReadFile(fsys fs.FS, name string, max int64) ([]byte, error) {
	// A FIFO would block the open, a device never end: only regular
	// files are read.
	if fi, err := fs.Stat(fsys, name); err == nil && !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("%s is not a regular file (%s)", name, fi.Mode().Type())
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if of, ok := f.(*os.File); ok {
		if pfs := regularfile.PseudoFS(of); pfs != "" {
			return nil, &regularfile.NotRegularError{Path: name, FS: pfs}
		}
	}
	return Read(f, max)
}
