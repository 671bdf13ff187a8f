package rundir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A damaged line in the middle of runs.jsonl is named by its line and byte
// offset, with a pointer to repair, by every reader.
func TestDamagedLineIsNamed(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, rec("a", "x", 1, StatusPassed))
	size := fileSize(t, filepath.Join(dir, RunsFile))
	appendRaw(t, dir, "{\"run_id\": garbage}\n")
	writeRecords(t, dir, rec("a", "y", 1, StatusPassed))
	WriteManifest(dir, manifest("", 4))
	_, err := Read(dir)
	var le *LineError
	if !errors.As(err, &le) || le.Line != 2 || le.Offset != size {
		t.Fatalf("Read: %v", err)
	}
	if le.Path != filepath.Join(dir, RunsFile) || le.RepairCommand() != "patchbench repair "+dir || codeOf(err) != CodeDamagedLine {
		t.Errorf("Read: %v", err)
	}
	if _, _, err := Find(dir, "a/y/reference/1"); !errors.As(err, &le) || le.Offset != size {
		t.Errorf("Find: %v", err)
	}
	// A record of another run is named the same way.
	other := t.TempDir()
	writeRecords(t, other, rec("a", "x", 1, StatusPassed), rec("zzz", "x", 1, StatusPassed))
	WriteManifest(other, manifest("", 4))
	if _, err := Read(other); !errors.As(err, &le) || le.Line != 2 || codeOf(err) != CodeOutsideRun {
		t.Errorf("another run's record: %v", err)
	}
}

// A manifest cut short is named by its line and byte offset.
func TestTruncatedManifestIsNamed(t *testing.T) {
	dir := t.TempDir()
	WriteManifest(dir, manifest("", 4))
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	os.WriteFile(filepath.Join(dir, ManifestFile), b[:40], 0o644)
	_, err := Read(dir)
	var me *ManifestError
	if !errors.As(err, &me) || me.Offset != 40 || me.Line != 1+strings.Count(string(b[:40]), "\n") {
		t.Fatalf("%v", err)
	}
	if me.Path != filepath.Join(dir, ManifestFile) || me.RepairCommand() != "patchbench repair "+dir || codeOf(err) != CodeDamagedManifest {
		t.Errorf("%v", err)
	}
}

