package rundir

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// emptyListLine is a record line whose list member (steps, leaks) holds
// n empty objects: a few bytes each, but a whole Go value each once
// decoded.
func emptyListLine(t *testing.T, member string, n int) string {
	t.Helper()
	b, err := json.Marshal(rec("c9", "patchoptic", 1, StatusFailed))
	if err != nil {
		t.Fatal(err)
	}
	list := "[" + strings.TrimSuffix(strings.Repeat("{},", n), ",") + "]"
	line := strings.Replace(string(b), `"`+member+`":null`, `"`+member+`":`+list, 1)
	if line == string(b) {
		t.Fatalf("no %s member in %s", member, b)
	}
	return line + "\n"
}

// zerosLine is a record line whose leaks are n zeros (25 million in a
// patch's value took 1.9 GB).
func zerosLine(t *testing.T, n int) string {
	t.Helper()
	line := emptyListLine(t, "leaks", 0)
	return strings.Replace(line, `"leaks":[]`, `"leaks":[`+strings.TrimSuffix(strings.Repeat("0,", n), ",")+`]`, 1)
}

// pointerLine is a record line whose one step's patch removes a path of
// n slashes, n reference tokens (the fifth attack's was 50 million: 1.8
// GB).
func pointerLine(t *testing.T, n int) string {
	t.Helper()
	line := emptyListLine(t, "steps", 0)
	return strings.Replace(line, `"steps":[]`, `"steps":[{"step":"s","patch":[{"op":"remove","path":"`+strings.Repeat("/", n)+`"}]}]`, 1)
}

// scalarsOf counts the strings, numbers, booleans and nulls of a decoded
// JSON value (member names aside).
func scalarsOf(v any) int {
	switch v := v.(type) {
	case map[string]any:
		n := 0
		for _, e := range v {
			n += scalarsOf(e)
		}
		return n
	case []any:
		n := 0
		for _, e := range v {
			n += scalarsOf(e)
		}
		return n
	}
	return 1
}

// containersOf counts the objects and arrays of a line without strings.
func containersOf(line string) int { return strings.Count(line, "{") + strings.Count(line, "[") }

// TestRecordShapeRefused: a line past MaxRecordContainers objects and
// arrays, MaxRecordSteps steps or MaxRecordDepth levels is refused by every
// reader with its line and offset, before it is decoded (a 3 MB line of a
// million empty steps cost 1.7 GB in every reader; 99,000 steps under the
// first bound still cost 225-770 MB; a final state a million levels deep 373
// MB); one at each bound is read.
func TestRecordShapeRefused(t *testing.T) {
	base := containersOf(emptyListLine(t, "leaks", 0))
	// The values of a line whose leaks are [] (its null replaced).
	var v any
	if err := json.Unmarshal([]byte(emptyListLine(t, "leaks", 0)), &v); err != nil {
		t.Fatal(err)
	}
	valuesBase := scalarsOf(v)
	for _, tc := range []struct {
		name     string
		ok, over string
		cause    error
	}{
		{"containers", emptyListLine(t, "leaks", MaxRecordContainers-base), emptyListLine(t, "leaks", MaxRecordContainers-base+1), ErrTooManyContainers},
		{"steps", emptyListLine(t, "steps", MaxRecordSteps), emptyListLine(t, "steps", MaxRecordSteps+1), ErrTooManySteps},
		{"depth", deepStateLine(t, MaxRecordDepth), deepStateLine(t, MaxRecordDepth+1), ErrTooDeep},
		{"values", zerosLine(t, MaxRecordValues-valuesBase), zerosLine(t, MaxRecordValues-valuesBase+1), ErrTooManyValues},
		{"pointer tokens", pointerLine(t, MaxRecordPointerTokens), pointerLine(t, MaxRecordPointerTokens+1), ErrTooManyPointerTokens},
	} {
		dir := t.TempDir()
		writeRecords(t, dir, rec("c1", "patchoptic", 1, StatusPassed))
		appendRaw(t, dir, tc.ok)
		if err := checkContainers([]byte(tc.ok)); err != nil {
			t.Errorf("%s: at the bound: %v", tc.name, err)
		}
		dir = t.TempDir()
		writeRecords(t, dir, rec("c1", "patchoptic", 1, StatusPassed))
		first := fileSize(t, filepath.Join(dir, RunsFile))
		appendRaw(t, dir, tc.over)
		var le *LineError
		_, rd := readAll(t, filepath.Join(dir, RunsFile))
		if !errors.As(rd.Err(), &le) || le.Line != 2 || le.Offset != first || !errors.Is(rd.Err(), tc.cause) {
			t.Errorf("%s: Reader: %v; want line 2 at byte %d, %v", tc.name, rd.Err(), first, tc.cause)
		}
		if _, err := BuildIndex(dir, nil); !errors.As(err, &le) || le.Line != 2 || !errors.Is(err, tc.cause) {
			t.Errorf("%s: BuildIndex: %v", tc.name, err)
		}
	}
}

// deepStateLine is a record line whose final state nests so that the
// line's deepest container is at depth n (the record itself at 1).
func deepStateLine(t *testing.T, n int) string {
	t.Helper()
	b, _ := json.Marshal(rec("c9", "patchoptic", 1, StatusFailed))
	state := strings.Repeat("[", n-1) + strings.Repeat("]", n-1)
	return strings.TrimSuffix(string(b), "}") + `,"final_state":` + state + "}\n"
}

// TestCheckContainersCountsTheFinalStateApart: the objects of a record's
// final_state (kept as text) count against their own bound, not the
// record's, wherever the final state stands among the members; a member
// named final_state deeper in the record counts as the record's.
func TestCheckContainersCountsTheFinalStateApart(t *testing.T) {
	state := func(n int) string {
		return `{"a":[` + strings.TrimSuffix(strings.Repeat(`{"x":"}{["},`, n-2), ",") + `]}`
	}
	leaks := `[` + strings.TrimSuffix(strings.Repeat(`{},`, MaxRecordContainers-3), ",") + `]`
	for _, line := range []string{
		`{"run_id":"x","final_state":` + state(MaxRecordContainers) + `,"leaks":` + leaks + `}`,
		`{"final_state":` + state(MaxRecordContainers) + `,"steps":[{}]}`,
		`{"steps":[],"final_state": ` + state(MaxRecordContainers) + ` }`,
		`{"final_state":null,"leaks":` + leaks + `}`,
	} {
		if err := checkContainers([]byte(line)); err != nil {
			t.Errorf("%.40s...: %v", line, err)
		}
	}
	for _, line := range []string{
		`{"final_state":` + state(MaxRecordContainers+1) + `}`,
		`{"steps":[{"final_state":` + state(MaxRecordContainers) + `}]}`, // not the record's own member
		`{"steps":[{"decisions":[` + strings.TrimSuffix(strings.Repeat(`{"message":"\"{"},`, MaxRecordContainers), ",") + `]}]}`,
	} {
		if err := checkContainers([]byte(line)); !errors.Is(err, ErrTooManyContainers) {
			t.Errorf("%.40s...: %v", line, err)
		}
	}
}

// TestIndexKeepsOneEntryPerRun: copies of one record's line take one
// entry of a chunk as they are read, not one per line (two
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
// refused with its line, so that no sum wraps around.
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
