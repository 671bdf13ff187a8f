package rundir

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSinkCutsARecordPastMaxWriteBytes writes a record of three steps with
// 12 MiB answers each (a raised --max-answer-bytes): the line written is
// at most MaxWriteBytes, every reader reads it back, and each raw response
// that was cut says so.
func TestSinkCutsARecordPastMaxWriteBytes(t *testing.T) {
	dir := t.TempDir()
	r := rec("c1", "patchoptic", 1, StatusFailed)
	for _, id := range []string{"a", "b", "c"} {
		r.Steps = append(r.Steps, StepRecord{Step: id, RawResponse: strings.Repeat("x", 12<<20)})
	}
	writeRecords(t, dir, r)
	if n := fileSize(t, filepath.Join(dir, RunsFile)); n > MaxWriteBytes {
		t.Fatalf("a line of %d bytes", n)
	}
	lines, rd := readAll(t, filepath.Join(dir, RunsFile))
	if rd.Err() != nil || len(lines) != 1 {
		t.Fatalf("%d records, %v", len(lines), rd.Err())
	}
	for _, s := range r.Steps {
		if len(s.RawResponse) != KeptBytes || len(s.Truncated) != 1 || s.Truncated[0] != (Truncation{Member: "/raw_response", Unit: "bytes", Length: 12 << 20, Kept: KeptBytes}) {
			t.Errorf("step %s: %d bytes, notes %+v", s.Step, len(s.RawResponse), s.Truncated)
		}
	}
}

// TestLineReaderBoundsALine reads lines past a small limit: each long one
// comes cut after limit+1 bytes with ErrLineTooLong, its rest can be
// copied whole, and the lines after it are read as they are.
func TestLineReaderBoundsALine(t *testing.T) {
	long := strings.Repeat("y", 3<<20) + "\n"
	lr := newLineReader(strings.NewReader("ok\n"+long+long+"end"), 1<<20)
	b, err := lr.next()
	if string(b) != "ok\n" || err != nil {
		t.Fatalf("%q %v", b, err)
	}
	b, err = lr.next()
	if !errors.Is(err, ErrLineTooLong) || len(b) > 1<<20+1<<20 {
		t.Fatalf("%d bytes, %v", len(b), err)
	}
	var rest strings.Builder
	if n, err := lr.rest(&rest); err != nil || len(b)+int(n) != len(long) || !strings.HasSuffix(rest.String(), "y\n") {
		t.Fatalf("rest %d bytes, %v", n, err)
	}
	if _, err = lr.next(); !errors.Is(err, ErrLineTooLong) {
		t.Fatal(err) // the second long line, its rest skipped by next
	}
	if b, err = lr.next(); string(b) != "end" || err != nil {
		t.Fatalf("%q %v", b, err)
	}
}

// TestReadRefusesAnEditedManifest names the member of a manifest that
// decodes but holds what no run writes, with its line.
func TestReadRefusesAnEditedManifest(t *testing.T) {
	dir := t.TempDir()
	m := manifest("", 2)
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(filepath.Join(dir, ManifestFile))
	edited := strings.Replace(string(b), `"rounds": 2`, `"rounds": -5`, 1)
	if edited == string(b) {
		t.Fatalf("no rounds member in\n%s", b)
	}
	os.WriteFile(filepath.Join(dir, ManifestFile), []byte(edited), 0o644)
	_, err := Read(dir)
	var me *ManifestError
	if !errors.As(err, &me) || me.Member != "rounds" || me.Line != 1+strings.Count(edited[:strings.Index(edited, `"rounds"`)], "\n") {
		t.Fatalf("%v", err)
	}
}

// TestManifestMemberTwice: a manifest that names a member twice is
// damaged (it decoded as its last value), named by the line of the second,
// and repair restores it from its backup (issue 23: "rounds": 1,
// "rounds": 10000 was read as 10000 and repair saw nothing to mend).
func TestManifestMemberTwice(t *testing.T) {
	dir := t.TempDir()
	if err := WriteManifest(dir, manifest("", 2)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, ManifestFile)
	b, _ := os.ReadFile(path)
	edited := strings.Replace(string(b), `"rounds": 2`, `"rounds": 2, "rounds": 10000`, 1)
	os.WriteFile(path, []byte(edited), 0o644)
	_, err := Read(dir)
	var me *ManifestError
	if !errors.As(err, &me) || me.Line != 1+strings.Count(edited[:strings.Index(edited, `"rounds"`)], "\n") || !strings.Contains(err.Error(), "duplicate") {
		t.Fatalf("%v", err)
	}
	res, err := Repair(context.Background(), dir)
	if err != nil || res.Manifest != "restored" {
		t.Fatalf("repair: %+v %v", res, err)
	}
	if after, _ := os.ReadFile(path); string(after) != string(b) {
		t.Errorf("restored %s", after)
	}
}
