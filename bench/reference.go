package bench

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/runtime"
)

// The reference run of a case and the submission of one proposal to one
// step: the case's data run through the runtime's step engine
// (runtime.Session), as validate, the stress test, footprint and casestep
// use it.

// ReferenceStep is what the reference run saw and did at one step.
type ReferenceStep struct {
	Step *Step
	// Before is the state the step's actor is shown (projected or not)
	// and its proposal is verified against; Phase is the workflow's
	// phase then.
	Before *runtime.Document
	Phase  string
	// Proposal is the reference proposal the step submitted
	// (Step.ReferenceAt on Before).
	Proposal []byte
	// Decision is the verifier's decision on the reference proposal
	// under AllGates; nil when the proposal could not be generated
	// (ReferenceRun.RuleError).
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
	// rejected, whose phase move failed (PhaseError), or whose proposal
	// could not be generated (RuleError), or -1. Steps
	// after it are not run.
	Failed     int
	PhaseError string
	// RuleError says why the failed step's reference proposal could not
	// be generated (a rule of its patch could not be evaluated or gave
	// no list of operations); "" otherwise.
	RuleError string
}

// RunReference runs the reference proposals of c in order under
// AllGates in one runtime.Session, which moves the phase on each
// commit with advance_to. A rejected step, or a phase that cannot be
// moved after a commit, stops the run (Failed); an error is returned only
// when verification itself fails (a cancelled context).
func RunReference(ctx context.Context, c *Case) (*ReferenceRun, error) {
	run := &ReferenceRun{Failed: -1}
	sess := runtime.NewSession(c.State, c.Workflow.PhasePath)
	for _, s := range c.Steps {
		before, phase := sess.State(), sess.Phase()
		proposal, err := s.ReferenceAt(before)
		if err != nil {
			run.Steps = append(run.Steps, ReferenceStep{Step: s, Before: before, Phase: phase})
			run.Failed, run.RuleError = s.Index, err.Error()
			break
		}
		res, err := sess.Step(ctx, s.Contract, proposal, runtime.StepOptions{Gates: AllGates, AdvanceTo: s.AdvanceTo})
		if err != nil {
			return nil, fmt.Errorf("case %s step %s: %w", c.ID, s.ID, err)
		}
		run.Steps = append(run.Steps, ReferenceStep{Step: s, Before: before, Phase: phase, Proposal: proposal, Decision: res.Decision})
		if !res.Committed {
			run.Failed = s.Index
			break
		}
		if res.PhaseError != nil {
			// The step's commit removed the phase's place: the case is
			// broken, and the run cannot go on.
			run.Failed, run.PhaseError = s.Index, res.PhaseError.Error()
			break
		}
	}
	run.Final, run.FinalPhase = sess.State(), sess.Phase()
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

// Submit verifies a proposal for step s against the state before it in a
// session of its own, in phase, with gates: how validate and the stress
// test submit an artifact or the follower's answer without changing the
// reference run. The error is non-nil only when ctx is cancelled.
func (s *Step) Submit(ctx context.Context, before *runtime.Document, proposal []byte, gates runtime.GateSet, phase string) (*runtime.Decision, error) {
	res, err := runtime.NewSession(before, nil).Step(ctx, s.Contract, proposal, runtime.StepOptions{Gates: gates, SubmitPhase: phase})
	if err != nil {
		return nil, err
	}
	return res.Decision, nil
}

// GatesAlone verifies a proposal to step s on state in phase once with
// no optional gate and once with each optional gate on its own, and
// returns, for each gate that rejects it, the rejection code (gate name to
// code; a gate that accepts it is absent). Parse and apply are judged from
// the run with no optional gate. An artifact's caught_by is exactly the
// gates it returns (validate checks it on the case set; patchbench stress
// checks it again on the verifier it runs).
func (s *Step) GatesAlone(ctx context.Context, state *runtime.Document, proposal []byte, phase string) (map[string]string, error) {
	out := map[string]string{}
	none, err := s.Submit(ctx, state, proposal, runtime.GateSet{}, phase)
	if err != nil {
		return nil, err
	}
	for _, g := range none.Gates {
		if !g.Passed {
			out[g.Gate] = g.Code
		}
	}
	if out[runtime.GateParse] != "" {
		return out, nil
	}
	for _, name := range []string{runtime.GateScope, runtime.GateACL, runtime.GatePhase, runtime.GateSchema, runtime.GateInvariants} {
		gs, err := runtime.GatesFromList([]string{name})
		if err != nil {
			return nil, err
		}
		d, err := s.Submit(ctx, state, proposal, gs, phase)
		if err != nil {
			return nil, err
		}
		if r := d.Gate(name); r != nil && !r.Passed {
			out[name] = r.Code
		}
	}
	return out, nil
}
