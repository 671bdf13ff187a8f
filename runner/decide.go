package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/runtime"
)

// decider decides the proposals of one step on the run's session: the
// answers of the json protocol and propose_patch's calls alike.
type decider struct {
	sess   *runtime.Session
	gates  runtime.GateSet // the configuration's gates
	step   *bench.Step
	submit string // the phase a replayed artifact is submitted in ("" for the session's)
	// maxAnswer is the answer limit in bytes, which an over-size
	// answer's rejection names.
	maxAnswer int64
}

// verdict is a proposal decided: the answer that carried it, the
// session's result and, for a commit that the audit rejects, whose
// violation it is (ownViolation): own, the step's illegal commit, or
// inherited, what the state before it already broke.
type verdict struct {
	resp      actors.Response
	res       runtime.StepResult
	own       *runtime.GateResult
	inherited string
}

// decide runs an answer through the session: the configuration's gates
// decide, and the step's full contract is audited beside them (the
// illegal commits of docs/run.md), and a commit the audit rejects is
// judged the step's own or inherited (ownViolation). An answer over the
// answer limit (Response.Oversize), or one in which the proposal cannot
// be found within the step's work-time limit (ExtractProposal), is
// rejected at the parse gate with limit_exceeded, without reaching the
// verifier: the actor's fault, as any rejection is. The error is ctx's,
// when it ends.
func (d *decider) decide(ctx context.Context, resp actors.Response) (verdict, error) {
	v := verdict{resp: resp}
	before, phase := d.sess.State(), d.sess.Phase()
	res, err := d.stepOf(ctx, resp)
	if err != nil {
		return v, err
	}
	v.res = res
	v.own, v.inherited, err = ownViolation(ctx, d.step, before, phase, res.Decision)
	return v, err
}

// stepOf is the session's decision on resp, or the parse gate's rejection
// when the proposal is not read (decide).
func (d *decider) stepOf(ctx context.Context, resp actors.Response) (runtime.StepResult, error) {
	if resp.Oversize > 0 {
		return d.reject(fmt.Sprintf("the answer has %d bytes; the limit is %d", resp.Oversize, d.maxAnswer)), nil
	}
	s := d.step
	ectx, cancel := context.WithTimeout(ctx, time.Duration(s.Contract.Limits().MaxWorkMS)*time.Millisecond)
	proposal, err := ExtractProposal(ectx, resp.Raw)
	cancel()
	switch {
	case ctx.Err() != nil:
		return runtime.StepResult{}, ctx.Err()
	case errors.Is(err, ErrExtractLimit):
		return d.reject("finding the proposal in the answer would take more than a few passes over it"), nil
	case err != nil:
		return d.reject("finding the proposal in the answer ran past the work-time limit"), nil
	}
	return d.sess.Step(ctx, s.Contract, proposal,
		runtime.StepOptions{Gates: d.gates, Audit: bench.AllGates, SubmitPhase: d.submit, AdvanceTo: s.AdvanceTo})
}

// reject is the decision on an answer that did not reach the verifier:
// rejected at the parse gate with limit_exceeded (and so in the audit),
// the state unchanged.
func (d *decider) reject(msg string) runtime.StepResult {
	g := []runtime.GateResult{{Gate: runtime.GateParse, Code: runtime.CodeLimitExceeded, Message: msg}}
	return runtime.StepResult{Decision: &runtime.Decision{Gates: g, Audit: slices.Clone(g), State: d.sess.State()}}
}

// rejections are the gates that rejected a decision, one "gate: code:
// message" each, the message as it goes back to the actor
// (feedbackText): a retry prompt's feedback in the json protocol,
// propose_patch's result in the tools protocol.
func rejections(res runtime.StepResult) []string {
	var out []string
	for _, g := range res.Gates {
		if !g.Passed {
			out = append(out, fmt.Sprintf("%s: %s: %s", g.Gate, g.Code, feedbackText(g.Message)))
		}
	}
	return out
}

// feedbackText is a verifier's message as it goes back into a retry prompt:
// as it is, or, when it holds characters an actor could use to garble the
// prompt (controls, new lines, invisible formatting: what textcut.OneLine
// escapes), quoted with Go's escapes (strconv.Quote), so that it stays one
// line of data. Messages without such characters are unchanged, and so
// are the prompts that carry them.
func feedbackText(msg string) string {
	if textcut.OneLine(msg) == msg {
		return msg
	}
	return strconv.Quote(msg)
}

// ownViolation tells, for a committed proposal that the audit rejects,
// whether the violation is the proposal's own (own, the illegal commit to
// count) or inherited from the state before it (inherited, what the
// state already broke: "schema: schema_violation", "invariants:
// invariant_violated (NAME)"), as docs/run.md says. A no-op (an empty
// patch) is never an illegal commit. A schema violation is inherited when
// the empty patch on the state before breaks the schema the same way; an
// invariant that fails with the same code when nothing changes (post ==
// pre) was broken before the step, by an earlier commit or by the case's
// initial state (a goal written as an invariant). Every failed gate of the
// audit is judged: the first that is not inherited is the step's own, and
// for invariants the first rule that is not inherited, not merely the
// first rule that fails.
func ownViolation(ctx context.Context, s *bench.Step, before *runtime.Document, phase string, d *runtime.Decision) (own *runtime.GateResult, inherited string, err error) {
	if d.IllegalCommit() == nil {
		return nil, "", nil
	}
	var was []string
	if d.Proposal != nil && len(d.Proposal.Patch) == 0 {
		for _, g := range d.Audit {
			if !g.Passed {
				was = append(was, g.Gate+": "+g.Code)
			}
		}
		return nil, strings.Join(was, "; "), nil
	}
	for i := range d.Audit {
		g := &d.Audit[i]
		if g.Passed {
			continue
		}
		switch g.Gate {
		case runtime.GateSchema:
			empty, err := s.Contract.Verify(ctx, before, []byte(`[]`), runtime.VerifyOptions{Gates: runtime.GateSet{Schema: true}, Phase: phase})
			if err != nil {
				return nil, "", err
			}
			if r := empty.Rejection(); r != nil && r.Gate == g.Gate && r.Code == g.Code {
				was = append(was, g.Gate+": "+g.Code)
				continue
			}
		case runtime.GateInvariants:
			after, err := s.Contract.FailingInvariants(ctx, before, d.State, phase)
			if err != nil {
				return nil, "", err
			}
			already, err := s.Contract.FailingInvariants(ctx, before, before, phase)
			if err != nil {
				return nil, "", err
			}
			var fresh *runtime.GateResult
			for _, o := range after {
				if slices.ContainsFunc(already, func(a runtime.InvariantOutcome) bool { return a.Name == o.Name && a.Result.Code == o.Result.Code }) {
					was = append(was, fmt.Sprintf("%s: %s (%s)", g.Gate, o.Result.Code, o.Name))
					continue
				}
				if fresh == nil {
					r := o.Result
					fresh = &r
				}
			}
			if fresh == nil && len(after) > 0 {
				continue
			}
			if fresh != nil {
				return fresh, "", nil
			}
		}
		return g, "", nil
	}
	return nil, strings.Join(was, "; "), nil
}
