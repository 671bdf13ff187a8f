package rundir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/internal/regularfile"
	"github.com/patchbench/patchbench/runspec"
)

// rec is a small valid record.
func rec(caseID, config string, round int, status string) *Record {
	return &Record{RunID: fmt.Sprintf("%s/%s/reference/%d", caseID, config, round), Case: caseID, Config: config,
		Actor: "reference", Round: round, Status: status}
}

// lines writes records, one JSON line each, as a sink does.
func writeRecords(t *testing.T, dir string, recs ...*Record) {
	t.Helper()
	s, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := s.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
}

func appendRaw(t *testing.T, dir, text string) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(dir, RunsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(text)
	f.Close()
}

func readAll(t *testing.T, path string) ([]string, *Reader) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewReader(f)
	var ids []string
	for r.Next() {
		ids = append(ids, fmt.Sprintf("%s@%d", r.Record().RunID, r.Line()))
	}
	return ids, r
}

func TestReader(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, RunsFile)
	writeRecords(t, dir, rec("a", "x", 1, StatusPassed), rec("a", "y", 1, StatusFailed))
	appendRaw(t, dir, "\n")
	ids, r := readAll(t, path)
	if diff := cmp.Diff([]string{"a/x/reference/1@1", "a/y/reference/1@2"}, ids); diff != "" || r.Err() != nil || r.TruncateAt() != -1 || r.NeedsNewline() {
		t.Fatalf("(-want +got):\n%s err %v cut %d", diff, r.Err(), r.TruncateAt())
	}
	// A last line cut short by a crash is dropped, and said where.
	size := fileSize(t, path)
	appendRaw(t, dir, `{"run_id":"a/z/refer`)
	ids, r = readAll(t, path)
	if len(ids) != 2 || r.Err() != nil || r.TruncateAt() != size {
		t.Fatalf("%v err %v cut %d, want %d", ids, r.Err(), r.TruncateAt(), size)
	}
	// A whole last record without its newline is kept.
	os.Truncate(path, size)
	appendRaw(t, dir, `{"run_id":"a/z/reference/1","case":"a","config":"z","actor":"reference","round":1,"status":"error"}`)
	ids, r = readAll(t, path)
	if len(ids) != 3 || !r.NeedsNewline() || r.TruncateAt() != -1 {
		t.Fatalf("%v newline %v cut %d", ids, r.NeedsNewline(), r.TruncateAt())
	}
	// Any other bad line is an error naming the file and the line.
	appendRaw(t, dir, "\n{\"hello\":\"world\"}\nnot json\n")
	_, r = readAll(t, path)
	var le *LineError
	if !errors.As(r.Err(), &le) || le.Path != path || le.Line != 5 || codeOf(r.Err()) != CodeNotARecord {
		t.Fatalf("error %v", r.Err())
	}
}

func fileSize(t *testing.T, path string) int64 {
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Size()
}

func TestOneWriterPerRunDirectory(t *testing.T) {
	dir := t.TempDir()
	a, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := OpenSink(dir); !errors.Is(err, ErrLocked) || codeOf(err) != CodeLocked {
		t.Fatalf("second sink: %v", err)
	}
	a.Close()
	b, err := OpenSink(dir)
	if err != nil {
		t.Fatalf("after close: %v", err)
	}
	b.Close()
}

func TestResume(t *testing.T) {
	dir := t.TempDir()
	r1 := rec("a", "x", 1, StatusError)
	r1.TokensSent = 10
	r2 := rec("a", "y", 1, StatusPending)
	r2.TokensSent = 5
	writeRecords(t, dir, r1, r2, rec("a", "z", 1, StatusPassed))
	appendRaw(t, dir, `{"run_id":"a/w`)
	s, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := s.Resume(false)
	if err != nil {
		t.Fatal(err)
	}
	want := Resumed{Skip: map[string]bool{"a/x/reference/1": true, "a/z/reference/1": true}, Records: 3, TokensSent: 15}
	if diff := cmp.Diff(want, res); diff != "" {
		t.Errorf("resume (-want +got):\n%s", diff)
	}
	if err := s.Write(rec("a", "y", 1, StatusPassed)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	ids, r := readAll(t, filepath.Join(dir, RunsFile))
	if len(ids) != 4 || r.Err() != nil {
		t.Fatalf("after the repair: %v %v", ids, r.Err())
	}
	// With errors retried, the error run is not skipped.
	s, _ = OpenSink(dir)
	defer s.Close()
	if res, _ := s.Resume(true); res.Skip["a/x/reference/1"] || !res.Skip["a/y/reference/1"] {
		t.Errorf("retry errors: %v", res.Skip)
	}
}

func manifest(shard string, expected int) Manifest {
	return Manifest{Module: "m", CaseIDs: []string{"a"}, Configs: []string{"x", "y"}, Actors: []string{"reference"}, Spec: runspec.Spec{Rounds: 2},
		Shard: shard, ExpectedRuns: expected, Started: "2026-01-01T00:00:00Z"}
}

func TestReadAndLatest(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, rec("a", "x", 1, StatusError), rec("a", "y", 1, StatusPassed), rec("a", "x", 1, StatusPassed))
	if _, err := Read(dir); codeOf(err) != CodeNotRunDir {
		t.Fatalf("no manifest: %v", err)
	}
	if err := WriteJSON(dir, ManifestFile, manifest("", 4)); err != nil {
		t.Fatal(err)
	}
	d, err := Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	d.Each(func(r *Record) error { got = append(got, r.RunID+" "+r.Status); return nil })
	if diff := cmp.Diff([]string{"a/y/reference/1 passed", "a/x/reference/1 passed"}, got); diff != "" || d.Runs() != 2 {
		t.Errorf("the last record of each run (-want +got):\n%s", diff)
	}
	var latest []string
	Latest(filepath.Join(dir, RunsFile), func(r *Record) error { latest = append(latest, r.RunID); return nil })
	if len(latest) != 2 {
		t.Errorf("Latest: %v", latest)
	}
	// A record of another run is refused, after every line parsed.
	writeRecords(t, dir, rec("b", "x", 1, StatusPassed), rec("a", "x", 3, StatusPassed))
	if _, err := Read(dir); codeOf(err) != CodeOutsideRun {
		t.Errorf("another case: %v", err)
	}
}

