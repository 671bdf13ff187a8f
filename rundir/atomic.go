package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	goruntime "runtime"
)

// WriteFileAtomic writes data to path with the permission bits perm so
// that a crash leaves either the old file or the new one, never half of
// one: through a temporary file in the same directory, synced to disk,
// renamed into place, and the directory synced after the rename (where
// the system can sync a directory). Nothing is left behind on failure.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	dir := filepath.Dir(path)
	tmp, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	werr := func() error {
		if err := tmp.Chmod(perm); err != nil {
			return err
		}
		if _, err := tmp.Write(data); err != nil {
			return err
		}
		return tmp.Sync()
	}()
	if cerr := tmp.Close(); werr == nil {
		werr = cerr
	}
	if werr == nil {
		werr = os.Rename(tmp.Name(), path)
	}
	if werr != nil {
		os.Remove(tmp.Name())
		return werr
	}
	return syncDir(dir)
}

// syncDir syncs a directory, so that a rename in it is on disk. Windows
// cannot open a directory for syncing; its renames are not synced here.
func syncDir(dir string) error {
	if goruntime.GOOS == "windows" {
		return nil
	}
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// WriteJSON writes v as indented JSON with a final newline to dir/name,
// atomically (WriteFileAtomic): how manifest.json and summary.json are
// written.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, name), append(b, '\n'), 0o644)
}
