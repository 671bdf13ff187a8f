package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
)

// Dropped is a line of runs.jsonl that Repair set aside: its line (from
// 1), the byte offset where it starts (from 0), its length in bytes and
// why it is not a record of the run.
type Dropped struct {
	Line   int
	Offset int64
	Bytes  int
	Reason string
}

// Repaired says what Repair did to a run directory.
type Repaired struct {
	// Kept counts the records kept in runs.jsonl; Dropped lists the
	// lines set aside into DroppedFile, in the order of the file.
	Kept    int
	Dropped []Dropped
	// ManifestError is the *ManifestError of a damaged manifest.json (or
	// the error saying it was missing), nil when it was intact.
	ManifestError error
	// Manifest says what was done to it: "" when it was intact,
	// "restored" from its backup, or "rebuilt" from what could be read
	// of it and from the records.
	Manifest string
	// Rebuilt names the members of a rebuilt manifest that were taken
	// from the records (case_ids, cases, configs, actors, rounds); Lost
	// the settings (JSON member names) that could not be recovered: the
	// same run command will not resume the directory (it names them as
	// settings that differ), but every command reads it.
	Rebuilt, Lost []string
	// Removed names the temporary files a killed process had left.
	Removed []string
}

// Changed reports whether Repair changed anything.
func (r *Repaired) Changed() bool {
	return len(r.Dropped) > 0 || r.Manifest != "" || len(r.Removed) > 0
}

// Repair makes the run directory dir readable again, keeping every intact
// record, under the directory's lock (ErrLocked while a run writes it):
//
//   - a manifest.json that is missing or does not decode is restored from
//     its backup (ManifestBackupFile) when that one decodes, and otherwise
//     rebuilt from the members that can still be read (in order, up to the
//     damage) and from the records (Repaired.Rebuilt and Lost say what);
//   - every line of runs.jsonl that is a record of the run (a JSON run
//     record, checkRecord, of the manifest's cases, configurations,
//     actors and rounds) is kept as it was; every other line (not JSON, a
//     line cut short, a record of another run) is set aside, as it was,
//     at the end of DroppedFile, and named in Repaired.Dropped; the file
//     is replaced atomically, and only when something is dropped or its
//     last line lacks its newline;
//   - temporary files of atomic writes left by a killed process are
//     removed.
//
// summary.json is the caller's to write again. A directory with neither a
// manifest, its backup nor runs.jsonl is not a run directory (an error).
func Repair(dir string) (*Repaired, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a run directory", dir)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	res := &Repaired{Removed: removeTemporaries(dir)}
	m, err := repairManifest(dir, res)
	if err != nil {
		return nil, err
	}
	if err := repairRuns(dir, m, res); err != nil {
		return nil, err
	}
	return res, nil
}

