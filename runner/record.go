package runner

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// recordUsage is an actor's usage as a run record holds it. The two types
// have the same members, so a member added to one and not the other stops
// this conversion from compiling.
func recordUsage(u actors.Usage) rundir.Usage { return rundir.Usage(u) }

// recordMessages is a prompt as a run record holds it (nil stays nil).
func recordMessages(msgs []actors.Message) []rundir.Message {
	if msgs == nil {
		return nil
	}
	out := make([]rundir.Message, len(msgs))
	for i, m := range msgs {
		out[i] = rundir.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			out[i].ToolCalls = append(out[i].ToolCalls, rundir.MessageCall(c))
		}
	}
	return out
}

// run is one run in progress: the case's steps in order on one shared
// state, held by a runtime.Session.
type run struct {
	o         Options
	tc        *counter
	j         Job
	rec       *rundir.Record
	sess      *runtime.Session
	committed map[string]bool
	// written are the containers the run's commits wrote into (each
	// operation's parent location: its add, replace, copy or move target
	// may land at an index or as a member it names): where alone the
	// final state can hold a canary away from its path.
	written []runtime.Pointer
	leaks   *scoring.LeakScan // the outputs' leaks, found as they come (output)
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
	viewTokens chan viewCount
}

// output takes outputs of the run's actor (every string it sent, in
// order): their leaks are looked for now, so that they need not be kept
// until the run is scored (an answer of 15 MB, rejected attempt after
// attempt, made the run's memory grow by as much each time).
func (r *run) output(outs ...scoring.Output) {
	for _, out := range outs {
		r.leakScan().Add(out)
	}
}

// outputBody takes the answer to step as its actor sent it
// (actors.Response.Body), after the fields parsed from it: a canary in
// it counts only when none of the step's fields held it
// (scoring.LeakScan.AddFallback). The actor bounds it.
func (r *run) outputBody(step, body string) {
	r.leakScan().AddFallback(scoring.Output{Step: step, Field: scoring.FieldBody, Text: body})
}

// leakScan is the run's LeakScan.
func (r *run) leakScan() *scoring.LeakScan {
	if r.leaks == nil {
		r.leaks = scoring.NewLeakScan(r.j.Case)
	}
	return r.leaks
}

// countView starts counting the tokens of a step's view, beside the
// actor's answer: a live request then waits on the network, not on the
// tokenizer (the count is CPU work of a millisecond or more when the
// text is new). A view over the actor's context budget
// (Options.ContextTokens) is counted only until it passes it (countPast):
// its record says "more than the budget" (ViewTokens the budget,
// ViewTokensOver), which is what the budget's check needs, and a grown
// state's view is not tokenized whole for each run. appendStep collects
// it.
func (r *run) countView(viewJSON []byte) {
	ch := make(chan viewCount, 1) // never blocks: an abandoned run leaks nothing
	r.viewTokens = ch
	limit := r.o.contextTokens()
	go func() {
		n := r.tc.countPast(string(viewJSON), limit)
		if n > limit {
			ch <- viewCount{n: limit, over: true}
			return
		}
		ch <- viewCount{n: n}
	}()
}

// viewCount is a view's token count: n, or more than n when over.
type viewCount struct {
	n    int
	over bool
}

// appendStep adds a step's record to the run's, with its view's token
// count once counted.
func (r *run) appendStep(sr *rundir.StepRecord) {
	if r.viewTokens != nil {
		vc := <-r.viewTokens
		sr.ViewTokens, sr.ViewTokensOver = vc.n, vc.over
		r.viewTokens = nil
	}
	r.rec.Steps = append(r.rec.Steps, *sr)
}

