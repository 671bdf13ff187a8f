package rundir

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/internal/regularfile"
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
	// Finished says that a repair killed after it was decided (its
	// journal written) was finished: its files renamed into place.
	Finished bool
}

// Changed reports whether Repair changed anything.
func (r *Repaired) Changed() bool {
	return len(r.Dropped) > 0 || r.Manifest != "" || len(r.Removed) > 0 || r.Finished
}

// Repair makes the run directory dir readable again, keeping every intact
// record, under the directory's lock (ErrLocked while a run writes it):
//
//   - a manifest.json that is missing, not a regular file (a FIFO:
//     replaced), does not decode or holds a member no run writes (Manifest.check: "rounds": -5) is restored from its backup
//     (ManifestBackupFile) when that one is intact, and otherwise rebuilt
//     from the members that can still be read (in order, up to the damage)
//     and from the records (Repaired.Rebuilt and Lost say what); an intact
//     manifest.json that differs from an intact backup is replaced by the
//     backup when it would drop records that belong to the backup's run
//     (so no record of the backup's run is dropped), else the backup
//     follows it;
//   - every line of runs.jsonl that is a record of the run (a JSON run
//     record, checkRecord, of the manifest's cases, configurations,
//     actors and rounds) is kept as it was; every other line (not JSON, a
//     line cut short, a record of another run) is set aside, as it was,
//     at the end of DroppedFile, and named in Repaired.Dropped; both
//     files are replaced together (repairRuns: a repair killed at any
//     point and run again sets each line aside once), and only when
//     something is dropped or the last line lacks its newline;
//   - a repair killed after it had written both files (its journal
//     written) is finished first, and the temporary files of atomic
//     writes left by a killed process are removed.
//
// summary.json is the caller's to write again. A directory with neither a
// manifest, its backup nor runs.jsonl is not a run directory (an error).
func Repair(ctx context.Context, dir string) (*Repaired, error) {
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		return nil, errorf(CodeNotRunDir, "%s is not a run directory", dir)
	}
	lock, err := lockDir(dir)
	if err != nil {
		return nil, err
	}
	defer lock.Unlock()
	res := &Repaired{}
	if _, err := os.Stat(filepath.Join(dir, repairJournal)); err == nil {
		if err := rollForward(dir); err != nil {
			return nil, err
		}
		res.Finished = true
	}
	res.Removed = removeTemporaries(dir)
	m, err := repairManifest(dir, res)
	if err != nil {
		return nil, err
	}
	if err := repairRuns(ctx, dir, m, res); err != nil {
		return nil, err
	}
	return res, nil
}

