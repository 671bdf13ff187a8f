package bench

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/runtime"
)

// AllGates is the gate set of the reference run and of PatchOptic: scope,
// phase, schema and invariants (paper §3.2).
var AllGates = runtime.DefaultGates

// SetPhase returns a copy of state with the string phase at path p, the
// runner's move of the workflow phase after a step with advance_to
// commits (PatchBench design §3). The parent of p must exist.
func SetPhase(state *runtime.Document, p runtime.Pointer, phase string) (*runtime.Document, error) {
	v, err := setAt(state.Value(), p, phase)
	if err != nil {
		return nil, fmt.Errorf("phase path %s: %w", p, err)
	}
	return runtime.NewDocument(v)
}

// setAt returns a copy of v with x at p, copying only the containers on
// the way down.
func setAt(v any, p runtime.Pointer, x any) (any, error) {
	if len(p) == 0 {
		return x, nil
	}
	switch c := v.(type) {
	case map[string]any:
		if _, ok := c[p[0]]; !ok && len(p) > 1 {
			return nil, fmt.Errorf("no member %q", p[0])
		}
		child, err := setAt(c[p[0]], p[1:], x)
		if err != nil {
			return nil, err
		}
		out := make(map[string]any, len(c)+1)
		for k, e := range c {
			out[k] = e
		}
		out[p[0]] = child
		return out, nil
	case []any:
		i, err := runtime.ParseIndex(p[0])
		if err != nil || i >= len(c) {
			return nil, fmt.Errorf("no element %q", p[0])
		}
		child, err := setAt(c[i], p[1:], x)
		if err != nil {
			return nil, err
		}
		out := append([]any(nil), c...)
		out[i] = child
		return out, nil
	}
	return nil, fmt.Errorf("%q is inside a scalar", p[0])
}

// ReferenceStep is what the reference run saw and did at one step.
type ReferenceStep struct {
	Step *Step
	// Before is the state the step's actor is shown (projected or not)
	// and its proposal is verified against; Phase is the workflow's
	// phase then.
	Before *runtime.Document
	Phase  string
	// Decision is the verifier's decision on the reference proposal
	// under AllGates.
	Decision *runtime.Decision
}

// ReferenceRun is the case run with every step's reference proposal, in
// order, under all gates (the run validate checks and the stress test
// submits artifacts along).
type ReferenceRun struct {
	Steps []ReferenceStep
	// Final is the state after the last step; FinalPhase its phase.
	Final      *runtime.Document
	FinalPhase string
	// Failed is the index of the first step whose reference proposal was
	// rejected, or whose phase move failed (PhaseError), or -1. Steps
	// after it are not run.
	Failed     int
	PhaseError string
}

// RunReference runs the reference proposals of c in order under AllGates,
// moving the phase on each commit with advance_to. A rejected step, or a
// phase that cannot be moved after a commit, stops the run (Failed); an
// error is returned only when verification itself fails (a cancelled
// context).
func RunReference(ctx context.Context, c *Case) (*ReferenceRun, error) {
	run := &ReferenceRun{Failed: -1}
	state, phase := c.State, c.InitialPhase()
	for _, s := range c.Steps {
		d, err := s.Contract.Verify(ctx, state, s.Reference, runtime.VerifyOptions{Gates: AllGates, Phase: phase})
		if err != nil {
			return nil, fmt.Errorf("case %s step %s: %w", c.ID, s.ID, err)
		}
		run.Steps = append(run.Steps, ReferenceStep{Step: s, Before: state, Phase: phase, Decision: d})
		if !d.Committed {
			run.Failed = s.Index
			break
		}
		state = d.State
		if s.AdvanceTo != "" {
			next, err := SetPhase(state, c.Workflow.PhasePath, s.AdvanceTo)
			if err != nil {
				// The step's commit removed the phase's parent: the case
				// is broken, and the run cannot go on.
				run.Failed, run.PhaseError = s.Index, err.Error()
				break
			}
			state, phase = next, s.AdvanceTo
		}
	}
	run.Final, run.FinalPhase = state, phase
	return run, nil
}

// At returns the reference run's record of the step with the given id,
// or nil when the run never reached it.
func (r *ReferenceRun) At(id string) *ReferenceStep {
	for i := range r.Steps {
		if r.Steps[i].Step.ID == id {
			return &r.Steps[i]
		}
	}
	return nil
}
