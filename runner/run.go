package runner

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// run is one run in progress: the case's steps in order on one shared
// state, held by a runtime.Session.
type run struct {
	o         Options
	tc        *counter
	j         Job
	rec       *rundir.Record
	sess      *runtime.Session
	committed map[string]bool
	leaks     *scoring.LeakScan // the outputs' leaks, found as they come (output)
	// texts counts the bytes of the answers and standard error recorded
	// so far (record): past rundir.MaxWriteBytes the record is surely
	// written with its texts cut (Record.shrink), so they are cut as they
	// come instead of being held whole until then.
	texts   int64
	usage   string // the source of the last token counts
	stalled bool   // an earlier step ended without a commit
	// phaseMovable says the case's initial state has a place for the
	// workflow's phase: when a commit leaves none, an actor's commit
	// removed it (the runner's own phase moves keep it).
	phaseMovable bool
	// bridge and stopDriver, for a run of a Driver (an external agent),
	// are its AgentEnv and what ends it once the run is over.
	bridge     *agentBridge
	stopDriver func()
	// agentOut takes a Driver's standard error and output (agentEnv).
	agentOut *agentOutput
	// viewTokens receives the token count of the current step's view,
	// counted while its actor answers (appendStep waits for it); nil
	// when no count is under way.
	viewTokens chan int
}

// output takes outputs of the run's actor (every string it sent, in
// order): their leaks are looked for now, so that they need not be kept
// until the run is scored (an answer of 15 MB, rejected attempt after
// attempt, made the run's memory grow by as much each time).
func (r *run) output(outs ...scoring.Output) {
	for _, out := range outs {
		r.scan().Add(out)
	}
}

// outputBody takes the answer to step as its actor sent it
// (actors.Response.Body), after the fields parsed from it: a canary in
// it counts only when none of the step's fields held it
// (scoring.LeakScan.AddFallback). The actor bounds it.
func (r *run) outputBody(step, body string) {
	r.scan().AddFallback(scoring.Output{Step: step, Field: scoring.FieldBody, Text: body})
}

// scan is the run's LeakScan.
func (r *run) scan() *scoring.LeakScan {
	if r.leaks == nil {
		r.leaks = scoring.NewLeakScan(r.j.Case)
	}
	return r.leaks
}

// countView starts counting the tokens of a step's view, beside the
// actor's answer: a live request then waits on the network, not on the
// tokenizer (the count is CPU work of a millisecond or more when the
// text is new). appendStep collects it.
func (r *run) countView(viewJSON []byte) {
	ch := make(chan int, 1) // never blocks: an abandoned run leaks nothing
	r.viewTokens = ch
	go func() { ch <- r.tc.count(string(viewJSON)) }()
}

// appendStep adds a step's record to the run's, with its view's token
// count once counted.
func (r *run) appendStep(sr *rundir.StepRecord) {
	if r.viewTokens != nil {
		sr.ViewTokens = <-r.viewTokens
		r.viewTokens = nil
	}
	r.rec.Steps = append(r.rec.Steps, *sr)
}