// repairManifest reads the manifest, or restores or rebuilds it.
func repairManifest(dir string, res *Repaired) (*Manifest, error) {
	path, backup := filepath.Join(dir, ManifestFile), filepath.Join(dir, ManifestBackupFile)
	b, err := readRegular(path, maxManifestBytes)
	var m *Manifest
	if err == nil {
		m, err = parseManifest(path, b)
	}
	if err == nil {
		bb, berr := readRegular(backup, maxManifestBytes)
		if berr == nil && !bytes.Equal(bb, b) {
			// Both intact, but not the same: the backup wins when the
			// manifest would drop records that belong to the backup's run.
			if bm, perr := parseManifest(backup, bb); perr == nil {
				lost, err := recordsOnlyIn(dir, bm, m)
				if err != nil {
					return nil, err
				}
				if lost > 0 {
					res.ManifestError = fmt.Errorf("%s differs from its backup, and %d records of runs.jsonl belong to the backup's run but not to its own", path, lost)
					res.Manifest = "restored"
					return bm, WriteFileAtomic(path, bb, 0o644)
				}
			}
		}
		// Intact: the backup follows it.
		if berr != nil || !bytes.Equal(bb, b) {
			if err := WriteFileAtomic(backup, b, 0o644); err != nil {
				return nil, err
			}
		}
		return m, nil
	}
	var me *ManifestError
	var nr *NotRegularError
	var tl *regularfile.TooLargeError
	if !errors.As(err, &me) && !errors.Is(err, os.ErrNotExist) && !errors.As(err, &nr) && !errors.As(err, &tl) {
		return nil, err
	}
	if tl != nil {
		b = nil // past the limit: nothing of it is salvaged
	}
	res.ManifestError = err
	if bb, berr := readRegular(backup, maxManifestBytes); berr == nil {
		if bm, berr := parseManifest(backup, bb); berr == nil {
			res.Manifest = "restored"
			return bm, WriteFileAtomic(path, bb, 0o644)
		}
	}
	if _, serr := os.Stat(filepath.Join(dir, RunsFile)); errors.Is(err, os.ErrNotExist) && serr != nil {
		return nil, errorf(CodeNotRunDir, "%s is not a run directory: it holds no %s, no backup of it and no %s", dir, ManifestFile, RunsFile)
	}
	// A member that decodes but holds what no run writes is left out, and
	// rebuilt like a lost one, until the manifest passes its check.
	skip := map[string]bool{}
	var got map[string]bool
	for {
		rebuilt := res.Rebuilt
		m, got = salvageManifest(b, skip)
		if err := fillFromRecords(dir, m, got, res); err != nil {
			return nil, err
		}
		member, cerr := m.check()
		if cerr == nil || skip[member] {
			break
		}
		skip[member], res.Rebuilt = true, rebuilt
	}
	for _, name := range manifestMembers() {
		if !got[name] && !unkeyed[name] && !slices.Contains(res.Rebuilt, name) {
			res.Lost = append(res.Lost, name)
		}
	}
	m.Interrupted = true // how its last session ended is not known
	if !got["expected_runs"] {
		// The records say which runs were done, not how many were to be.
		m.ExpectedRuns, m.ExpectedRunsUnknown = 0, true
	}
	res.Manifest = "rebuilt"
	return m, WriteManifest(dir, *m)
}

