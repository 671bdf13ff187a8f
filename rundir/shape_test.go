package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// emptyStepsLine is a record line whose steps are n empty objects: a few
// bytes each, but a whole StepRecord each once decoded.
func emptyStepsLine(t *testing.T, n int) string {
	t.Helper()
	b, err := json.Marshal(rec("c9", "patchoptic", 1, StatusFailed))
	if err != nil {
		t.Fatal(err)
	}
	steps := "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
	return strings.Replace(string(b), `"steps":null`, `"steps":`+steps, 1) + "\n"
}

// TestRecordOfManyContainersRefused: a line of more than
// MaxRecordContainers objects and arrays is refused by every reader with
// its line and offset, before it is decoded (issue 23: 1M empty steps, a
// 3 MB line, cost 1.7 GB in every reader); one at the limit is read.
func TestRecordOfManyContainersRefused(t *testing.T) {
	dir := t.TempDir()
	writeRecords(t, dir, rec("c1", "patchoptic", 1, StatusPassed))
	base := strings.Count(emptyStepsLine(t, 0), "{") + strings.Count(emptyStepsLine(t, 0), "[")
	ok := emptyStepsLine(t, MaxRecordContainers-base) // the record's own objects and arrays count
	appendRaw(t, dir, ok)
	lines, rd := readAll(t, filepath.Join(dir, RunsFile))
	if rd.Err() != nil || len(lines) != 2 {
		t.Fatalf("at the limit: %v, %v", lines, rd.Err())
	}

	dir = t.TempDir()
	writeRecords(t, dir, rec("c1", "patchoptic", 1, StatusPassed))
	first := fileSize(t, filepath.Join(dir, RunsFile))
	appendRaw(t, dir, emptyStepsLine(t, MaxRecordContainers-base+1))
	var le *LineError
	_, rd = readAll(t, filepath.Join(dir, RunsFile))
	if !errors.As(rd.Err(), &le) || le.Line != 2 || le.Offset != first || !errors.Is(rd.Err(), ErrTooManyContainers) {
		t.Errorf("Reader: %v; want line 2 at byte %d, ErrTooManyContainers", rd.Err(), first)
	}
	if _, err := BuildIndex(dir, nil); !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, ErrTooManyContainers) {
		t.Errorf("BuildIndex: %v", err)
	}
}

// TestCheckContainersSkipsTheFinalState: the objects of a record's
// final_state (kept as text) do not count; those of its other members do,
// wherever the final state stands among them.
func TestCheckContainersSkipsTheFinalState(t *testing.T) {
	state := `{"a":[` + strings.TrimSuffix(strings.Repeat(`{"x":"}{["},`, MaxRecordContainers), ",") + `]}`
	for _, line := range []string{
		`{"run_id":"x","final_state":` + state + `}`,
		`{"final_state":` + state + `,"steps":[{}]}`,
		`{"steps":[],"final_state": ` + state + ` }`,
	} {
		if err := checkContainers([]byte(line)); err != nil {
			t.Errorf("%.40s...: %v", line, err)
		}
	}
	nested := `{"steps":[{"decisions":[` + strings.TrimSuffix(strings.Repeat(`{"message":"\"{"},`, MaxRecordContainers), ",") + `]}]}`
	if err := checkContainers([]byte(nested)); !errors.Is(err, ErrTooManyContainers) {
		t.Errorf("decisions: %v", err)
	}
	inner := `{"steps":[{"final_state":` + state + `}]}` // not the record's own member
	if err := checkContainers([]byte(inner)); !errors.Is(err, ErrTooManyContainers) {
		t.Errorf("a step's final_state: %v", err)
	}
}

// TestIndexKeepsOneEntryPerRun: copies of one record's line take one
// entry of a chunk as they are read, not one per line (issue 23: two
// million copies took 1.7 GB), and the last copy's line is kept.
func TestIndexKeepsOneEntryPerRun(t *testing.T) {
	dir := t.TempDir()
	r := rec("c1", "patchoptic", 1, StatusPassed)
	b, _ := json.Marshal(r)
	text := strings.Repeat(string(b)+"\n", 5000)
	if err := os.WriteFile(filepath.Join(dir, RunsFile), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	c := scanChunk(strings.NewReader(text), 0, true, scanOptions{})
	if c.err != nil || len(c.entries) != 1 || c.entries[0].Line != 5000 {
		t.Fatalf("%d entries (line %d), %v", len(c.entries), c.entries[0].Line, c.err)
	}
	ix, err := BuildIndex(dir, nil)
	if err != nil || ix.Len() != 1 || ix.Entry(0).Line != 5000 {
		t.Fatalf("%v, %v", ix, err)
	}
}

// TestRecordTokenCountsBounded: a token count above MaxRecordedTokens is
// refused with its line, so that no sum wraps around (issue 23).
func TestRecordTokenCountsBounded(t *testing.T) {
	for _, set := range []func(r *Record){
		func(r *Record) { r.Tokens.Prompt = 1<<63 - 1 },
		func(r *Record) { r.Tokens.Completion = MaxRecordedTokens + 1 },
		func(r *Record) { r.TokensSent = 1<<63 - 1 },
		func(r *Record) { r.TokensSent = -1 },
	} {
		dir := t.TempDir()
		writeRecords(t, dir, rec("c1", "patchoptic", 1, StatusPassed))
		r := rec("c2", "patchoptic", 1, StatusPassed)
		set(r)
		b, _ := json.Marshal(r)
		appendRaw(t, dir, string(b)+"\n")
		var le *LineError
		if _, rd := readAll(t, filepath.Join(dir, RunsFile)); !errors.As(rd.Err(), &le) || le.Line != 2 || !strings.Contains(rd.Err().Error(), "token count outside") {
			t.Errorf("%s: %v", b, rd.Err())
		}
	}
	r := rec("c1", "patchoptic", 1, StatusPassed)
	r.Tokens.Prompt, r.TokensSent = MaxRecordedTokens, MaxRecordedTokens
	if err := checkRecord(r); err != nil {
		t.Errorf("at the bound: %v", err)
	}
}
