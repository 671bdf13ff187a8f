package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
)

// toolsRecord is a failed run of the tools protocol: one step of two
// turns, a read inside the view, a read of a hidden location answered as
// absent, and a rejected proposal that spent the step's proposals.
func toolsRecord(cfg string) *rundir.Record {
	return &rundir.Record{RunID: "c/" + cfg + "/a/1", Case: "c", Config: cfg, Actor: "a", Round: 1, Status: rundir.StatusFailed,
		Steps: []rundir.StepRecord{{Step: "s", Attempts: 1, Ended: "attempts_spent", Turns: []rundir.Turn{
			{RequestDigest: "ab", Text: "Let me look.", Calls: []rundir.ToolCall{
				{Name: "read_state", Arguments: `{"pointer":"/a"}`, Read: true, Pointer: "/a", Result: "1"},
				{Name: "read_state", Arguments: `{"pointer":"/secret"}`, Read: true, Pointer: "/secret", Hidden: true, Error: "absent", Result: "error: absent: nothing"},
			}},
			{RequestDigest: "cd", Calls: []rundir.ToolCall{{Name: "propose_patch", Arguments: `{"patch":[],"note":"x"}`, Result: "rejected (proposal 1 of 1):\n- scope: x"}}, DroppedCalls: 2},
		}}}}
}

func TestToolsTableAndConversation(t *testing.T) {
	cfgs := []*bench.Config{{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}, {Name: "unconstrained", Label: "Unconstrained", View: bench.ViewFull}}
	s := NewSummarizer(cfgs, []string{"a"})
	s.Add(toolsRecord("patchoptic"))
	s.Add(&rundir.Record{RunID: "c/unconstrained/a/1", Case: "c", Config: "unconstrained", Actor: "a", Round: 1, Status: rundir.StatusPassed,
		Steps: []rundir.StepRecord{{Step: "s", Attempts: 1, Committed: true}}})
	tab := ToolsTable(s.Summary())
	if len(tab.Rows) != 1 {
		t.Fatalf("rows %v: a row of the json protocol has no tools figures", tab.Rows)
	}
	want := []string{"PatchOptic", "a", "1", "2.00", "3.00", "2", "1 (1)", "23", "attempts_spent 1"}
	if got := tab.Rows[0]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("row %q, want %q", got, want)
	}
	var b bytes.Buffer
	WriteTrace(&b, toolsRecord("patchoptic"), nil, cfgs[0], TraceOptions{})
	for _, w := range []string{"conversation (2 turns; ended without a commit: attempts_spent)", `read_state "/a": inside the view`,
		`read_state "/secret": HIDDEN from the view: answered as absent`, "text (12 bytes):", "2 more calls not run", "        - scope: x"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("trace lacks %q:\n%s", w, b.String())
		}
	}
}