// actorError ends the run after an actor failed: pending when the file
// actor has no answer yet (not an outcome; the same command continues
// it), otherwise an error run, which stops the whole benchmark when every
// run would meet it too (a bad key, an unknown model).
func (r *run) actorError(ctx context.Context, sr *rundir.StepRecord, msgs []actors.Message, attempt int, err error) error {
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := textcut.OneLine(fmt.Sprintf("step %s attempt %d: %v", sr.Step, attempt, err))
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
		score(r.rec, r.j.Case, r.o.PassThreshold, r.leaks, r.sess.State(), r.committed, r.written)
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
		prompt := r.promptTokens(msgs)
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

// promptTokens is the tokenizer's count of a prompt: its messages' texts
// and tool calls (what usageOf counts as the prompt when a provider
// reports no usage).
func (r *run) promptTokens(msgs []actors.Message) int {
	prompt := 0
	for _, m := range msgs {
		prompt += r.tc.count(m.Content) + r.countCalls(m.ToolCalls)
	}
	return prompt
}

// overContext reports whether a prompt, msgs and the texts extra (the
// tools' specs), would pass the actor's context budget
// (Options.ContextTokens), counted as promptTokens counts. A token of
// the tokenizers the runner knows stands for at least one byte, so a
// prompt of no more bytes than the budget is within it uncounted: only
// a longer one is tokenized, and only until its count passes the budget.
func (r *run) overContext(msgs []actors.Message, extra ...string) bool {
	limit := r.o.contextTokens()
	var size int
	for _, m := range msgs {
		size += len(m.Content)
		for _, c := range m.ToolCalls {
			size += len(c.Name) + len(c.Arguments)
		}
	}
	for _, x := range extra {
		size += len(x)
	}
	if size <= limit {
		return false
	}
	n := 0
	for _, x := range extra {
		n += r.tc.countPast(x, limit-n)
	}
	for _, m := range msgs {
		if n > limit {
			break
		}
		n += r.tc.countPast(m.Content, limit-n) + r.countCalls(m.ToolCalls)
	}
	return n > limit
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

// record writes an attempt's answer and decisions into the step's record,
// keeping the earlier attempt, and notes the step's own illegal commit, if
// any (ownViolation; a violation inherited from the state before the step
// is noted as such, not counted).
func (r *run) record(sr *rundir.StepRecord, s *bench.Step, attempt int, msgs []actors.Message, v verdict, badUsage string) {
	resp, d := v.resp, v.res.Decision
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
	sr.InheritedViolation = v.inherited
	if g := v.own; g != nil {
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
		if d.Committed {
			r.noteWritten(d.Proposal.Patch)
		}
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
func score(rec *rundir.Record, c *bench.Case, threshold float64, leaks *scoring.LeakScan, state *runtime.Document, committed map[string]bool, written []runtime.Pointer) {
	if scoreWholeState {
		written = nil
	}
	sc := scoring.ScoreScanned(c, leaks, state, committed, written)
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

// decider is the decider of step s of the run (submit as in decider).
func (r *run) decider(s *bench.Step, submit string) *decider {
	return &decider{sess: r.sess, gates: r.j.Config.GateSet, step: s, submit: submit, maxAnswer: r.o.maxAnswer()}
}

// stderrStream is the writer an attempt's Request.Stderr hands an exec
// program's standard error to: the run's LeakScan reads it whole as it
// arrives (scoring.Stream), in the step's field scoring.FieldStderr,
// while the actor keeps only an excerpt for the record. Flush it once
// the actor answered.
func (r *run) stderrStream(step string) *scoring.Stream {
	return r.leakScan().Stream(step, scoring.FieldStderr)
}

// agentOutput is the run's agentOutput, started on first use.
func (r *run) agentOutput() *agentOutput {
	if r.agentOut == nil {
		r.agentOut = newAgentOutput(r.leakScan())
	}
	return r.agentOut
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

// scoreWholeState makes score read the whole final state for leaks, as
// it did before it read the written containers alone: a test holds the
// two readings equal.
var scoreWholeState = false

// noteWritten adds the containers a committed patch wrote into to
// r.written (run.written).
func (r *run) noteWritten(patch []runtime.Operation) {
	for _, op := range patch {
		switch op.Op {
		case "add", "replace", "copy", "move":
			p := op.Path
			if len(p) > 0 {
				p = p[:len(p)-1]
			}
			r.written = append(r.written, slices.Clone(p))
		}
	}
}
