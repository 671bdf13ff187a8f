package rundir

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// richRecord is a record with everything a run can hold: texts full of
// quotes, braces, escapes and non-ASCII, passed and failed decisions,
// earlier attempts, leaks, illegal commits, an attack, a final state.
func richRecord(caseID string, round int, status string) *Record {
	r := rec(caseID, "patchoptic", round, status)
	r.Domain, r.Scale, r.Leaked, r.TokensSent, r.ContentScore = "finance", "10MB", true, 1234, 0.625
	r.Tokens = Usage{Prompt: 1000, Completion: 234, Source: "tokenizer:o200k_base"}
	r.Leaks = []scoring.Leak{{Secret: "pan", Where: scoring.WhereOutput, Detector: scoring.DetectExact, Step: "a"}, {Secret: "iban", Where: scoring.WhereState, Detector: scoring.DetectNormalised, Path: "/reply/0"}}
	r.Checks = []scoring.CheckResult{{ID: "c1", Step: "a", Path: "/x", Test: `equals "{\"held\":true}"`, Held: true}, {ID: "c2", Step: "b", Path: "/y", Test: "length {min: 1}"}}
	r.IllegalCommits = []IllegalCommit{{Step: "b", Gate: "scope", Code: "source_outside_region", Pointer: "/card/pan", Message: "operation 0 (copy) reads /card/pan"}}
	r.Attack = &Attack{Secrets: []string{"pan"}, Succeeded: true}
	msg := "step b attempt 2: \"quoted\" {not json"
	r.Error = &msg
	note := `{"note":"here is the state: {\"card\":{\"pan\":\"5412 7590\"}} ]}[{ \\\" é ✓ \u2028"}`
	pass := []runtime.GateResult{{Gate: "parse", Passed: true, Code: "ok"}, {Gate: "apply", Passed: true, Code: "ok"}}
	fail := []runtime.GateResult{{Gate: "parse", Passed: true, Code: "ok"}, {Gate: "scope", Code: "write_outside_region", Pointer: "/a~1b", Message: `writes "/a/b" {outside}`}}
	r.Steps = []StepRecord{
		{Step: "a", Phase: "review", Attempts: 1, Committed: true, Decisions: pass, Audit: fail, ViewDigest: "abc", ViewTokens: 99,
			RawResponse: note, Prompt: []Message{{Role: "system", Content: "You are {x}."}, {Role: "user", Content: note}},
			Patch: []runtime.Operation{{Op: "add", Path: runtime.Pointer{"a"}, Value: map[string]any{"k": "v\"}"}}}, Model: "m-1", LatencyMS: 5, Cached: true},
		{Step: "b", Phase: "review", Attempts: 2, Decisions: fail, Audit: fail, RawResponse: "[not json", Prompt: []Message{{Role: "user", Content: "}"}},
			Earlier: []Attempt{{RawResponse: note, Decisions: fail, Audit: fail}}, PhaseError: "phase path /p: \"gone\"", InheritedViolation: "schema: schema_violation",
			Ended: "context_exceeded", Turns: []Turn{{RequestDigest: "ab", Text: note, Calls: []ToolCall{{Name: "read_state", Arguments: note, Read: true, Hidden: true, Error: "absent", Result: "{]"}}},
				{Calls: []ToolCall{{Name: "propose_patch", Arguments: "{}", Result: "rejected"}}}, {}}},
		{Step: "c", Phase: "review", NotReached: true},
	}
	r.FinalState = json.RawMessage(`{"reply":["{\"not\":\"a member\"}"],"card":{"pan":"5412 7590"}}`)
	return r
}

// lean is what an index keeps of a record.
func lean(r *Record) *Record {
	c := *r
	c.Checks, c.FinalState = nil, nil
	c.Steps = nil
	for _, s := range r.Steps {
		l := StepRecord{Step: s.Step, Phase: s.Phase, Attempts: s.Attempts, Committed: s.Committed, Model: s.Model,
			NotReached: s.NotReached, PhaseError: s.PhaseError, InheritedViolation: s.InheritedViolation, Ended: s.Ended}
		for _, turn := range s.Turns {
			var calls []ToolCall
			for _, c := range turn.Calls {
				n := c.ResultBytes
				if c.Read && n == 0 {
					n = int64(len(c.Result)) // a read's size, for bytes read per step
				}
				calls = append(calls, ToolCall{Read: c.Read, Hidden: c.Hidden, Error: c.Error, ResultBytes: n})
			}
			l.Turns = append(l.Turns, Turn{Calls: calls})
		}
		for _, g := range s.Decisions {
			if !g.Passed {
				l.Decisions = s.Decisions
			}
		}
		for _, e := range s.Earlier {
			l.Earlier = append(l.Earlier, Attempt{Decisions: e.Decisions})
		}
		c.Steps = append(c.Steps, l)
	}
	return &c
}

