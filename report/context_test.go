package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
)

// TestStepsEndedContext: a step that ended as context_exceeded is counted
// in the tools table in either protocol: a row of json-protocol runs
// alone gets "-" for the agent-loop figures, and a tools run's step that
// ended before its first turn counts beside the steps with turns; show
// says how the step ended.
func TestStepsEndedContext(t *testing.T) {
	cfgs := []*bench.Config{{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}, {Name: "unconstrained", Label: "Unconstrained", View: bench.ViewFull}}
	jsonRun := &rundir.Record{RunID: "c/unconstrained/a/1", Case: "c", Config: "unconstrained", Actor: "a", Round: 1, Status: rundir.StatusFailed,
		Steps: []rundir.StepRecord{{Step: "s", Phase: "open", Ended: "context_exceeded", Prompt: []rundir.Message{{Role: "user", Content: "the view"}}}}}
	tools := toolsRecord("patchoptic")
	tools.Steps = append(tools.Steps, rundir.StepRecord{Step: "t", Ended: "context_exceeded"})
	s := NewSummarizer(cfgs, []string{"a"})
	s.Add(tools)
	s.Add(jsonRun)
	sum := s.Summary()
	tab := ToolsTable(sum)
	want := [][]string{
		{"PatchOptic", "a", "1", "2.00", "3.00", "2", "1 (1)", "23", "attempts_spent 1, context_exceeded 1"},
		{"Unconstrained", "a", "1", "-", "-", "-", "-", "-", "context_exceeded 1"},
	}
	if len(tab.Rows) != len(want) {
		t.Fatalf("rows %q", tab.Rows)
	}
	for i, w := range want {
		if got := tab.Rows[i]; strings.Join(got, "|") != strings.Join(w, "|") {
			t.Errorf("row %d %q, want %q", i, got, w)
		}
	}
	if d := tab.Data.Rows[1]; d[4] != nil || d[9] != nil || d[10] != "context_exceeded 1" {
		t.Errorf("data row %v", d)
	}
	if got := sum.Rows[1].StepsEnded["context_exceeded"]; got != 1 || sum.Rows[1].Tools != nil {
		t.Errorf("json row: steps ended %v, tools %+v", sum.Rows[1].StepsEnded, sum.Rows[1].Tools)
	}
	var b bytes.Buffer
	WriteTrace(&b, jsonRun, nil, cfgs[1], TraceOptions{})
	if w := "no answer (ended without a commit: context_exceeded) after 0 attempts"; !strings.Contains(b.String(), w) {
		t.Errorf("trace lacks %q:\n%s", w, b.String())
	}
}