func TestRepair(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, rec("a", "x", 1, StatusPassed))
	off2 := fileSize(t, filepath.Join(dir, RunsFile))
	appendRaw(t, dir, "not json\n")
	writeRecords(t, dir, rec("a", "y", 1, StatusFailed), rec("b", "x", 1, StatusPassed), rec("a", "x", 2, StatusError))
	appendRaw(t, dir, `{"run_id":"a/y/refe`)
	m := manifest("", 4)
	WriteManifest(dir, m)
	os.WriteFile(filepath.Join(dir, ".manifest.json.123456"), nil, 0o644) // a killed write's temporary file
	res, err := Repair(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var lines []int
	var reasons []string
	for _, d := range res.Dropped {
		lines = append(lines, d.Line)
		reasons = append(reasons, d.Reason)
	}
	if diff := cmp.Diff([]int{2, 4, 6}, lines); diff != "" || res.Kept != 3 || res.Dropped[0].Offset != off2 || res.Dropped[0].Bytes != len("not json\n") {
		t.Errorf("dropped lines (-want +got):\n%s kept %d %+v", diff, res.Kept, res.Dropped)
	}
	if !strings.Contains(reasons[1], "case b is not in this run's case set") || !strings.HasPrefix(reasons[2], "the last line, cut short") {
		t.Errorf("reasons %q", reasons)
	}
	if diff := cmp.Diff([]string{".manifest.json.123456"}, res.Removed); diff != "" || res.Manifest != "" {
		t.Errorf("removed (-want +got):\n%s manifest %q", diff, res.Manifest)
	}
	d, err := Read(dir)
	if err != nil || d.Runs() != 3 {
		t.Fatalf("after the repair: %v", err)
	}
	set, _ := os.ReadFile(filepath.Join(dir, DroppedFile))
	if n := strings.Count(string(set), "\n"); n != 3 || !strings.HasPrefix(string(set), "not json\n") {
		t.Errorf("%s: %q", DroppedFile, set)
	}
	// Nothing more to do.
	again, err := Repair(context.Background(), dir)
	if err != nil || again.Changed() || again.Kept != 3 {
		t.Errorf("second repair: %+v %v", again, err)
	}
	// A manifest cut short comes back from its backup.
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	os.WriteFile(filepath.Join(dir, ManifestFile), b[:len(b)/2], 0o644)
	res, err = Repair(context.Background(), dir)
	var me *ManifestError
	if err != nil || res.Manifest != "restored" || !errors.As(res.ManifestError, &me) {
		t.Fatalf("restore: %+v %v", res, err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(after) != string(b) {
		t.Errorf("restored manifest %s", after)
	}
	// A manifest over maxManifestBytes comes back from its backup too
	// (repair used to stop on it).
	big := append(append([]byte(nil), b[:len(b)-1]...), []byte(`,"zz":"`+strings.Repeat("x", maxManifestBytes)+`"}`)...)
	os.WriteFile(filepath.Join(dir, ManifestFile), big, 0o644)
	res, err = Repair(context.Background(), dir)
	if err != nil || res.Manifest != "restored" {
		t.Fatalf("an over-size manifest: %+v %v", res, err)
	}
	if after, _ := os.ReadFile(filepath.Join(dir, ManifestFile)); string(after) != string(b) {
		t.Errorf("restored manifest %.200s", after)
	}
	// Without a backup it is rebuilt from what is left and the records.
	os.Remove(filepath.Join(dir, ManifestBackupFile))
	os.WriteFile(filepath.Join(dir, ManifestFile), b[:strings.Index(string(b), `"configs"`)], 0o644)
	res, err = Repair(context.Background(), dir)
	if err != nil || res.Manifest != "rebuilt" {
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	if diff := cmp.Diff([]string{"configs", "actors", "rounds"}, res.Rebuilt); diff != "" || !strings.Contains(strings.Join(res.Lost, ","), "config_details") ||
		strings.Contains(strings.Join(res.Lost, ","), "case_ids") {
		t.Errorf("rebuilt (-want +got):\n%s lost %v", diff, res.Lost)
	}
	d, err = Read(dir)
	if err != nil || d.Runs() != 3 || d.Manifest.Rounds != 2 || d.Manifest.Module != "m" || !d.Manifest.Interrupted {
		t.Fatalf("after the rebuild: %v %+v", err, d)
	}
	if _, err := os.Stat(filepath.Join(dir, ManifestBackupFile)); err != nil {
		t.Errorf("no backup written: %v", err)
	}
	// Not a run directory.
	if _, err := Repair(context.Background(), t.TempDir()); codeOf(err) != CodeNotRunDir {
		t.Errorf("empty directory: %v", err)
	}
	// One writer at a time.
	s, _ := OpenSink(dir)
	defer s.Close()
	if _, err := Repair(context.Background(), dir); !errors.Is(err, ErrLocked) {
		t.Errorf("while a run writes: %v", err)
	}
}

// A directory a run was killed in before its manifest was written (the
// lock file, an empty runs.jsonl, a temporary file) is taken as new; one
// killed between the manifest's backup and the manifest is read from the
// backup.
func TestUnstartedDirectoryResumes(t *testing.T) {
	m := manifest("", 4)
	dir := t.TempDir()
	s, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	os.WriteFile(filepath.Join(dir, ".manifest.json.77"), nil, 0o644)
	if old, err := CheckManifest(dir, m); old != nil || err != nil {
		t.Fatalf("killed before the manifest: %v %v", old, err)
	}
	s, _ = OpenSink(dir) // removes the temporary file
	s.Close()
	if _, err := os.Stat(filepath.Join(dir, ".manifest.json.77")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("temporary file left: %v", err)
	}
	WriteManifest(dir, m)
	os.Remove(filepath.Join(dir, ManifestFile))
	if old, err := CheckManifest(dir, m); old == nil || err != nil {
		t.Errorf("killed after the backup: %v %v", old, err)
	}
	// Records without a manifest are not a new directory.
	busy := t.TempDir()
	writeRecords(t, busy, rec("a", "x", 1, StatusPassed))
	if _, err := CheckManifest(busy, m); err == nil {
		t.Error("records without a manifest taken as new")
	}
}

// A write that fails (a full disk: /dev/full fails every write with
// ENOSPC) names the run, the file and the cause, and leaves nothing
// behind; an atomic write names its file, not its temporary file.
func TestWriteFailures(t *testing.T) {
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip("no /dev/full on this system")
	}
	s := &Sink{path: "/x/runs.jsonl", f: full}
	err = s.Write(rec("a", "x", 1, StatusPassed))
	var we *WriteError
	if !errors.As(err, &we) || *we != (WriteError{Path: "/x/runs.jsonl", RunID: "a/x/reference/1", Err: syscall.ENOSPC}) || codeOf(err) != CodeWriteFailed {
		t.Errorf("%v", err)
	}
	full.Close()
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, ManifestFile), 0o755) // the rename cannot replace a directory
	err = WriteManifest(dir, manifest("", 1))
	var pe *os.PathError
	var lke *os.LinkError
	if !errors.As(err, &we) || we.Path != filepath.Join(dir, ManifestFile) || we.RunID != "" || errors.As(err, &pe) || errors.As(err, &lke) {
		t.Errorf("%v: want the manifest's path and the bare cause, with no temporary file's", err)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if diff := cmp.Diff([]string{ManifestBackupFile, ManifestFile}, names); diff != "" {
		t.Errorf("left behind (-want +got):\n%s", diff)
	}
}

// TestRepairInterrupted: a repair interrupted between two lines leaves
// runs.jsonl and the lines set aside as they were, so that the repair run
// again sets each damaged line aside once (an interrupted repair used
// to leave lines set aside twice), and the new runs.jsonl keeps the
// old one's mode (it was 0600 after a repair).
func TestRepairInterrupted(t *testing.T) {
	dir := t.TempDir()
	WriteManifest(dir, manifest("", 4))
	writeRecords(t, dir, rec("a", "x", 1, StatusPassed))
	appendRaw(t, dir, "{\"junk\": 1}\n")
	writeRecords(t, dir, rec("a", "y", 1, StatusPassed))
	appendRaw(t, dir, "{\"junk\": 2}\n")
	writeRecords(t, dir, rec("a", "x", 2, StatusPassed))
	runs := filepath.Join(dir, RunsFile)
	os.Chmod(runs, 0o644)
	before, _ := os.ReadFile(runs)
	for n := 1; n < 5; n++ {
		if _, err := Repair(&errAfter{context.Background(), n}, dir); !errors.Is(err, context.Canceled) {
			t.Fatalf("interrupted after %d lines: %v", n, err)
		}
		if after, _ := os.ReadFile(runs); string(after) != string(before) {
			t.Fatalf("interrupted after %d lines: runs.jsonl changed", n)
		}
		if b, _ := os.ReadFile(filepath.Join(dir, DroppedFile)); len(b) != 0 {
			t.Fatalf("interrupted after %d lines: %q set aside", n, b)
		}
	}
	res, err := Repair(context.Background(), dir)
	if err != nil || len(res.Dropped) != 2 || res.Kept != 3 {
		t.Fatalf("%+v %v", res, err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, DroppedFile)); string(b) != "{\"junk\": 1}\n{\"junk\": 2}\n" {
		t.Errorf("set aside: %q", b)
	}
	if fi, err := os.Stat(runs); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("runs.jsonl's mode after the repair: %v %v", fi.Mode(), err)
	}
}