func TestManifestKeyAndCheck(t *testing.T) {
	a, b := manifest("", 4), manifest("", 6)
	b.Started, b.Finished = "later", "later"
	if a.Key() != b.Key() {
		t.Error("times and expected runs change the key")
	}
	b.Rounds = 3
	if diff := cmp.Diff([]string{"rounds"}, a.Differences(b)); diff != "" {
		t.Errorf("differences (-want +got):\n%s", diff)
	}
	dir := t.TempDir()
	if old, err := CheckManifest(dir, a); old != nil || err != nil {
		t.Fatalf("an empty directory: %v %v", old, err)
	}
	WriteJSON(dir, ManifestFile, a)
	if old, err := CheckManifest(dir, a); old == nil || err != nil {
		t.Fatalf("the same settings: %v %v", old, err)
	}
	if _, err := CheckManifest(dir, b); codeOf(err) != CodeSettingsDiffer {
		t.Errorf("other settings: %v", err)
	}
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), nil, 0o644)
	if _, err := CheckManifest(other, a); codeOf(err) != CodeNotRunDir {
		t.Errorf("not a run directory: %v", err)
	}
	os.WriteFile(filepath.Join(other, ManifestFile), []byte("{"), 0o644)
	var me *ManifestError
	if _, err := ReadManifest(other); !errors.As(err, &me) {
		t.Errorf("a broken manifest: %v", err)
	}
}

