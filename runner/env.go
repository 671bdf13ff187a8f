package runner

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/tools"
)

// How a step ended without a commit (rundir.StepRecord.Ended): outcomes,
// not errors. All are of the tools protocol but EndedContext, which
// ends a step of either protocol.
const (
	EndedAttempts    = "attempts_spent"         // every proposal allowed (MaxAttempts) was rejected
	EndedTurns       = "turn_budget_spent"      // Options.MaxTurns turns without a commit
	EndedToolCalls   = "tool_call_budget_spent" // Options.MaxToolCalls calls without a commit
	EndedBytes       = "byte_budget_spent"      // the actor sent more than Options.MaxStepBytes
	EndedFinalText   = "final_text"             // the actor answered with text and no tool call
	EndedAgentExited = "agent_exited"           // an external agent (MCP) ended before a commit
	// EndedContext: what the actor would be given (the prompt, the
	// conversation before a turn, an MCP agent's task and results) would
	// pass its context budget, Options.ContextTokens; it was not sent.
	EndedContext = "context_exceeded"
)

// stepEnv is one step of a run as an environment (docs/agents.md): the
// tools of package tools on the state as the step's actor may see it,
// with the step's budgets. Every transport of the tools protocol (a
// model's tool calls, an MCP client, answer files) goes through call,
// which returns what happened: the result, the call's record, and the
// proposal decided, if any, for the run to record. It implements
// tools.Step. A stepEnv is not safe for concurrent use.
type stepEnv struct {
	d      *decider           // decides the step's proposals on the run's session
	view   any                // what the actor may see: the view or the full state
	region runtime.ViewRegion // the locations it may see
	full   any                // the state, to tell a hidden location from an absent one (records only)
	limits envLimits

	proposals, calls int
	bytes            int64
	// ended is set when the step is over without a commit; committed
	// when a proposal committed.
	ended     string
	committed bool
	// decided is the proposal the call under way had decided (Propose),
	// until call hands it on.
	decided *verdict
}

// envLimits are a step's budgets in the tools protocol: the proposals
// (MaxAttempts), the tool calls, the bytes the actor may send, and the
// answer limit that bounds one call's arguments.
type envLimits struct {
	attempts, toolCalls int
	stepBytes, answer   int64
	// result bounds one tool result, in bytes (Options.MaxResultBytes).
	result int
}

// called is what one tool call did: the text the actor is given, the
// call's record, and the proposal it made when one reached the gates.
type called struct {
	text    string
	rec     rundir.ToolCall
	decided *verdict
}

// newStepEnv is the environment of a step whose actor sees view (the
// locations of region) of the state full, its proposals decided by d.
func newStepEnv(d *decider, view any, region runtime.ViewRegion, full any, limits envLimits) *stepEnv {
	return &stepEnv{d: d, view: view, region: region, full: full, limits: limits}
}

// Over reports whether the step is over: committed, or ended without a
// commit (Ended says how).
func (e *stepEnv) Over() bool { return e.committed || e.ended != "" }

// Ended is how the step ended without a commit ("" while it goes on, or
// after a commit).
func (e *stepEnv) Ended() string { return e.ended }

// end ends the step without a commit, keeping the first reason.
func (e *stepEnv) end(code string) {
	if e.ended == "" && !e.committed {
		e.ended = code
	}
}

// spend counts n bytes the actor sent against the step's byte budget; it
// reports false, ending the step, when the budget is spent.
func (e *stepEnv) spend(n int64) bool {
	e.bytes += n
	if e.bytes > e.limits.stepBytes {
		e.end(EndedBytes)
		return false
	}
	return true
}

