package runtime_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/runtime"
)

// sessionState is a small workflow: the phase at /meta/phase, a ticket a
// step may write, and /meta, which an ungated step may break.
const sessionState = `{"meta": {"phase": "draft"}, "ticket": {"status": "open"}}`

func newSession(t *testing.T, state string) *runtime.Session {
	t.Helper()
	doc, err := runtime.ParseDocument([]byte(state))
	if err != nil {
		t.Fatal(err)
	}
	return runtime.NewSession(doc, runtime.MustPointer("/meta/phase"))
}

func TestSession(t *testing.T) {
	ctx := context.Background()
	draft := runtime.MustCompile(runtime.ContractSpec{
		View:   runtime.ViewSpec{Include: []string{""}},
		Write:  []string{"/ticket", "/meta"},
		Source: []string{"/ticket"},
		Phases: []string{"draft"},
	})
	tests := []struct {
		name     string
		state    string
		proposal string
		opts     runtime.StepOptions
		// want
		committed   bool
		code        string // the rejection's code, when rejected
		phase       string // the session's phase after the step
		status      string // /ticket/status after the step
		phaseError  bool
		phaseBroken bool
	}{
		{name: "commit and move the phase",
			proposal:  `[{"op": "replace", "path": "/ticket/status", "value": "closed"}]`,
			opts:      runtime.StepOptions{Gates: runtime.DefaultGates, AdvanceTo: "review"},
			committed: true, phase: "review", status: "closed"},
		{name: "commit without a phase move",
			proposal:  `[{"op": "replace", "path": "/ticket/status", "value": "closed"}]`,
			opts:      runtime.StepOptions{Gates: runtime.DefaultGates},
			committed: true, phase: "draft", status: "closed"},
		{name: "a rejection leaves state and phase",
			proposal: `[{"op": "replace", "path": "/nowhere", "value": 1}]`,
			opts:     runtime.StepOptions{Gates: runtime.DefaultGates, AdvanceTo: "review"},
			code:     runtime.CodeWriteOutside, phase: "draft", status: "open"},
		{name: "verified in the submit phase, the session's kept",
			proposal: `[{"op": "replace", "path": "/ticket/status", "value": "closed"}]`,
			opts:     runtime.StepOptions{Gates: runtime.DefaultGates, SubmitPhase: "review"},
			code:     runtime.CodePhaseNotAllowed, phase: "draft", status: "open"},
		{name: "the commit broke the phase's place",
			proposal:  `[{"op": "replace", "path": "/ticket/status", "value": "closed"}, {"op": "replace", "path": "/meta", "value": "gone"}]`,
			opts:      runtime.StepOptions{AdvanceTo: "review"},
			committed: true, phase: "draft", status: "closed", phaseError: true},
		{name: "the phase had no place before the commit either",
			state:     `{"meta": "draft", "ticket": {"status": "open"}}`,
			proposal:  `[{"op": "replace", "path": "/ticket/status", "value": "closed"}]`,
			opts:      runtime.StepOptions{AdvanceTo: "review"},
			committed: true, phase: "", status: "closed", phaseError: true, phaseBroken: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			state := tt.state
			if state == "" {
				state = sessionState
			}
			s := newSession(t, state)
			before := string(s.State().Bytes())
			res, err := s.Step(ctx, draft, []byte(tt.proposal), tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			code := ""
			if r := res.Rejection(); r != nil {
				code = r.Code
			}
			status, _ := s.State().Get(runtime.MustPointer("/ticket/status"))
			got := []any{res.Committed, code, s.Phase(), status, res.PhaseError != nil, res.PhaseBroken}
			want := []any{tt.committed, tt.code, tt.phase, tt.status, tt.phaseError, tt.phaseBroken}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("committed, code, phase, status, phase error, broken: mismatch (-want +got):\n%s", diff)
			}
			if !tt.committed && string(s.State().Bytes()) != before {
				t.Errorf("a rejection changed the state: %s", s.State().Bytes())
			}
			if tt.phaseError && !strings.Contains(res.PhaseError.Error(), "phase path /meta/phase") {
				t.Errorf("phase error %q does not name the phase path", res.PhaseError)
			}
			if tt.committed && !tt.phaseError && tt.opts.AdvanceTo != "" {
				if v, _ := s.State().Get(runtime.MustPointer("/meta/phase")); v != tt.opts.AdvanceTo {
					t.Errorf("the state holds phase %v, want %s", v, tt.opts.AdvanceTo)
				}
			}
		})
	}
}

// A workflow of two steps: each commit moves the phase, and the second
// step could not commit in the first step's phase.
func TestSessionWorkflow(t *testing.T) {
	ctx := context.Background()
	contract := func(phase string) *runtime.Contract {
		return runtime.MustCompile(runtime.ContractSpec{
			View: runtime.ViewSpec{Include: []string{"/ticket"}}, Write: []string{"/ticket/status"}, Phases: []string{phase},
		})
	}
	s := newSession(t, sessionState)
	steps := []struct {
		c             *runtime.Contract
		value, phase  string
		advance, want string
	}{
		{contract("draft"), "drafted", "draft", "review", "review"},
		{contract("review"), "reviewed", "review", "done", "done"},
	}
	for i, st := range steps {
		if s.Phase() != st.phase {
			t.Fatalf("step %d runs in phase %q, want %q", i, s.Phase(), st.phase)
		}
		p := fmt.Sprintf(`[{"op": "replace", "path": "/ticket/status", "value": %q}]`, st.value)
		res, err := s.Step(ctx, st.c, []byte(p), runtime.StepOptions{Gates: runtime.DefaultGates, AdvanceTo: st.advance})
		if err != nil || !res.Committed || res.PhaseError != nil {
			t.Fatalf("step %d: %v %+v", i, err, res.Gates)
		}
		if s.Phase() != st.want {
			t.Errorf("after step %d: phase %q, want %q", i, s.Phase(), st.want)
		}
	}
	if got := string(s.State().Bytes()); got != `{"meta":{"phase":"done"},"ticket":{"status":"reviewed"}}` {
		t.Errorf("final state %s", got)
	}
}

func TestSetString(t *testing.T) {
	doc, _ := runtime.ParseDocument([]byte(`{"a": {"b": "x"}, "n": [1, 2]}`))
	out, err := runtime.SetString(doc, runtime.MustPointer("/a/b"), "y")
	if err != nil || string(out.Bytes()) != `{"a":{"b":"y"},"n":[1,2]}` {
		t.Fatalf("%s %v", out.Bytes(), err)
	}
	if string(doc.Bytes()) != `{"a": {"b": "x"}, "n": [1, 2]}` {
		t.Errorf("the original changed: %s", doc.Bytes())
	}
	for _, p := range []string{"/a/c", "/n/5", "/a/b/c"} {
		if _, err := runtime.SetString(doc, runtime.MustPointer(p), "y"); err == nil {
			t.Errorf("%s: no error", p)
		}
	}
	if _, err := runtime.SetString(doc, nil, "y"); err == nil {
		t.Error("no phase path: no error")
	}
}
