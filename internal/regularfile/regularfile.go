// Package regularfile opens and reads files only when they are regular
// files (after symlinks), so that a FIFO put where a file is expected
// never blocks a reader or writer, and a device (a symlink to /dev/zero)
// is never read without end. PatchBench's run directories, cache entries
// and file actor answers are read through it: any of them may be a file
// someone else put there.
package regularfile

import (
	"fmt"
	"io"
	"os"
	"syscall"
)

// NotRegularError is a file that is not a regular file (a FIFO, a device,
// a socket, a directory; for reading, a symlink counts as what it points
// to): reading it could block forever or never end, so it is refused.
// For appending (OpenAppend) a symlink itself is refused too: a run
// directory from elsewhere could point one at any file of the user's.
//
// A file of a kernel's pseudo file system (procfs, sysfs, debugfs,
// tracefs, securityfs: Linux) is refused too, FS naming it: such files
// call themselves regular and empty, and a read of one (/proc/kmsg) can
// block until the kernel has something to say.
type NotRegularError struct {
	Path string
	Mode os.FileMode
	FS   string // the pseudo file system, or ""
}

func (e *NotRegularError) Error() string {
	if e.FS != "" {
		return fmt.Sprintf("%s is not a regular file (a file of %s, which the kernel makes as it is read)", e.Path, e.FS)
	}
	return fmt.Sprintf("%s is not a regular file (%s)", e.Path, kindOf(e.Mode))
}

// kindOf names the type of a file mode.
func kindOf(m os.FileMode) string {
	switch {
	case m&os.ModeNamedPipe != 0:
		return "a FIFO"
	case m&os.ModeCharDevice != 0:
		return "a character device"
	case m&os.ModeDevice != 0:
		return "a device"
	case m&os.ModeSocket != 0:
		return "a socket"
	case m.IsDir():
		return "a directory"
	case m&os.ModeSymlink != 0:
		return "a symbolic link, which PatchBench does not write through"
	}
	return "mode " + m.String()
}

// Open opens path for reading only when it is a regular file: it is
// checked first, then opened without blocking (O_NONBLOCK, in case it was
// swapped for a FIFO since) and checked again; another kind is a
// *NotRegularError. A missing file is an error wrapping os.ErrNotExist.
func Open(path string) (*os.File, error) {
	if err := Check(path); err != nil {
		return nil, err
	}
	return checked(os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0))
}

// OpenAppend opens path for appending, creating it (mode 0644) if needed,
// only when it is a regular file and not a symbolic link (O_NOFOLLOW): a
// FIFO is opened without blocking (an error when no one reads it) and
// refused, as is a symlink or any other kind, with a *NotRegularError.
func OpenAppend(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND|syscall.O_NONBLOCK|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		if fi, lerr := os.Lstat(path); lerr == nil && fi.Mode()&os.ModeSymlink != 0 {
			return nil, &NotRegularError{Path: path, Mode: fi.Mode()}
		}
		if cerr := Check(path); cerr != nil {
			return nil, cerr
		}
		return nil, err
	}
	return checked(f, nil)
}

// checked closes and refuses an opened file that is not regular.
func checked(f *os.File, err error) (*os.File, error) {
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = &NotRegularError{Path: f.Name(), Mode: fi.Mode()}
	}
	if err == nil {
		if fs := pseudoFS(f); fs != "" {
			err = &NotRegularError{Path: f.Name(), Mode: fi.Mode(), FS: fs}
		}
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Read reads the regular file at path (Open), of at most limit bytes: a
// longer one is a *TooLargeError naming the limit, read no further.
func Read(path string, limit int64) ([]byte, error) {
	f, err := Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{Path: path, Limit: limit}
	}
	return b, nil
}

// TooLargeError is a file longer than the limit Read was given; no more
// than the limit and one byte of it was read.
type TooLargeError struct {
	Path  string
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s is larger than %d bytes", e.Path, e.Limit)
}

// Check refuses a path that exists and is not a regular file
// (*NotRegularError); a missing one is an error wrapping os.ErrNotExist.
func Check(path string) error {
	fi, err := os.Stat(path)
	switch {
	case err != nil:
		return err
	case !fi.Mode().IsRegular():
		return &NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if fs := pseudoFSAt(path); fs != "" {
		return &NotRegularError{Path: path, Mode: fi.Mode(), FS: fs}
	}
	return nil
}

// PseudoFS names the kernel pseudo file system (procfs, sysfs, debugfs,
// tracefs, securityfs, cgroupfs: Linux) the open file f is on, or "": a
// reader that takes pipes and FIFOs (standard input, a process
// substitution) still refuses those, whose reads may block until the
// kernel has something to say (/proc/kmsg).
func PseudoFS(f *os.File) string { return pseudoFS(f) }