func TestMerge(t *testing.T) {
	tmp := t.TempDir()
	s0, s1, out := filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1"), filepath.Join(tmp, "out")
	writeRecords(t, s0, rec("a", "x", 1, StatusPassed), rec("a", "x", 2, StatusPending))
	WriteJSON(s0, ManifestFile, manifest("0/3", 2))
	writeRecords(t, s1, rec("a", "y", 1, StatusFailed))
	WriteJSON(s1, ManifestFile, manifest("1/3", 2))
	m, err := MergeWith(context.Background(), out, []string{s0, s1}, MergeOptions{AllowMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if m.Runs != 3 || m.Settled != 2 || m.Missing != "2/3" || m.Manifest.ExpectedRuns != 4 || m.Manifest.Shard != "" || m.Manifest.MissingShards != "2/3" {
		t.Errorf("merged %+v %+v", m, m.Manifest)
	}
	if _, err := MergeWith(context.Background(), out, []string{s0}, MergeOptions{}); codeOf(err) != CodeHoldsRuns {
		t.Errorf("into a directory with runs: %v", err)
	}
	if _, err := MergeWith(context.Background(), filepath.Join(tmp, "o2"), []string{s0, s0}, MergeOptions{}); codeOf(err) != CodeGivenTwice {
		t.Errorf("a shard twice: %v", err)
	}
	other := manifest("2/3", 2)
	other.Rounds = 5
	s2 := filepath.Join(tmp, "s2")
	writeRecords(t, s2)
	WriteJSON(s2, ManifestFile, other)
	if _, err := MergeWith(context.Background(), filepath.Join(tmp, "o3"), []string{s0, s2}, MergeOptions{}); codeOf(err) != CodeSettingsDiffer {
		t.Errorf("other settings: %v", err)
	}
}

func TestFind(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, rec("a", "x", 1, StatusError), rec("a", "x", 1, StatusPassed), rec("a", "y", 1, StatusPassed))
	raw, line, err := Find(dir, "a/x/reference/1")
	if err != nil || line != 2 || !strings.Contains(string(raw), `"status":"passed"`) {
		t.Fatalf("%s %d %v", raw, line, err)
	}
	var nf *NotFoundError
	// Near names each run of the case once, however many lines it has.
	if _, _, err := Find(dir, "a/z/reference/1"); !errors.As(err, &nf) || strings.Join(nf.Near, " ") != "a/x/reference/1 a/y/reference/1" {
		t.Errorf("a missing run: %v", err)
	}
	appendRaw(t, dir, "oops\n")
	var le *LineError
	if _, _, err := Find(dir, "a/x/reference/1"); !errors.As(err, &le) || le.Line != 4 {
		t.Errorf("a bad line: %v", err)
	}
}

func TestWriteFileAtomic(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	for _, text := range []string{"one\n", "two\n"} {
		if err := WriteFileAtomic(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, _ := os.ReadFile(path); string(b) != text {
			t.Errorf("%q", b)
		}
	}
	if fi, _ := os.Stat(path); fi.Mode().Perm() != 0o644 {
		t.Errorf("mode %v", fi.Mode())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("left behind: %v", entries)
	}
	if err := WriteFileAtomic(filepath.Join(dir, "no", "such", "dir"), nil, 0o644); err == nil {
		t.Error("no error for a missing directory")
	}
}

// errAfter is a context whose Err is nil for its first n calls and
// context.Canceled after: an interruption between two records.
type errAfter struct {
	context.Context
	n int
}

func (c *errAfter) Err() error {
	if c.n--; c.n < 0 {
		return context.Canceled
	}
	return nil
}

// TestMergeInterrupted: a merge interrupted between two records removes
// what it wrote, so the directory is as it was and the same merge then
// runs (half a runs.jsonl used to be left that nothing would read or
// merge into).
func TestMergeInterrupted(t *testing.T) {
	tmp := t.TempDir()
	s0, s1 := filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1")
	writeRecords(t, s0, rec("a", "x", 1, StatusPassed), rec("a", "x", 2, StatusPassed))
	WriteJSON(s0, ManifestFile, manifest("0/2", 2))
	writeRecords(t, s1, rec("a", "y", 1, StatusFailed))
	WriteJSON(s1, ManifestFile, manifest("1/2", 2))
	for _, out := range []string{filepath.Join(tmp, "new"), t.TempDir()} {
		if _, err := MergeWith(&errAfter{context.Background(), 2}, out, []string{s0, s1}, MergeOptions{}); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s: %v", out, err)
		}
		if entries, _ := os.ReadDir(out); len(entries) != 0 {
			t.Errorf("%s holds %d files after the interruption", out, len(entries))
		}
		m, err := MergeWith(context.Background(), out, []string{s0, s1}, MergeOptions{})
		if err != nil || m.Runs != 3 {
			t.Fatalf("%s: merged again: %+v %v", out, m, err)
		}
	}
}

// TestLockIsNotFollowed checks that a symbolic link at the directory's
// .lock, dangling or not, is refused and not followed: a dangling one made
// run and repair create the file it named, outside the run directory
// (a symlink planted there by someone else).
func TestLockIsNotFollowed(t *testing.T) {
	for _, dangling := range []bool{true, false} {
		dir, elsewhere := t.TempDir(), t.TempDir()
		target := filepath.Join(elsewhere, "lock")
		if !dangling {
			os.WriteFile(target, nil, 0o644)
		}
		if err := os.Symlink(target, filepath.Join(dir, LockFile)); err != nil {
			t.Fatal(err)
		}
		s, err := OpenSink(dir)
		var nre *regularfile.NotRegularError
		if !errors.As(err, &nre) {
			if s != nil {
				s.Close()
			}
			t.Fatalf("dangling %v: error %v, want a *NotRegularError", dangling, err)
		}
		if _, err := os.Stat(target); dangling && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("the dangling link's target was made: %v", err)
		}
	}
}

// TestResumeScaledIDs: a grown run's id names its scale (RunIDAt), and
// a record written before ids did (a directory of one scale, the plain
// RunID with a scale) is still read and is skipped under the id its run
// has now; an id that names another scale than its record is refused.
func TestResumeScaledIDs(t *testing.T) {
	if got := RunIDAt("c", "x", "a", 2, "1MB"); got != "c/x/a/2@1MB" {
		t.Errorf("RunIDAt: %s", got)
	}
	if got := RunIDAt("c", "x", "a", 2, ""); got != "c/x/a/2" {
		t.Errorf("RunIDAt at 1x: %s", got)
	}
	dir := t.TempDir()
	legacy := rec("a", "x", 1, StatusPassed)
	legacy.Scale = "10MB" // its id has no @10MB
	grown := rec("a", "y", 1, StatusPassed)
	grown.Scale, grown.RunID = "1MB", "a/y/reference/1@1MB"
	writeRecords(t, dir, legacy, grown, rec("a", "y", 1, StatusPassed))
	s, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	res, err := s.Resume(false)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{"a/x/reference/1@10MB": true, "a/y/reference/1@1MB": true, "a/y/reference/1": true}
	if diff := cmp.Diff(want, res.Skip); diff != "" {
		t.Errorf("skipped (-want +got):\n%s", diff)
	}
	bad := rec("a", "x", 1, StatusPassed)
	bad.Scale, bad.RunID = "1MB", "a/x/reference/1@10MB"
	if err := checkRecord(bad); err == nil {
		t.Error("a run id naming another scale than its record is accepted")
	}
}
