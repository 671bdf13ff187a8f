package rundir

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
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
// and repair restores it from its backup ("rounds": 1, "rounds": 10000
// was read as 10000 and repair saw nothing to mend).
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

// TestWriterKeepsRecordsReadable checks that a Sink never writes a record
// its readers refuse: an answer of 110,000 empty arrays in a patch's
// value (330 KB) made a record every reader called damaged, and so the
// whole directory unreadable; a committed one put them in the final state
// too; a model name of 30 MB in three attempts made a record too long to
// write, which ended the benchmark. Each is
// cut (noted in the step's truncated) and read back.
func TestWriterKeepsRecordsReadable(t *testing.T) {
	arrays := json.RawMessage("[" + strings.TrimSuffix(strings.Repeat("[],", MaxRecordContainers+10_000), ",") + "]")
	var wide any
	if err := json.Unmarshal(arrays, &wide); err != nil {
		t.Fatal(err)
	}
	patchRec := rec("c1", "patchoptic", 1, StatusFailed)
	patchRec.Steps = []StepRecord{{Step: "s1", Patch: []runtime.Operation{{Op: "add", Path: runtime.MustPointer("/zz"), Value: wide}}}}
	finalRec := rec("c2", "patchoptic", 1, StatusPassed)
	finalRec.Steps = []StepRecord{{Step: "s1"}}
	finalRec.FinalState = json.RawMessage(`{"zz":` + string(arrays) + `}`)
	modelRec := rec("c3", "patchoptic", 1, StatusFailed)
	model := strings.Repeat("M", 12<<20)
	modelRec.Steps = []StepRecord{{Step: "s1", Model: model, Earlier: []Attempt{{Model: model}, {Model: model}}}}
	dir := t.TempDir()
	s, err := OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range []*Record{patchRec, finalRec, modelRec} {
		if err := s.Write(r); err != nil {
			t.Fatalf("%s: %v", r.RunID, err)
		}
	}
	s.Close()
	f, err := os.Open(filepath.Join(dir, RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rd := NewReader(f)
	var recs []*Record
	for rd.Next() {
		c := *rd.Record()
		recs = append(recs, &c)
	}
	if rd.Err() != nil || len(recs) != 3 {
		t.Fatalf("read back %d records: %v", len(recs), rd.Err())
	}
	noted := func(r *Record, member string) bool {
		for _, tr := range r.Steps[len(r.Steps)-1].Truncated {
			if tr.Member == member {
				return true
			}
		}
		return false
	}
	if recs[0].Steps[0].Patch != nil || !noted(recs[0], "/patch") {
		t.Errorf("the wide patch: %d operations kept, truncated %+v", len(recs[0].Steps[0].Patch), recs[0].Steps[0].Truncated)
	}
	if recs[1].FinalState != nil || !noted(recs[1], "/final_state") {
		t.Errorf("the wide final state: %d bytes kept, truncated %+v", len(recs[1].FinalState), recs[1].Steps[0].Truncated)
	}
	if len(recs[2].Steps[0].Model) > KeptBytes || !noted(recs[2], "/model") {
		t.Errorf("the long model: %d bytes kept, truncated %+v", len(recs[2].Steps[0].Model), recs[2].Steps[0].Truncated)
	}
}

// TestLineSkipsLinesTooLong checks that a record whose line minBytes
// says is too long (prompts of 13 MB in two steps, a final state of
// 10 MB with white space, long raw responses) gives the same line, and
// the same notes of what was cut, as when every stage's line is
// written, and that minBytes is never more than a line's length.
func TestLineSkipsLinesTooLong(t *testing.T) {
	if testing.Short() {
		t.Skip("builds records of tens of MB")
	}
	build := func() *Record {
		r := rec("c1", "patchoptic", 1, StatusFailed)
		state := `{"a": [` + strings.Repeat(`"x y", `, 1<<20) + `1],` + "\n" + `"b": "` + strings.Repeat("z", 3<<20) + `"}`
		r.FinalState = json.RawMessage(state)
		for _, id := range []string{"a", "b"} {
			r.Steps = append(r.Steps, StepRecord{Step: id, RawResponse: strings.Repeat("r", 3<<20),
				Prompt: []Message{{Role: "system", Content: "s"}, {Role: "user", Content: strings.Repeat("v\"\n", 13<<20/3)}}})
		}
		return r
	}
	defer func() { estimateLines = true }()
	for _, shape := range []func(*Record){
		func(*Record) {},
		func(r *Record) { r.Steps[1].Prompt = r.Steps[1].Prompt[:1] },      // writable once the texts are cut
		func(r *Record) { r.Steps = r.Steps[:1]; r.Steps[0].Prompt = nil }, // writable whole
	} {
		var lines [2][]byte
		var notes [2][][]Truncation
		for i, estimate := range []bool{false, true} {
			estimateLines = estimate
			r := build()
			shape(r)
			whole, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			if m := r.minBytes(); m > int64(len(whole)) {
				t.Fatalf("minBytes %d, more than the line's %d", m, len(whole))
			}
			if lines[i], err = r.line(); err != nil {
				t.Fatal(err)
			}
			for _, s := range r.Steps {
				notes[i] = append(notes[i], s.Truncated)
			}
		}
		if string(lines[0]) != string(lines[1]) {
			t.Errorf("the line differs when lines too long are not written (%d and %d bytes)", len(lines[0]), len(lines[1]))
		}
		if a, b := json.RawMessage(mustJSON(t, notes[0])), json.RawMessage(mustJSON(t, notes[1])); string(a) != string(b) {
			t.Errorf("the notes differ: %s and %s", a, b)
		}
	}
}

func mustJSON(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