// recordsOnlyIn counts the records of dir's runs.jsonl that belong to the
// run of manifest a (membership.check) but not to that of b.
func recordsOnlyIn(dir string, a, b *Manifest) (int, error) {
	f, err := openRegular(filepath.Join(dir, RunsFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	defer f.Close()
	ina, inb := newMembership(a), newMembership(b)
	n := 0
	err = eachLine(f, func(line []byte, _ int, _ int64, rest func(io.Writer) (int64, error)) error {
		var r Record
		if rest != nil || decodeRecord(line, &r) != nil || checkRecord(&r) != nil {
			return nil
		}
		if ina.check(&r) == nil && inb.check(&r) != nil {
			n++
		}
		return nil
	})
	return n, err
}

// salvageManifest reads the members of a damaged manifest, in order, up
// to the first that does not decode, but those in skip; got names those
// read.
func salvageManifest(b []byte, skip map[string]bool) (*Manifest, map[string]bool) {
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
		if !skip[name] && json.Unmarshal(one, m) == nil {
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
	f, err := openRegular(filepath.Join(dir, RunsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	err = eachLine(f, func(line []byte, _ int, _ int64, rest func(io.Writer) (int64, error)) error {
		var r Record
		if rest != nil {
			return nil // too long to be a record
		}
		if decodeRecord(line, &r) != nil || checkRecord(&r) != nil {
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
	fill("rounds", func() { m.Rounds = max(rounds, 1) })
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
// other line aside. Nothing is changed in place: the records kept go to
// a temporary runs.jsonl, DroppedFile's lines and those set aside now to
// a temporary DroppedFile, both synced; then a journal naming the two is
// written (the commit point) and they are renamed into place
// (finishRepair). A repair killed before the journal leaves the
// directory as it was; one killed after is finished by the next
// process that takes the directory's lock (rollForward). Either way each
// line is set aside once, as by one uninterrupted repair.
func repairRuns(ctx context.Context, dir string, m *Manifest, res *Repaired) error {
	path := filepath.Join(dir, RunsFile)
	droppedPath := filepath.Join(dir, DroppedFile)
	f, err := openRegular(path)
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
	defer tmp.Close()
	if fi, err := f.Stat(); err == nil {
		tmp.Chmod(fi.Mode().Perm()) // the new runs.jsonl keeps the old one's mode
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	var dropped *os.File // the temporary DroppedFile, made at the first line set aside
	var dw *bufio.Writer
	in := newMembership(m)
	rewrite := false
	err = eachLine(f, func(line []byte, n int, off int64, rest func(io.Writer) (int64, error)) error {
		if err := ctx.Err(); err != nil {
			return err // interrupted: nothing is changed (below)
		}
		body := bytes.TrimRight(line, "\r\n")
		if rest == nil && len(bytes.TrimSpace(body)) == 0 {
			rewrite = rewrite || len(line) > 0
			return nil
		}
		reason := ""
		var r Record
		switch err := decodeRecord(body, &r); {
		case rest != nil:
			reason = ErrLineTooLong.Error()
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
		if dropped == nil {
			var err error
			if dropped, err = startDropped(dir); err != nil {
				return fmt.Errorf("writing %s: %w", droppedPath, cause(err))
			}
			dw = bufio.NewWriterSize(dropped, 1<<20)
		}
		// Set aside as it was, with a newline; an over-long line is
		// copied through, never held whole.
		size := int64(len(line))
		lw := &lastByte{w: dw}
		_, err := lw.Write(line)
		if err == nil && rest != nil {
			var k int64
			k, err = rest(lw)
			size += k
		}
		if err == nil && lw.last != '\n' {
			err = dw.WriteByte('\n')
		}
		if err != nil {
			return fmt.Errorf("writing %s: %w", droppedPath, cause(err))
		}
		res.Dropped = append(res.Dropped, Dropped{Line: n, Offset: off, Bytes: int(min(size, math.MaxInt)), Reason: reason})
		return nil
	})
	if dropped != nil {
		defer os.Remove(dropped.Name())
		defer dropped.Close()
		if err == nil {
			if err = dw.Flush(); err == nil {
				err = dropped.Sync()
			}
			if err != nil {
				err = fmt.Errorf("writing %s: %w", droppedPath, cause(err))
			}
		}
	}
	if err == nil {
		if err = w.Flush(); err == nil {
			err = tmp.Sync()
		}
		if err != nil {
			err = fmt.Errorf("writing %s: %w", path, cause(err))
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil || !rewrite {
		return err
	}
	j := repairJournalData{Runs: filepath.Base(tmp.Name())}
	if dropped != nil {
		j.Dropped = filepath.Base(dropped.Name())
	}
	crashPoint("repair: written aside")
	b, _ := json.Marshal(j)
	if err := WriteFileAtomic(filepath.Join(dir, repairJournal), b, 0o644); err != nil {
		return err
	}
	crashPoint("repair: journal written")
	return finishRepair(dir, j)
}

// repairJournal names the files of a repair that is decided but may not
// be done (repairRuns): while it exists, the temporary runs.jsonl and
// DroppedFile it names are whole, and are renamed into place by
// rollForward.
const repairJournal = ".repair.journal.json"

// repairJournalData is repairJournal's content: the base names of the
// temporary runs.jsonl and of the temporary DroppedFile ("" when no line
// is set aside).
type repairJournalData struct {
	Runs    string `json:"runs"`
	Dropped string `json:"dropped,omitempty"`
}

// startDropped makes the temporary DroppedFile: a copy of DroppedFile
// (when there is one), with its mode, to which the lines set aside now
// are added.
func startDropped(dir string) (*os.File, error) {
	t, err := os.CreateTemp(dir, "."+DroppedFile+".*")
	if err != nil {
		return nil, err
	}
	old, err := openRegular(filepath.Join(dir, DroppedFile))
	mode := os.FileMode(0o644)
	switch {
	case errors.Is(err, os.ErrNotExist):
		err = nil
	case err == nil:
		if fi, serr := old.Stat(); serr == nil {
			mode = fi.Mode().Perm()
		}
		_, err = io.Copy(t, old)
		old.Close()
	}
	if err == nil {
		err = t.Chmod(mode)
	}
	if err != nil {
		t.Close()
		os.Remove(t.Name())
		return nil, err
	}
	return t, nil
}

// finishRepair renames the files the journal j names into place (those
// still there: a process killed while doing so renamed the others) and
// removes the journal.
func finishRepair(dir string, j repairJournalData) error {
	for _, x := range []struct{ tmp, name string }{{j.Dropped, DroppedFile}, {j.Runs, RunsFile}} {
		if x.tmp == "" {
			continue
		}
		err := os.Rename(filepath.Join(dir, x.tmp), filepath.Join(dir, x.name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("writing %s: %w", filepath.Join(dir, x.name), cause(err))
		}
		crashPoint("repair: renamed " + x.name)
	}
	if err := syncDir(dir); err != nil {
		return fmt.Errorf("writing %s: %w", filepath.Join(dir, RunsFile), cause(err))
	}
	if err := os.Remove(filepath.Join(dir, repairJournal)); err != nil {
		return fmt.Errorf("removing %s: %w", filepath.Join(dir, repairJournal), cause(err))
	}
	return syncDir(dir)
}

// rollForward finishes a repair that was decided (its journal written)
// but killed before it was done: the caller holds the directory's lock,
// and runs it before the temporary files are removed. A journal that
// does not decode, or names files that are not a repair's temporary
// files, is removed and changes nothing.
func rollForward(dir string) error {
	path := filepath.Join(dir, repairJournal)
	b, err := readRegular(path, 1<<12)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	var j repairJournalData
	if err != nil || json.Unmarshal(b, &j) != nil || !isTemporary(j.Runs, RunsFile) || (j.Dropped != "" && !isTemporary(j.Dropped, DroppedFile)) {
		os.Remove(path)
		return nil
	}
	return finishRepair(dir, j)
}

// isTemporary reports whether name is the base name of a temporary file
// of the file named file (".<file>.<random>", with no separator).
func isTemporary(name, file string) bool {
	rest, ok := strings.CutPrefix(name, "."+file+".")
	return ok && rest != "" && !strings.ContainsAny(rest, `/\.`)
}

// lastByte passes writes on to w and remembers the last byte written.
type lastByte struct {
	w    io.Writer
	last byte
}

func (l *lastByte) Write(p []byte) (int, error) {
	if len(p) > 0 {
		l.last = p[len(p)-1]
	}
	return l.w.Write(p)
}

// eachLine calls fn with each line of r (with its newline, when it has
// one), its number from 1 and the byte offset where it starts. A line
// longer than MaxRecordBytes comes cut after that many bytes, with rest
// set: rest copies what is left of it (fn may call it; otherwise the rest
// is skipped), so that no more than MaxRecordBytes of a line is held.
func eachLine(r io.Reader, fn func(line []byte, n int, off int64, rest func(io.Writer) (int64, error)) error) error {
	lr := newLineReader(r, MaxRecordBytes)
	var off int64
	for n := 1; ; n++ {
		line, err := lr.next()
		var rest func(io.Writer) (int64, error)
		var restBytes int64
		switch {
		case err == io.EOF:
			return nil
		case errors.Is(err, ErrLineTooLong):
			rest = func(w io.Writer) (int64, error) {
				k, err := lr.rest(w)
				restBytes += k
				return k, err
			}
		case err != nil:
			return err
		}
		if ferr := fn(line, n, off, rest); ferr != nil {
			return ferr
		}
		if rest != nil {
			if _, err := rest(io.Discard); err != nil {
				return err
			}
		}
		off += int64(len(line)) + restBytes
	}
}