func TestBuildIndex(t *testing.T) {
	for _, chunks := range []int{1, 3} {
		t.Run(fmt.Sprintf("%d chunks", chunks), func(t *testing.T) {
			defer func(f func(int64) int) { indexChunks = f }(indexChunks)
			indexChunks = func(int64) int { return chunks }
			dir := t.TempDir()
			recs := []*Record{richRecord("c1", 1, StatusFailed), rec("c2", "patchoptic", 1, StatusPassed), richRecord("c3", 1, StatusError),
				richRecord("c1", 2, StatusPassed), rec("c4", "patchoptic", 1, StatusPending)}
			retried := richRecord("c2", 1, StatusFailed) // a retry: the last line of a run id is the run
			writeRecords(t, dir, append(recs, retried)...)
			appendRaw(t, dir, `{"run_id":"c9/patchoptic/reference/1","case":"c9","con`) // cut short by a crash
			ix, err := BuildIndex(dir, nil)
			if err != nil {
				t.Fatal(err)
			}
			// The lean scan follows every whole line (none falls back
			// to a full decode).
			b, _ := os.ReadFile(filepath.Join(dir, RunsFile))
			for _, line := range strings.SplitAfter(string(b), "\n") {
				if strings.HasSuffix(line, "\n") {
					if _, _, _, err := (&leanDecoder{}).decode([]byte(line), true); err != nil {
						t.Errorf("decode: %v on %s", err, line)
					}
				}
			}
			want := []*Record{recs[0], retried, recs[2], recs[3], recs[4]}
			if ix.Len() != len(want) {
				t.Fatalf("%d runs indexed, want %d", ix.Len(), len(want))
			}
			for i, w := range want {
				e := ix.Entry(i)
				wh := lean(w)
				wh.Leaks = compactLeaks(slices.Clone(w.Leaks))
				if diff := cmp.Diff(wh, e.Head); diff != "" {
					t.Errorf("head %d mismatch (-want +got):\n%s", i, diff)
				}
				if e.NLeaks != len(w.Leaks) {
					t.Errorf("run %s: NLeaks %d, want %d", w.RunID, e.NLeaks, len(w.Leaks))
				}
				if held := 0; e.NChecks != len(w.Checks) {
					t.Errorf("run %s: %d checks, want %d", w.RunID, e.NChecks, len(w.Checks))
				} else {
					for _, c := range w.Checks {
						if c.Held {
							held++
						}
					}
					if e.NHeld != held {
						t.Errorf("run %s: %d held, want %d", w.RunID, e.NHeld, held)
					}
				}
				got, err := ix.Load(i)
				if err != nil {
					t.Fatal(err)
				}
				if got.RunID != w.RunID || len(got.Steps) != len(w.Steps) || string(got.FinalState) != string(w.FinalState) ||
					(len(w.Steps) > 0 && got.Steps[0].RawResponse != w.Steps[0].RawResponse) {
					t.Errorf("Load(%d) is not run %s whole", i, w.RunID)
				}
			}
			if i, ok := ix.Lookup(retried.RunID); !ok || i != 1 {
				t.Errorf("Lookup(%s) = %d, %v; want 1 (the place of its first line)", retried.RunID, i, ok)
			}
			ix.Trim()
			if got, err := ix.Load(2); err != nil || got.RunID != recs[2].RunID {
				t.Errorf("after Trim, Load(2) = %v, %v", got, err)
			}
		})
	}
}