// repairManifest reads the manifest, or restores or rebuilds it.
func repairManifest(dir string, res *Repaired) (*Manifest, error) {
	path, backup := filepath.Join(dir, ManifestFile), filepath.Join(dir, ManifestBackupFile)
	b, err := os.ReadFile(path)
	var m *Manifest
	if err == nil {
		m, err = parseManifest(path, b)
	}
	if err == nil {
		// Intact: the backup follows it.
		if bb, berr := os.ReadFile(backup); berr != nil || !bytes.Equal(bb, b) {
			if err := WriteFileAtomic(backup, b, 0o644); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	var me *ManifestError
	if !errors.As(err, &me) && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	res.ManifestError = err
	if bb, berr := os.ReadFile(backup); berr == nil {
		if bm, berr := parseManifest(backup, bb); berr == nil {
			res.Manifest = "restored"
			return bm, WriteFileAtomic(path, bb, 0o644)
		}
	}
	if _, serr := os.Stat(filepath.Join(dir, RunsFile)); errors.Is(err, os.ErrNotExist) && serr != nil {
		return nil, fmt.Errorf("%s is not a run directory: it holds no %s, no backup of it and no %s", dir, ManifestFile, RunsFile)
	}
	m, got := salvageManifest(b)
	if err := fillFromRecords(dir, m, got, res); err != nil {
		return nil, err
	}
	for _, name := range manifestMembers() {
		if !got[name] && !unkeyed[name] && !slices.Contains(res.Rebuilt, name) {
			res.Lost = append(res.Lost, name)
		}
	}
	m.Interrupted = true // how its last session ended is not known
	res.Manifest = "rebuilt"
	return m, WriteManifest(dir, *m)
}

// salvageManifest reads the members of a damaged manifest, in order, up
// to the first that does not decode; got names those read.
func salvageManifest(b []byte) (*Manifest, map[string]bool) {
	m, got := &Manifest{}, map[string]bool{}
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return m, got
	}
	for dec.More() {
		t, err := dec.Token()
		name, ok := t.(string)
		if err != nil || !ok {
			break
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			break
		}
		one, _ := json.Marshal(map[string]json.RawMessage{name: v})
		if json.Unmarshal(one, m) == nil {
			got[name] = true
		}
	}
	return m, got
}

// fillFromRecords sets the members of a rebuilt manifest that the records
// show (the cases, configurations, actors and rounds they ran), when they
// could not be read.
func fillFromRecords(dir string, m *Manifest, got map[string]bool, res *Repaired) error {
	var cases, configs, actors []string
	rounds := 0
	f, err := os.Open(filepath.Join(dir, RunsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	err = eachLine(f, func(line []byte, _ int, _ int64) error {
		var r Record
		if json.Unmarshal(line, &r) != nil || checkRecord(&r) != nil {
			return nil
		}
		for _, x := range []struct {
			list *[]string
			v    string
		}{{&cases, r.Case}, {&configs, r.Config}, {&actors, r.Actor}} {
			if !slices.Contains(*x.list, x.v) {
				*x.list = append(*x.list, x.v)
			}
		}
		rounds = max(rounds, r.Round)
		return nil
	})
	if err != nil {
		return err
	}
	fill := func(name string, set func()) {
		if !got[name] {
			set()
			res.Rebuilt = append(res.Rebuilt, name)
		}
	}
	fill("case_ids", func() { m.CaseIDs = cases })
	fill("cases", func() { m.Cases = len(m.CaseIDs) })
	fill("configs", func() { m.Configs = configs })
	fill("actors", func() { m.Actors = actors })
	fill("rounds", func() { m.Rounds = rounds })
	return nil
}

// manifestMembers lists the JSON member names of a Manifest, in order.
func manifestMembers() []string {
	var out []string
	t := reflect.TypeFor[Manifest]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		if name != "" && name != "-" {
			out = append(out, name)
		}
	}
	return out
}

// repairRuns keeps the records of m's run in runs.jsonl and sets every
// other line aside.
func repairRuns(dir string, m *Manifest, res *Repaired) error {
	path := filepath.Join(dir, RunsFile)
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	tmp, err := os.CreateTemp(dir, "."+RunsFile+".*")
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	defer os.Remove(tmp.Name()) // once renamed, there is nothing to remove
	w := bufio.NewWriterSize(tmp, 1<<20)
	var dropped *os.File
	in := newMembership(m)
	rewrite := false
	err = eachLine(f, func(line []byte, n int, off int64) error {
		body := bytes.TrimRight(line, "\r\n")
		if len(bytes.TrimSpace(body)) == 0 {
			rewrite = rewrite || len(line) > 0
			return nil
		}
		reason := ""
		var r Record
		switch err := json.Unmarshal(body, &r); {
		case err != nil && !bytes.HasSuffix(line, []byte("\n")):
			reason = "the last line, cut short: " + err.Error()
		case err != nil:
			reason = err.Error()
		default:
			if err := checkRecord(&r); err != nil {
				reason = err.Error()
			} else if err := in.check(&r); err != nil {
				reason = err.Error()
			}
		}
		if reason == "" {
			res.Kept++
			if !bytes.HasSuffix(line, []byte("\n")) {
				rewrite = true
			}
			w.Write(body)
			return w.WriteByte('\n')
		}
		rewrite = true
		res.Dropped = append(res.Dropped, Dropped{Line: n, Offset: off, Bytes: len(line), Reason: reason})
		if dropped == nil {
			var err error
			if dropped, err = os.OpenFile(filepath.Join(dir, DroppedFile), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644); err != nil {
				return err
			}
		}
		if _, err := dropped.Write(append(bytes.TrimRight(line, "\n"), '\n')); err != nil {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, DroppedFile), cause(err))
		}
		return nil
	})
	if err == nil && dropped != nil {
		err = dropped.Sync() // set aside before the file is replaced
	}
	if dropped != nil {
		if cerr := dropped.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = w.Flush()
	}
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	if !rewrite {
		return nil
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("writing %s: %w", path, cause(err))
	}
	return syncDir(dir)
}

// eachLine calls fn with each line of r (with its newline, when it has
// one), its number from 1 and the byte offset where it starts.
func eachLine(r io.Reader, fn func(line []byte, n int, off int64) error) error {
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) > 0 {
			if ferr := fn(line, n, off); ferr != nil {
				return ferr
			}
			off += int64(len(line))
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
