package runner

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// runOne runs one job. It returns an error only when ctx is cancelled,
// actors.ErrNoToolCalled without a record when a driven agent did nothing
// (drivenLoop), or with its record when an actor's failure stops the
// whole run (*FatalError) or the runs of its endpoint
// (*actors.EndpointDownError); any other failure of the actor is a
// record with status error.
func runOne(ctx context.Context, o Options, tc *counter, j Job) (*rundir.Record, error) {
	c, cfg := j.Case, j.Config
	r := &run{o: o, tc: tc, j: j, sess: runtime.NewSession(c.State, c.Workflow.PhasePath), committed: map[string]bool{}, written: []runtime.Pointer{}, phaseMovable: hasPhasePlace(c),
		rec: &rundir.Record{
			RunID: j.RunID(), Case: c.ID, Domain: c.Domain, Config: cfg.Name, Actor: j.Actor.Name(), Round: j.Round, Scale: j.Scale, AttackName: j.Attack,
			Leaks: []scoring.Leak{}, Steps: []rundir.StepRecord{}, IllegalCommits: []rundir.IllegalCommit{}, Checks: []scoring.CheckResult{},
		}}
	defer func() {
		if r.stopDriver != nil {
			r.stopDriver() // an external agent's run is over: it is ended
		}
	}()
	artifactStep := -1
	if j.Artifact != nil {
		if as := c.Step(j.Artifact.Step); as != nil {
			artifactStep = as.Index
		}
	}
	defer func() {
		if r.texts > rundir.MaxWriteBytes {
			// Its record is written with every text cut (Record.shrink's
			// first stage); the earlier attempts were cut as they came.
			for k := range r.rec.Steps {
				r.rec.Steps[k].CutTexts()
			}
		}
	}()
	for _, s := range c.Steps {
		if artifactStep >= 0 && s.Index > artifactStep {
			break // a replayed artifact ends its run
		}
		end, err := r.runStep(ctx, s, s.Index == artifactStep)
		var fatal *FatalError
		var down *actors.EndpointDownError
		switch {
		case errors.As(err, &fatal), errors.As(err, &down):
			return r.rec, err
		case err != nil:
			return nil, err
		case end:
			return r.rec, nil
		}
	}
	r.rec.Tokens.Source = r.usage
	if r.stopDriver != nil {
		// An external agent's run is over: it is ended before the run is
		// scored, so that what it sent and wrote to standard error and
		// output until then is read, and its last step's record keeps
		// their excerpts.
		r.stopDriver()
		r.stopDriver = nil
		if len(r.rec.Steps) > 0 {
			r.agentOut.keep(&r.rec.Steps[len(r.rec.Steps)-1])
		}
	}
	score(r.rec, c, o.PassThreshold, r.leakScan(), r.sess.State(), r.committed, r.written)
	return r.rec, nil
}

// runStep runs one step: the view, then attempts (prompt, proposal,
// verification) until one commits or MaxAttempts is spent. end says the
// run ends here without an outcome (an error or pending run).
func (r *run) runStep(ctx context.Context, s *bench.Step, replayed bool) (end bool, err error) {
	c := r.j.Case
	state, phase := r.sess.State(), r.sess.Phase()
	if r.stalled && len(s.Phases) > 0 && !slices.Contains(s.Phases, phase) {
		// An earlier step did not commit, so the workflow never
		// reached this step's phase: no orchestrator would hand it
		// out. It is not run (its checks fail), and its actor is not
		// blamed for a phase it did not choose.
		r.appendStep(&rundir.StepRecord{Step: s.ID, Phase: phase, NotReached: true})
		return false, nil
	}
	sv, err := caseViews.view(state, s, r.j.Config.Projected(), state == c.State)
	if err != nil {
		return false, fmt.Errorf("case %s step %s: %w", c.ID, s.ID, err)
	}
	view, viewJSON := sv.value, sv.text
	sr := rundir.StepRecord{Step: s.ID, Phase: phase, ViewDigest: sv.digest}
	r.countView(viewJSON)
	ref, err := s.ReferenceAt(state)
	if err != nil {
		// The case is broken (validate says so): an error run.
		return true, r.fail(&sr, rundir.StatusError, err.Error(), 0)
	}
	req := actors.Request{CaseID: c.ID, StepID: s.ID, Role: s.Role, View: view, Projected: r.j.Config.Projected(), Reference: ref, Round: r.j.Round}
	if injs := c.StepInjections(s.ID); len(injs) > 0 {
		if req.Injected, err = bench.InjectedProposal(s, ref, injs, view); err != nil {
			// The case is broken (validate says so): an error run.
			return true, r.fail(&sr, rundir.StatusError, fmt.Sprintf("step %s: %v", s.ID, err), 0)
		}
	}
	submit := ""
	if replayed {
		submit = r.j.Artifact.SubmitPhase
	}
	if r.o.Protocol == ProtocolTools {
		injs := c.StepInjections(s.ID)
		for _, inj := range injs {
			if t := inj.Target.String(); !slices.Contains(req.InjectionTargets, t) {
				req.InjectionTargets = append(req.InjectionTargets, t)
			}
			req.Planted = append(req.Planted, inj.At.String())
		}
		if len(injs) > 0 {
			// The follower obeys the planted texts it meets, and those
			// only.
			req.Obey = func(at []string) ([]byte, error) {
				var obeyed []bench.Injection
				for _, inj := range injs {
					if slices.Contains(at, inj.At.String()) {
						obeyed = append(obeyed, inj)
					}
				}
				return bench.InjectedProposal(s, ref, obeyed, view)
			}
		}
		if d, ok := actors.Unnamed(r.j.Actor).(actors.Driver); ok {
			r.agentOutput().startStep(s.ID)
			end, err = r.drivenLoop(ctx, d, s, &sr, view, string(viewJSON), submit)
			r.agentOut.keep(&sr)
		} else {
			req.Stderr = r.stderrStream(s.ID)
			end, err = r.toolLoop(ctx, s, &sr, req, view, string(viewJSON), submit)
		}
	} else {
		req.Stderr = r.stderrStream(s.ID)
		end, err = r.jsonLoop(ctx, s, &sr, req, string(viewJSON), submit)
	}
	if end || err != nil {
		return end, err
	}
	r.stalled = r.stalled || !sr.Committed
	r.appendStep(&sr)
	return false, nil
}

