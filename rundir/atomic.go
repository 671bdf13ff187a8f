package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	goruntime "runtime"
)

// WriteFileAtomic writes data to path with the permission bits perm so
// that a crash leaves either the old file or the new one, never half of
// one: through a temporary file in the same directory (named
// ".<name>.<random>"), synced to disk, renamed into place, and the
// directory synced after the rename (where the system can sync a
// directory). Nothing is left behind on failure, and the error, a
// *WriteError, names path and the cause ("writing DIR/manifest.json: no
// space left on device"), not the temporary file.
func WriteFileAtomic(path string, data []byte, perm os.FileMode) error {
	if err := writeFileAtomic(path, data, perm); err != nil {
		return &WriteError{Path: path, Err: cause(err)}
	}
	return nil
}

// cause is the system's error inside a file operation's error (the
// *os.PathError of a temporary file, say), or err itself.
func cause(err error) error {
	var pe *os.PathError
	var le *os.LinkError
	switch {
	case errors.As(err, &pe):
		return pe.Err
	case errors.As(err, &le):
		return le.Err
	}
	return err
}

func writeFileAtomic(path string, data []byte, perm os.FileMode) error {
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
// atomically (WriteFileAtomic): how summary.json is written.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, name), append(b, '\n'), 0o644)
}

// WriteManifest writes m to dir's manifest.json and to its backup
// (ManifestBackupFile), each atomically (WriteFileAtomic), the backup
// first: a manifest.json damaged after it was written (a copy cut short,
// an editor) is restored from the backup by Repair.
func WriteManifest(dir string, m Manifest) error {
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if err := WriteFileAtomic(filepath.Join(dir, ManifestBackupFile), b, 0o644); err != nil {
		return err
	}
	return WriteFileAtomic(filepath.Join(dir, ManifestFile), b, 0o644)
}

// removeTemporaries removes the temporary files an atomic write of the
// manifest, its backup or the summary, a merge or a repair left when its
// process was killed in the middle (WriteFileAtomic removes its own on
// any error), and returns their names. A repair decided before the kill
// (its journal written) is finished first (rollForward), and nothing is
// removed when that fails. The caller holds the directory's lock.
func removeTemporaries(dir string) []string {
	if rollForward(dir) != nil {
		return nil
	}
	var removed []string
	for _, name := range []string{ManifestFile, ManifestBackupFile, SummaryFile, RunsFile, repairJournal} {
		matches, _ := filepath.Glob(filepath.Join(dir, "."+name+".*"))
		for _, m := range matches {
			if os.Remove(m) == nil {
				removed = append(removed, filepath.Base(m))
			}
		}
	}
	return removed
}