func TestBuildIndexErrors(t *testing.T) {
	defer func(f func(int64) int) { indexChunks = f }(indexChunks)
	indexChunks = func(int64) int { return 4 }
	dir := t.TempDir()
	var recs []*Record
	for i := 1; i <= 40; i++ {
		recs = append(recs, richRecord(fmt.Sprintf("c%d", i), 1, StatusPassed))
	}
	writeRecords(t, dir, recs...)
	// A line that is not a record, in the last chunk: its error names
	// its line in the file, whichever chunk found it.
	appendRaw(t, dir, "{\"run_id\":\"x\"}\n")
	b, _ := os.ReadFile(filepath.Join(dir, RunsFile))
	if n := strings.Count(string(b), "\n"); n != 41 {
		t.Fatalf("%d lines", n)
	}
	_, err := BuildIndex(dir, nil)
	var le41 *LineError
	if !errors.As(err, &le41) || le41.Line != 41 || codeOf(err) != CodeNotARecord {
		t.Errorf("err = %v, want one at line 41", err)
	}
	// A record of another case set is refused as Read refuses it.
	dir2 := t.TempDir()
	writeRecords(t, dir2, recs[:3]...)
	m := &Manifest{CaseIDs: []string{"c1", "c2"}, Configs: []string{"patchoptic"}, Actors: []string{"reference"}, Spec: runspec.Spec{Rounds: 1}}
	_, err = BuildIndex(dir2, m)
	var le3 *LineError
	var out *OutsideRunError
	if !errors.As(err, &le3) || le3.Line != 3 || !errors.As(err, &out) || *out != (OutsideRunError{RunID: "c3/patchoptic/reference/1", Member: "case", Value: "c3"}) {
		t.Errorf("err = %v", err)
	}
	// No runs.jsonl: no run.
	if ix, err := BuildIndex(t.TempDir(), nil); err != nil || ix.Len() != 0 {
		t.Errorf("an empty directory: %v, %v", ix, err)
	}
}

func TestChunkBounds(t *testing.T) {
	text := "aaaa\nbb\ncccccccc\nd\n\neeeeeeeeeeeeeeee\n"
	for n := 1; n <= 8; n++ {
		b, err := chunkBounds(strings.NewReader(text), int64(len(text)), n)
		if err != nil {
			t.Fatal(err)
		}
		if b[0] != 0 || b[len(b)-1] != int64(len(text)) || len(b) > n+1 {
			t.Errorf("n=%d: bounds %v", n, b)
		}
		for _, off := range b[1 : len(b)-1] {
			if text[off-1] != '\n' {
				t.Errorf("n=%d: a chunk starts at %d, not after a line end", n, off)
			}
		}
	}
}