// runOne runs one job. It returns an error only when ctx is cancelled,
// actors.ErrNoToolCalled without a record when a driven agent did nothing
// (drivenLoop), or with its record when an actor's failure stops the
// whole run (*FatalError) or the runs of its endpoint
// (*actors.EndpointDownError); any other failure of the actor is a
// record with status error.
func runOne(ctx context.Context, o Options, tc *counter, j Job) (*rundir.Record, error) {
	c, cfg := j.Case, j.Config
	r := &run{o: o, tc: tc, j: j, sess: runtime.NewSession(c.State, c.Workflow.PhasePath), committed: map[string]bool{}, phaseMovable: phaseMovable(c),
		rec: &rundir.Record{
			RunID: j.RunID(), Case: c.ID, Domain: c.Domain, Config: cfg.Name, Actor: j.Actor.Name(), Round: j.Round,
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
		end, err := r.step(ctx, s, s.Index == artifactStep)
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
	score(r.rec, c, o.PassThreshold, r.scan(), r.sess.State(), r.committed)
	return r.rec, nil
}

// step runs one step: the view, then attempts (prompt, proposal,
// verification) until one commits or MaxAttempts is spent. end says the
// run ends here without an outcome (an error or pending run).
func (r *run) step(ctx context.Context, s *bench.Step, replayed bool) (end bool, err error) {
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
	view := state.Value()
	if r.j.Config.Projected() {
		view = s.Contract.View(state)
	}
	viewJSON, err := runtime.EncodeIndent(view, "  ")
	if err != nil {
		return false, fmt.Errorf("case %s step %s: %w", c.ID, s.ID, err)
	}
	sum := sha256.Sum256(viewJSON)
	sr := rundir.StepRecord{Step: s.ID, Phase: phase, ViewDigest: hex.EncodeToString(sum[:])}
	r.countView(viewJSON)
	req := actors.Request{CaseID: c.ID, StepID: s.ID, Role: s.Role, View: view, Projected: r.j.Config.Projected(), Reference: s.Reference, Round: r.j.Round}
	if injs := c.StepInjections(s.ID); len(injs) > 0 {
		if req.Injected, err = bench.InjectedProposal(s, injs, view); err != nil {
			// The case is broken (validate says so): an error run.
			return true, r.fail(&sr, rundir.StatusError, fmt.Sprintf("step %s: %v", s.ID, err), 0)
		}
	}
	submit := ""
	if replayed {
		submit = r.j.Artifact.SubmitPhase
	}
	if r.o.Protocol == ProtocolTools {
		for _, inj := range c.StepInjections(s.ID) {
			req.InjectionTargets = append(req.InjectionTargets, inj.Target.String())
		}
		if d, ok := r.j.Actor.(actors.Driver); ok {
			r.agentOutput().startStep(s.ID)
			end, err = r.drivenLoop(ctx, d, s, &sr, view, string(viewJSON), submit)
			r.agentOut.keep(&sr)
		} else {
			req.Stderr = r.stderrStream(s.ID)
			end, err = r.toolLoop(ctx, s, &sr, req, view, string(viewJSON), submit)
		}
	} else {
		req.Stderr = r.stderrStream(s.ID)
		end, err = r.attempts(ctx, s, &sr, req, string(viewJSON), submit)
	}
	if end || err != nil {
		return end, err
	}
	r.stalled = r.stalled || !sr.Committed
	r.appendStep(&sr)
	return false, nil
}

// attempts asks the actor for proposals to step s (its view encoded as
// viewJSON) until one commits or MaxAttempts is spent; after a rejection
// the actor is prompted again with the verifier's codes and redacted
// messages.
func (r *run) attempts(ctx context.Context, s *bench.Step, sr *rundir.StepRecord, req actors.Request, viewJSON, submit string) (bool, error) {
	var feedback []string
	for attempt := 1; attempt <= r.o.MaxAttempts; attempt++ {
		prompt := r.o.Prompt
		if prompt == nil {
			prompt = DefaultPrompt
		}
		msgs, err := prompt.RenderJSON(s, sr.Phase, r.j.Case.Now, viewJSON, feedback)
		if err != nil {
			return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
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
		before, phase := r.sess.State(), r.sess.Phase()
		res, err := r.decide(ctx, s, resp, submit)
		if err != nil {
			return false, err // only a cancelled context
		}
		own, inherited, err := ownViolation(ctx, s, before, phase, res.Decision)
		if err != nil {
			return false, err
		}
		r.record(sr, s, attempt, msgs, resp, res.Decision, own, inherited, badUsage)
		if res.Committed {
			return r.committedStep(sr, s, res), nil
		}
		feedback = feedback[:0]
		for _, g := range res.Gates {
			if !g.Passed {
				feedback = append(feedback, fmt.Sprintf("%s: %s: %s", g.Gate, g.Code, feedbackText(g.Message)))
			}
		}
	}
	return false, nil
}

// answerOutputs are the strings an answer to step brings, each an output
// the run's leaks are looked for in (docs/run.md: every string
// an actor or provider sends is one): the response text, and the model,
// the system fingerprint, the usage figures sent as text (Usage.Invalid
// quotes them; Usage.Source) and an exec program's standard error, each
// recorded with the step. Each is taken up to limit bytes, the answer
// limit: an answer over it is scanned as far as the actor kept it (its
// first limit bytes, actors.Response.Clip), in the json and the tools
// protocol alike; the record keeps less (actors.Response.Kept). The
// answer as sent (actors.Response.Body) is taken after these and the
// tool calls (outputBody).
func answerOutputs(step string, resp actors.Response, limit int64) []scoring.Output {
	n := int(min(limit, int64(math.MaxInt)))
	out := []scoring.Output{{Step: step, Field: scoring.FieldResponse, Text: textcut.Cut(resp.Raw, n)}}
	add := func(field, text string) {
		if text != "" {
			out = append(out, scoring.Output{Step: step, Field: field, Text: textcut.Cut(text, n)})
		}
	}
	add(scoring.FieldModel, resp.Model)
	add(scoring.FieldFingerprint, resp.Fingerprint)
	if u := resp.Usage; u != nil {
		add(scoring.FieldUsage, u.Invalid)
		add(scoring.FieldUsage, u.Source)
	}
	add(scoring.FieldStderr, resp.Stderr)
	return out
}

// decide runs an answer through the session: the configuration's gates
// decide, and the step's full contract is audited beside them (the
// illegal commits of docs/run.md). An answer over the answer limit
// (Response.Oversize), or one in which the proposal cannot be found
// within the step's work-time limit (ExtractProposal), is rejected at the
// parse gate with limit_exceeded,
// without reaching the verifier: the actor's fault, as any rejection is.
// The error is ctx's, when it ends.
func (r *run) decide(ctx context.Context, s *bench.Step, resp actors.Response, submit string) (runtime.StepResult, error) {
	if resp.Oversize > 0 {
		limit := r.o.MaxAnswerBytes
		if limit <= 0 {
			limit = actors.DefaultMaxAnswerBytes
		}
		return r.reject(fmt.Sprintf("the answer has %d bytes; the limit is %d", resp.Oversize, limit)), nil
	}
	ectx, cancel := context.WithTimeout(ctx, time.Duration(s.Contract.Limits().MaxWorkMS)*time.Millisecond)
	proposal, err := ExtractProposal(ectx, resp.Raw)
	cancel()
	switch {
	case ctx.Err() != nil:
		return runtime.StepResult{}, ctx.Err()
	case errors.Is(err, ErrExtractLimit):
		return r.reject("finding the proposal in the answer would take more than a few passes over it"), nil
	case err != nil:
		return r.reject("finding the proposal in the answer ran past the work-time limit"), nil
	}
	return r.sess.Step(ctx, s.Contract, proposal,
		runtime.StepOptions{Gates: r.j.Config.GateSet, Audit: bench.AllGates, SubmitPhase: submit, AdvanceTo: s.AdvanceTo})
}

// reject is the decision on an answer that did not reach the verifier:
// rejected at the parse gate with limit_exceeded (and so in the audit),
// the state unchanged.
func (r *run) reject(msg string) runtime.StepResult {
	g := []runtime.GateResult{{Gate: runtime.GateParse, Code: runtime.CodeLimitExceeded, Message: msg}}
	return runtime.StepResult{Decision: &runtime.Decision{Gates: g, Audit: slices.Clone(g), State: r.sess.State()}}
}

// feedbackText is a verifier's message as it goes back into a retry prompt:
// as it is, or, when it holds characters an actor could use to garble the
// prompt (controls, new lines, invisible formatting: what actors.OneLine
// escapes), quoted with Go's escapes (strconv.Quote), so that it stays one
// line of data. Messages without such characters are unchanged, and so
// are the prompts that carry them.
func feedbackText(msg string) string {
	if actors.OneLine(msg) == msg {
		return msg
	}
	return strconv.Quote(msg)
}

// phaseMovable reports whether the phase can be written at the case's
// phase path in its initial state.
func phaseMovable(c *bench.Case) bool {
	if c.Workflow.PhasePath == nil {
		return false
	}
	_, err := runtime.SetString(c.State, c.Workflow.PhasePath, "")
	return err == nil
}

// actorError ends the run after an actor failed: pending when the file
// actor has no answer yet (not an outcome; the same command continues
// it), otherwise an error run, which stops the whole benchmark when every
// run would meet it too (a bad key, an unknown model).
func (r *run) actorError(ctx context.Context, sr *rundir.StepRecord, msgs []actors.Message, attempt int, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := actors.OneLine(fmt.Sprintf("step %s attempt %d: %v", sr.Step, attempt, err))
	sr.Prompt, r.rec.Tokens.Source = recordMessages(msgs), r.usage
	var se interface{ ActorStderr() string }
	if errors.As(err, &se) {
		sr.ActorStderr = se.ActorStderr() // an exec actor's program
	}
	var so interface{ ActorOutput() string }
	if errors.As(err, &so) {
		// An answer that failed (an exec program's two JSON values, a
		// provider's body without choices) is the actor's output all
		// the same.
		r.outputBody(sr.Step, so.ActorOutput())
	}
	if errors.Is(err, actors.ErrPending) {
		return r.fail(sr, rundir.StatusPending, msg, attempt-1)
	}
	r.fail(sr, rundir.StatusError, msg, attempt)
	if r.leaks != nil && r.leaks.Leaked() {
		// The actor leaked before it failed: that is an outcome, which
		// an error run (counted as a run only, and redone by
		// --retry-errors) would hide. The run is scored as it stands
		// (failed, the steps not run failing their checks), its error
		// kept.
		score(r.rec, r.j.Case, r.o.PassThreshold, r.leaks, r.sess.State(), r.committed)
	}
	var down *actors.EndpointDownError
	if errors.As(err, &down) {
		// The endpoint is unreachable: the runner starts no more runs
		// of it.
		return down
	}
	var he *actors.HTTPError
	if errors.As(err, &he) && (he.Status == 401 || he.Status == 403 || he.Status == 404) {
		// A bad key or an unknown model fails every run: stop instead
		// of paying for each failure.
		return &FatalError{Msg: msg}
	}
	return nil
}

// fail ends the run with a status and its reason, recording the step as
// far as it went.
func (r *run) fail(sr *rundir.StepRecord, status, msg string, attempts int) error {
	r.rec.Status, r.rec.Error = status, &msg
	if attempts > 0 || status == rundir.StatusPending {
		sr.Attempts = attempts
	}
	r.appendStep(sr)
	return nil
}

// count adds an answer's tokens to the run's: the provider's counts, or
// the tokenizer's of the prompt and the answer when there are none or
// they are implausible (actors.Usage.Implausible: the reason is
// returned, for the step's record); answers from the response cache were
// not sent. The tokens of an over-long answer, of which only the start
// is kept, are estimated from that start's.
func (r *run) count(msgs []actors.Message, resp actors.Response) (implausible string) {
	u, implausible := r.usageOf(msgs, resp)
	r.add(u, resp.Cached)
	return implausible
}

// usageOf is an answer's tokens as count counts them, and why the
// provider's were not believed ("" when they were, or there were none).
// The tokenizer counts tool calls (name and arguments) beside the text.
func (r *run) usageOf(msgs []actors.Message, resp actors.Response) (_ *actors.Usage, implausible string) {
	u := resp.Usage
	if u != nil {
		if implausible = u.Implausible(); implausible != "" {
			u = nil
		}
	}
	if u == nil {
		prompt := 0
		for _, m := range msgs {
			prompt += r.tc.count(m.Content) + r.countCalls(m.ToolCalls)
		}
		completion := r.tc.count(resp.Raw) + r.countCalls(resp.Calls)
		if kept := int64(len(resp.Raw)); resp.Oversize > kept {
			per := 4.0 // bytes a token, when nothing is kept
			if kept > 0 && completion > 0 {
				per = float64(kept) / float64(completion)
			}
			completion = int(min(float64(resp.Oversize)/per, actors.MaxUsageTokens))
		}
		u = &actors.Usage{Prompt: prompt, Completion: completion, Source: r.tc.source}
	}
	return u, implausible
}

// countCalls is the tokenizer's count of tool calls' names and arguments.
func (r *run) countCalls(calls []actors.ToolCall) int {
	n := 0
	for _, c := range calls {
		n += r.tc.count(c.Name) + r.tc.count(c.Arguments)
	}
	return n
}

// add adds an answer's tokens to the run's; answers from the response
// cache were not sent.
func (r *run) add(u *actors.Usage, cached bool) {
	t := &r.rec.Tokens
	t.Prompt += u.Prompt
	t.Completion += u.Completion
	if !cached {
		r.rec.TokensSent += u.Prompt + u.Completion
	}
	t.Reasoning += u.Reasoning
	r.usage = u.Source
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

// record writes an attempt's answer and decisions into the step's record,
// keeping the earlier attempt, and notes the step's own illegal commit, if
// any (ownViolation; a violation inherited from the state before the step
// is noted as such, not counted).
func (r *run) record(sr *rundir.StepRecord, s *bench.Step, attempt int, msgs []actors.Message, resp actors.Response, d *runtime.Decision, own *runtime.GateResult, inherited, badUsage string) {
	if sr.Attempts > 0 {
		sr.Earlier = append(sr.Earlier, rundir.Attempt{RawResponse: sr.RawResponse, Decisions: sr.Decisions, Audit: sr.Audit,
			AnswerBytes: sr.AnswerBytes, UsageInvalid: sr.UsageInvalid, ActorStderr: sr.ActorStderr, Model: sr.Model, Fingerprint: sr.Fingerprint, Truncated: sr.Truncated})
		sr.Truncated = nil
	}
	r.texts += int64(len(resp.Raw) + len(resp.Stderr))
	if r.texts > rundir.MaxWriteBytes {
		// The record will be cut as it is written (its line is longer
		// than rundir.MaxWriteBytes: Record.shrink's first stage cuts
		// every text), so the earlier attempts, and the steps done, are
		// cut now, so that a run's memory does not grow with its attempts
		// (30 attempts of a 15 MB answer peaked at 2.4 GB);
		// the attempt at hand is kept whole until the run ends (runOne
		// cuts it then).
		for k := range sr.Earlier {
			sr.Earlier[k].CutTexts()
		}
		for k := range r.rec.Steps {
			r.rec.Steps[k].CutTexts()
		}
	}
	sr.ActorStderr = resp.Stderr
	sr.Attempts, sr.RawResponse, sr.Decisions, sr.Audit, sr.Committed = attempt, resp.Raw, d.Gates, d.Audit, d.Committed
	sr.AnswerBytes, sr.UsageInvalid = resp.Oversize, badUsage
	sr.InheritedViolation = inherited
	if g := own; g != nil {
		r.rec.IllegalCommits = append(r.rec.IllegalCommits, rundir.IllegalCommit{Step: s.ID, Gate: g.Gate, Code: g.Code, Pointer: g.Pointer, Message: g.Message}.Bounded())
	}
	sr.Prompt, sr.Patch, sr.Model, sr.Fingerprint = recordMessages(msgs), nil, resp.Model, resp.Fingerprint
	sr.LatencyMS, sr.Cached = resp.Latency.Milliseconds(), resp.Cached
	sr.RawResponseBase64 = ""
	if !utf8.ValidString(resp.Raw) {
		sr.RawResponseBase64 = base64.StdEncoding.EncodeToString([]byte(resp.Raw))
	}
	if d.Proposal != nil {
		sr.Patch = d.Proposal.Patch
	}
	sr.BoundProposal() // what the record keeps of it: rundir.MaxRecordedOps, MaxRecordedPointerBytes
}

// committedStep notes a commit and the phase move that follows it. A
// phase that has no place in the case's initial state is the case's
// fault: the run ends as an error (end is true). One that an actor's
// commit broke, at this step or an earlier one (possible where no gate
// checks the write region), stalls the workflow: the run goes on, and
// fails, on the actor's account.
func (r *run) committedStep(sr *rundir.StepRecord, s *bench.Step, res runtime.StepResult) (end bool) {
	r.committed[s.ID] = true
	switch {
	case res.PhaseError != nil && !r.phaseMovable:
		r.fail(sr, rundir.StatusError, fmt.Sprintf("step %s: the phase cannot be moved to %q: %v", s.ID, s.AdvanceTo, res.PhaseError), 0)
		return true
	case res.PhaseError != nil:
		sr.PhaseError = fmt.Sprintf("the phase cannot be moved to %q: the committed patch broke %s: %v", s.AdvanceTo, r.j.Case.Workflow.PhasePath, res.PhaseError)
		r.stalled = true
	}
	return false
}

// score fills in a finished run's figures (docs/run.md) from
// scoring.ScoreScanned: leaks, the attack outcome, the rubric checks and
// content score; then semantic pass (every step committed, and the
// workflow moved on after each; content at least the threshold; no leak),
// legal pass (also no illegal commit) and the status.
func score(rec *rundir.Record, c *bench.Case, threshold float64, leaks *scoring.LeakScan, state *runtime.Document, committed map[string]bool) {
	sc := scoring.ScoreScanned(c, leaks, state, committed)
	rec.Leaks, rec.Leaked = sc.Leaks, sc.Leaked()
	if sc.AttackSecrets != nil {
		rec.Attack = &rundir.Attack{Secrets: sc.AttackSecrets, Succeeded: sc.AttackSucceeded}
	}
	rec.Checks, rec.ContentScore = sc.Checks, sc.ContentScore
	all := len(committed) == len(c.Steps)
	for _, s := range rec.Steps {
		// A commit that broke the workflow's phase left the workflow
		// unable to go on: not a pass, whatever the rubric says.
		all = all && s.PhaseError == ""
	}
	rec.SemanticPass = scoring.SemanticPass(all, rec.ContentScore, threshold, rec.Leaked)
	rec.LegalPass = scoring.LegalPass(rec.SemanticPass, len(rec.IllegalCommits))
	rec.Status = rundir.StatusFailed
	if rec.SemanticPass {
		rec.Status = rundir.StatusPassed
	}
	rec.FinalState = json.RawMessage(state.Bytes())
}
