package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"

	"github.com/gofrs/flock"
	"github.com/patchbench/patchbench/internal/regularfile"
)

// File names inside a run directory.
const (
	RunsFile     = "runs.jsonl"
	ManifestFile = "manifest.json"
	SummaryFile  = "summary.json"
	// ManifestBackupFile is a second copy of manifest.json, written
	// with it (WriteManifest), from which Repair restores a damaged one.
	ManifestBackupFile = ".manifest.backup.json"
	// DroppedFile receives the lines of runs.jsonl that Repair sets
	// aside, as they were.
	DroppedFile = "runs.jsonl.dropped"
	// LockFile is locked (github.com/gofrs/flock) while a process writes
	// the directory's runs; the file itself stays, unlocked, afterwards.
	LockFile = ".lock"
)

// ErrLocked is OpenSink's error when another process holds the directory.
// Its code is CodeLocked.
var ErrLocked error = &Error{Code: CodeLocked, msg: "another patchbench process is writing to this run directory"}

// Sink appends records to a run directory's runs.jsonl, one JSON line
// each, written with a single call, while holding the directory's lock.
// It is safe for concurrent use.
type Sink struct {
	mu   sync.Mutex
	path string // of runs.jsonl
	f    *os.File
	size int64 // of runs.jsonl: where the next record starts
	lock *flock.Flock
}

// OpenSink makes dir if needed, takes its lock (an advisory lock on
// LockFile, released when the sink is closed or the process ends, so a
// crashed run leaves no stale lock; ErrLocked when another process holds
// it), removes the temporary files a killed process left, and opens
// runs.jsonl for appending.
func OpenSink(dir string) (*Sink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	removeTemporaries(dir)
	path := filepath.Join(dir, RunsFile)
	f, err := regularfile.OpenAppend(path)
	if err != nil {
		lock.Unlock()
		return nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		lock.Unlock()
		return nil, err
	}
	return &Sink{path: path, f: f, size: fi.Size(), lock: lock}, nil
}

// lockDir takes dir's lock (ErrLocked when another process holds it).
func lockDir(dir string) (*flock.Flock, error) {
	// The lock file is opened for reading: a FIFO there would block. It
	// is made if missing, so a symbolic link there (dangling or not) is
	// refused, and not followed (O_NOFOLLOW): a run directory from
	// elsewhere could point it at any path of the user's.
	path := filepath.Join(dir, LockFile)
	if fi, err := os.Lstat(path); err == nil && fi.Mode()&os.ModeSymlink != 0 {
		return nil, &regularfile.NotRegularError{Path: path, Mode: fi.Mode()}
	}
	if err := regularfile.Check(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	lock := flock.New(path, flock.SetFlag(os.O_CREATE|os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK))
	ok, err := lock.TryLock()
	if err == nil && !ok {
		err = ErrLocked
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	return lock, nil
}

// Write appends one record as a JSON line, written with a single call; a
// record longer than MaxWriteBytes is cut first (Record.shrink, which
// changes r), so that every reader can read it back. A
// write that fails (a full disk) leaves no part of its line behind, and
// its error names the run, the file and the cause.
func (s *Sink) Write(r *Record) error {
	b, err := r.line()
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	n, err := s.f.Write(append(b, '\n'))
	if err != nil {
		if n > 0 {
			s.f.Truncate(s.size) // a half line; a resume would cut it too
		}
		return &WriteError{Path: s.path, RunID: r.RunID, Err: cause(err)}
	}
	s.size += int64(n)
	return nil
}

// repair makes the file ready for appending: it cuts a last line left
// unfinished by a crash (at truncateAt, when ≥ 0) and ends a whole last
// record that lacks its newline.
func (s *Sink) repair(truncateAt int64, needsNewline bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if truncateAt >= 0 {
		if err := s.f.Truncate(truncateAt); err != nil {
			return err
		}
		s.size = truncateAt
	}
	if needsNewline {
		n, err := s.f.Write([]byte("\n"))
		s.size += int64(n)
		return err
	}
	return nil
}

// Close closes the file and releases the lock.
func (s *Sink) Close() error {
	err := s.f.Close()
	if uerr := s.lock.Unlock(); err == nil {
		err = uerr
	}
	return err
}

// line is r's JSON line (without its newline) as every writer of a run
// directory writes it: cut first (Record.shrink, which changes r) when
// longer than MaxWriteBytes or past the readers' shape bounds, so that
// every reader can read it back.
func (r *Record) line() ([]byte, error) {
	if estimateLines && r.minBytes() > MaxWriteBytes {
		return r.shrink(nil) // too long whatever it holds: cut before writing it
	}
	b, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", r.RunID, err)
	}
	if !writable(b) {
		return r.shrink(b)
	}
	return b, nil
}