// EachHead gives what Each gives, as an index keeps it: the last record of
// each run, in the order of the file, across chunks, with a last line cut
// short by a crash left out.
func TestEachHead(t *testing.T) {
	dir := t.TempDir()
	m := Manifest{Module: "m", CaseIDs: []string{"c0", "c1", "c2", "c3", "c4"}, Configs: []string{"patchoptic"}, Actors: []string{"reference"}, Spec: runspec.Spec{Rounds: 3}}
	if err := WriteJSON(dir, ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	var recs []*Record
	for i := range 12 {
		recs = append(recs, richRecord(fmt.Sprintf("c%d", i%5), 1+i%3, []string{StatusPassed, StatusFailed, StatusError}[i%3]))
	}
	recs = append(recs, richRecord("c1", 2, StatusPassed)) // c1 round 2 again: this line wins
	writeRecords(t, dir, recs...)
	f, err := os.OpenFile(filepath.Join(dir, RunsFile), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"run_id":"c4/patchoptic/reference/3","case":"c4","con`) // a crash mid-write
	f.Close()
	defer func(f func(int64) int) { indexChunks = f }(indexChunks)
	for _, chunks := range []int{1, 3} {
		indexChunks = func(int64) int { return chunks }
		d, err := Read(dir)
		if err != nil {
			t.Fatal(err)
		}
		var want, got []*Record
		if err := d.Each(func(r *Record) error { want = append(want, lean(r)); return nil }); err != nil {
			t.Fatal(err)
		}
		if err := d.EachHead(func(r *Record) error { got = append(got, r); return nil }); err != nil {
			t.Fatal(err)
		}
		if len(want) != d.Runs() || len(want) != 12 {
			t.Fatalf("%d chunks: Each gave %d runs of %d; want 12", chunks, len(want), d.Runs())
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("%d chunks: heads (-Each +EachHead):\n%s", chunks, diff)
		}
		stop := errors.New("stop")
		n := 0
		if err := d.EachHead(func(*Record) error { n++; return stop }); err != stop || n != 1 {
			t.Fatalf("fn's error: %v after %d calls", err, n)
		}
	}
}

// Read reports a damaged line before a record of another run, wherever
// each is, and names both by line and byte offset.
func TestReadErrorOrder(t *testing.T) {
	dir := t.TempDir()
	m := Manifest{Module: "m", CaseIDs: []string{"a"}, Configs: []string{"x"}, Actors: []string{"reference"}, Spec: runspec.Spec{Rounds: 1}}
	if err := WriteJSON(dir, ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 8 {
		r := rec("a", "x", 1, StatusPassed)
		if i == 1 {
			r = rec("b", "x", 1, StatusPassed) // another case, early
		}
		b, _ := json.Marshal(r)
		lines = append(lines, string(b))
	}
	lines[6] = `{"run_id": "a/x/reference/1", "case": ` // damaged, late
	path := filepath.Join(dir, RunsFile)
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	offset7 := len(strings.Join(lines[:6], "\n")) + 1
	defer func(f func(int64) int) { indexChunks = f }(indexChunks)
	for _, chunks := range []int{1, 2, 4} {
		indexChunks = func(int64) int { return chunks }
		_, err := Read(dir)
		var le *LineError
		if !errors.As(err, &le) || le.Line != 7 || le.Offset != int64(offset7) || le.RepairCommand() != "patchbench repair "+dir || codeOf(err) != CodeDamagedLine {
			t.Fatalf("%d chunks: %v; want the damaged line 7 at byte %d", chunks, err, offset7)
		}
	}
	lines[6] = lines[0]
	os.WriteFile(path, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	for _, chunks := range []int{1, 2, 4} {
		indexChunks = func(int64) int { return chunks }
		_, err := Read(dir)
		var le *LineError
		if !errors.As(err, &le) || le.Line != 2 || le.Offset != int64(len(lines[0])+1) || codeOf(err) != CodeOutsideRun {
			t.Fatalf("%d chunks: %v; want line 2, another case", chunks, err)
		}
	}
}

// TestIndexCompactsLeaks checks that an index keeps, of a record's leaks,
// one for each kind, mechanism, detector, field, step and where (a
// leak's route), at most MaxIndexedLeaks, their secrets and paths
// dropped, and counts them all (NLeaks):
// 200 lines of 99,000 leaks took browse to 3.45 GB.
func TestIndexCompactsLeaks(t *testing.T) {
	dir := t.TempDir()
	r := rec("c1", "patchoptic", 1, StatusFailed)
	for i := 0; i < 5000; i++ {
		r.Leaks = append(r.Leaks, scoring.Leak{Secret: fmt.Sprint("s", i), Where: "state", Path: fmt.Sprint("/a/", i), Detector: "exact", Kind: "pan", Mechanism: "context"})
	}
	r.Leaks = append(r.Leaks, scoring.Leak{Secret: "m", Where: "output", Detector: "exact", Step: "s1", Field: scoring.FieldModel, Kind: "pan", Mechanism: "injection"})
	for i := 0; i < 100; i++ {
		r.Leaks = append(r.Leaks, scoring.Leak{Secret: "k", Where: "state", Detector: "exact", Kind: fmt.Sprint("kind", i), Mechanism: "none"})
	}
	r.Leaked = true
	writeRecords(t, dir, r)
	ix, err := BuildIndex(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := ix.Entry(0)
	if e.NLeaks != 5101 || len(e.Head.Leaks) != MaxIndexedLeaks {
		t.Fatalf("NLeaks %d, %d kept; want 5101 and %d", e.NLeaks, len(e.Head.Leaks), MaxIndexedLeaks)
	}
	want := []scoring.Leak{{Where: "state", Detector: "exact", Kind: "pan", Mechanism: "context"},
		{Where: "output", Detector: "exact", Step: "s1", Field: scoring.FieldModel, Kind: "pan", Mechanism: "injection"},
		{Where: "state", Detector: "exact", Kind: "kind0", Mechanism: "none"}}
	if diff := cmp.Diff(want, e.Head.Leaks[:3]); diff != "" {
		t.Errorf("kept leaks (-want +got):\n%s", diff)
	}
}