// jsonLoop asks the actor for proposals to step s (its view encoded as
// viewJSON) until one commits or MaxAttempts is spent; after a rejection
// the actor is prompted again with the verifier's codes and redacted
// messages. A prompt that would pass the actor's context budget is not
// sent: the step ends as EndedContext.
func (r *run) jsonLoop(ctx context.Context, s *bench.Step, sr *rundir.StepRecord, req actors.Request, viewJSON, submit string) (bool, error) {
	var feedback []string
	d := r.decider(s, submit)
	for attempt := 1; attempt <= r.o.MaxAttempts; attempt++ {
		prompt := r.o.Prompt
		if prompt == nil {
			prompt = DefaultPrompt
		}
		msgs, err := prompt.RenderJSON(s, sr.Phase, r.j.Case.Now, viewJSON, feedback)
		if err != nil {
			return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
		}
		if r.overContext(msgs) {
			// The prompt would pass the actor's context: it is not
			// sent, and the step ends without a commit, as a step whose
			// proposals were all rejected does. A first attempt's
			// prompt is recorded; after a rejection the record keeps
			// the last attempt sent.
			if attempt == 1 {
				sr.Prompt = recordMessages(msgs)
			}
			sr.Ended = EndedContext
			return false, nil
		}
		req.Messages, req.Attempt = msgs, attempt
		resp, err := r.j.Actor.Propose(ctx, req)
		if err != nil {
			return true, r.actorError(ctx, sr, msgs, attempt, err)
		}
		if ctx.Err() != nil {
			return false, ctx.Err() // an answer cut short by the interrupt
		}
		r.output(answerOutputs(s.ID, resp, r.o.maxAnswer())...) // before it is cut for the record
		r.outputBody(s.ID, resp.Body)
		resp = resp.Clip(r.o.MaxAnswerBytes).Kept()
		badUsage := r.count(msgs, resp)
		v, err := d.decide(ctx, resp)
		if err != nil {
			return false, err // only a cancelled context
		}
		r.record(sr, s, attempt, msgs, v, badUsage)
		if v.res.Committed {
			return r.committedStep(sr, s, v.res), nil
		}
		feedback = rejections(v.res)
	}
	return false, nil
}

// hasPhasePlace reports whether the phase can be written at the case's
// phase path in its initial state.
func hasPhasePlace(c *bench.Case) bool {
	if c.Workflow.PhasePath == nil {
		return false
	}
	key := phasePlaceKey{c.State, c.Workflow.PhasePath.String()}
	e, known := phasePlaces.Load(key)
	if !known {
		if phasePlaceCount.Add(1) > maxPhasePlaces {
			phasePlaces.Clear()
			phasePlaceCount.Store(0)
		}
		e, _ = phasePlaces.LoadOrStore(key, &phasePlace{})
	}
	pp := e.(*phasePlace)
	pp.once.Do(func() {
		_, err := runtime.SetString(c.State, c.Workflow.PhasePath, "")
		pp.ok = err == nil
	})
	return pp.ok
}