// call answers one tool call. Every call counts against the step's tool
// call and byte budgets, an unknown or malformed one too. The error is
// non-nil only when ctx ends. The call's strings are outputs of the
// actor, which the run scans (outputCall) before or beside this.
func (e *stepEnv) call(ctx context.Context, c actors.ToolCall) (called, error) {
	rec := rundir.ToolCall{ID: textcut.Cut(c.ID, 256), Name: textcut.Cut(c.Name, 256)}
	rec.Arguments, rec.ArgumentsBytes = clipKept(c.Arguments)
	if c.Oversize > 0 {
		rec.ArgumentsBytes = c.Oversize
	}
	res, err := e.answer(ctx, c)
	if err != nil {
		return called{rec: rec}, err
	}
	if res.Read != nil && (res.Code == "" || res.Code == tools.CodeAbsent) {
		rec.Read, rec.Pointer = true, textcut.Cut(*res.Read, 1024)
		if p, err := runtime.ParsePointer(*res.Read); err == nil {
			rec.Hidden = e.hidden(p)
		}
	}
	text := res.Text
	if res.Code != "" {
		rec.Error = res.Code
		text = "error: " + res.Code + ": " + text
	}
	rec.Result, rec.ResultBytes = clipKept(text)
	out := called{text: text, rec: rec, decided: e.decided}
	e.decided = nil
	return out, nil
}

// answer counts the call against the budgets and runs its tool.
func (e *stepEnv) answer(ctx context.Context, c actors.ToolCall) (tools.Result, error) {
	if e.Over() {
		return tools.Result{Text: "the step is over", Code: tools.CodeStepOver}, nil
	}
	e.calls++
	size := max(c.Oversize, int64(len(c.Arguments)))
	spent := !e.spend(int64(len(c.Name)) + size)
	if e.calls > e.limits.toolCalls {
		e.end(EndedToolCalls)
		spent = true
	}
	if spent {
		return tools.Result{Text: "the step's budget is spent; the step is over", Code: tools.CodeBudgetSpent}, nil
	}
	if size > e.limits.answer {
		return tools.Result{Text: fmt.Sprintf("the arguments have %d bytes; the limit is %d", size, e.limits.answer), Code: tools.CodeOversized}, nil
	}
	t, ok := tools.Find(c.Name)
	if !ok {
		return tools.Result{Text: "the tools are " + tools.Names(), Code: tools.CodeUnknown}, nil
	}
	return t.Call(ctx, e, c.Arguments)
}

// Lookup implements tools.Step: the value at p in what the actor may
// see. A hidden array element, which the view keeps as null so that
// positions hold, is not there.
func (e *stepEnv) Lookup(p runtime.Pointer) (any, bool) {
	v, ok := runtime.Lookup(e.view, p)
	if !ok || (v == nil && !e.region.Visible(p)) {
		return nil, false
	}
	return v, true
}

// ResultLimit implements tools.Step: the most bytes of one tool result
// (Options.MaxResultBytes).
func (e *stepEnv) ResultLimit() int { return e.limits.result }

// hidden reports whether p names a location of the state that the actor
// may not see (for the record: it was answered as absent).
func (e *stepEnv) hidden(p runtime.Pointer) bool {
	if _, ok := e.Lookup(p); ok {
		return false
	}
	_, ok := runtime.Lookup(e.full, p)
	return ok
}

// Propose implements tools.Step: the proposal goes through the run's
// session as an answer of the json protocol does (the configuration's
// gates decide, the full contract audits). A commit ends the step; a
// rejection uses one of the step's proposals, and the last one ends it.
// The decision is kept for call to hand on to the run.
func (e *stepEnv) Propose(ctx context.Context, args string) (tools.Verdict, error) {
	e.proposals++
	v, err := e.d.decide(ctx, actors.Response{Raw: args})
	if err != nil {
		return tools.Verdict{}, err
	}
	e.decided = &v
	if v.res.Committed {
		e.committed = true
		return tools.Verdict{Committed: true, N: e.proposals, Of: e.limits.attempts}, nil
	}
	if e.proposals >= e.limits.attempts {
		e.end(EndedAttempts)
	}
	return tools.Verdict{N: e.proposals, Of: e.limits.attempts, Rejections: rejections(v.res)}, nil
}

// clipKept is s as a record keeps it: its first 64 KiB and, when cut,
// its full length.
func clipKept(s string) (string, int64) {
	if len(s) <= keptToolBytes {
		return s, 0
	}
	return textcut.Cut(s, keptToolBytes), int64(len(s))
}
