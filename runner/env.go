package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Protocols (Options.Protocol, run --protocol) and disclosure modes
// (Options.Disclosure), described in docs/agents.md.
const (
	// ProtocolJSON is the paper's: one answer holding
	// {"patch": [...], "note": "..."} per attempt.
	ProtocolJSON = runspec.ProtocolJSON
	// ProtocolTools is an agent loop: each step is a StepEnv with the
	// tools read_state and propose_patch.
	ProtocolTools = runspec.ProtocolTools
	// DisclosureWhole pastes the view in the first message.
	DisclosureWhole = runspec.DisclosureWhole
	// DisclosureProgressive gives an outline of the view (its top-level
	// members, containers as their sizes); the actor reads the rest.
	DisclosureProgressive = runspec.DisclosureProgressive
)

// How a step of the tools protocol ended without a commit
// (rundir.StepRecord.Ended): outcomes, not errors.
const (
	EndedAttempts    = "attempts_spent"         // every proposal allowed (MaxAttempts) was rejected
	EndedTurns       = "turn_budget_spent"      // Options.MaxTurns turns without a commit
	EndedToolCalls   = "tool_call_budget_spent" // Options.MaxToolCalls calls without a commit
	EndedBytes       = "byte_budget_spent"      // the actor sent more than Options.MaxStepBytes
	EndedFinalText   = "final_text"             // the actor answered with text and no tool call
	EndedAgentExited = "agent_exited"           // an external agent (MCP) ended before a commit
)

// The codes of a tool's error results (rundir.ToolCall.Error).
const (
	ToolUnknown     = "unknown_tool"
	ToolMalformed   = "malformed_arguments"
	ToolOversized   = "oversized_arguments"
	ToolAbsent      = "absent"
	ToolBadPointer  = "bad_pointer"
	ToolTooLarge    = "result_too_large"
	ToolStepOver    = "step_over"
	ToolBudgetSpent = "budget_spent"
)

// Budget defaults of a step in the tools protocol.
const (
	DefaultMaxTurns     = 16
	DefaultMaxToolCalls = 64
	DefaultMaxStepBytes = 4 << 20
	// DefaultReadDepth is read_state's depth when the call gives none.
	DefaultReadDepth = 2
	// MaxResultBytes bounds one tool result (1 MiB): a read that would
	// show more is answered with result_too_large and the value's size.
	MaxResultBytes = 1 << 20
	// keptToolBytes is how much of a call's arguments and result a
	// record keeps (64 KiB).
	keptToolBytes = actors.KeptAnswerBytes
)

// maxTurns, maxToolCalls and maxStepBytes are the budgets of a step in
// the tools protocol: Spec's, their defaults for 0 (and for a negative
// figure, which no command passes).
func (o *Options) maxTurns() int     { return cmp.Or(max(o.MaxTurns, 0), DefaultMaxTurns) }
func (o *Options) maxToolCalls() int { return cmp.Or(max(o.MaxToolCalls, 0), DefaultMaxToolCalls) }
func (o *Options) maxStepBytes() int64 {
	if o.MaxStepBytes > 0 {
		return o.MaxStepBytes
	}
	return DefaultMaxStepBytes
}

// StepEnv is one step of a run as an environment (docs/agents.md):
// the tools read_state and propose_patch on the state as the step's actor
// may see it, with the step's budgets. Every transport of the tools
// protocol (a model's tool calls, an MCP client, answer files) goes
// through Call. A StepEnv is not safe for concurrent use.
type StepEnv struct {
	r      *run
	s      *bench.Step
	sr     *rundir.StepRecord
	view   any                // what the actor may see: the view or the full state
	region runtime.ViewRegion // the locations it may see
	full   any                // the state, to tell a hidden location from an absent one (records only)
	submit string
	prompt []actors.Message

	proposals, calls int
	bytes            int64
	// ended is set when the step is over without a commit; committed
	// when a proposal committed; endRun when the commit ends the run
	// (the case's workflow is broken).
	ended     string
	committed bool
	endRun    bool
}

// newEnv is the environment of step s on the session's current state.
func (r *run) newEnv(s *bench.Step, sr *rundir.StepRecord, view any, submit string) *StepEnv {
	e := &StepEnv{r: r, s: s, sr: sr, view: view, region: runtime.WholeDocument, full: r.sess.State().Value(), submit: submit}
	if r.j.Config.Projected() {
		e.region = s.Contract.ViewRegion()
	}
	return e
}

// Over reports whether the step is over: committed, or ended without a
// commit (Ended says how).
func (e *StepEnv) Over() bool { return e.committed || e.ended != "" }

// Ended is how the step ended without a commit ("" while it goes on, or
// after a commit).
func (e *StepEnv) Ended() string { return e.ended }

// end ends the step without a commit, keeping the first reason.
func (e *StepEnv) end(code string) {
	if e.ended == "" && !e.committed {
		e.ended = code
	}
}

// spend counts n bytes the actor sent against the step's byte budget; it
// reports false, ending the step, when the budget is spent.
func (e *StepEnv) spend(n int64) bool {
	e.bytes += n
	if e.bytes > e.r.o.maxStepBytes() {
		e.end(EndedBytes)
		return false
	}
	return true
}

// Call answers one tool call: the result's text, as the actor is given
// it, and the call's record. Every call counts against the step's tool
// call and byte budgets, an unknown or malformed one too; the name, the
// arguments and the call's id are outputs of the actor (scanned for
// leaks, Output), the result is not. The error is non-nil only when ctx ends.
func (e *StepEnv) Call(ctx context.Context, c actors.ToolCall) (string, rundir.ToolCall, error) {
	e.Output(c)
	return e.run(ctx, c)
}

// Output takes a tool call the actor sent as its outputs, whether or
// not it runs (a call after the one that committed, a call past the
// budgets): its name, its arguments and its id, each up to the answer
// limit (what an actor keeps of an answer), scanned for leaks in field
// scoring.FieldToolCall, each kind of string also read joined with the
// same kind of the step's earlier calls (scoring.Output.Seq).
func (e *StepEnv) Output(c actors.ToolCall) {
	limit := int(min(e.r.o.maxAnswer(), int64(math.MaxInt)))
	for _, o := range [...]struct{ seq, text string }{{"tool_call/name", c.Name}, {"tool_call/arguments", c.Arguments}, {"tool_call/id", c.ID}} {
		e.r.output(scoring.Output{Step: e.s.ID, Field: scoring.FieldToolCall, Text: textcut.Cut(o.text, limit), Seq: o.seq})
	}
}

// run is Call without taking the call's strings as outputs (Output).
func (e *StepEnv) run(ctx context.Context, c actors.ToolCall) (string, rundir.ToolCall, error) {
	rec := rundir.ToolCall{ID: textcut.Cut(c.ID, 256), Name: textcut.Cut(c.Name, 256)}
	rec.Arguments, rec.ArgumentsBytes = clipKept(c.Arguments)
	if c.Oversize > 0 {
		rec.ArgumentsBytes = c.Oversize
	}
	text, code, err := e.call(ctx, c)
	if err != nil {
		return "", rec, err
	}
	if c.Name == actors.ToolReadState && (code == "" || code == ToolAbsent) {
		var a readArgs
		if decodeArgs(c.Arguments, &a) == nil && a.Pointer != nil {
			rec.Read, rec.Pointer = true, textcut.Cut(*a.Pointer, 1024)
			if p, err := runtime.ParsePointer(*a.Pointer); err == nil {
				rec.Hidden = e.hidden(p)
			}
		}
	}
	if code != "" {
		rec.Error = code
		text = "error: " + code + ": " + text
	}
	rec.Result, rec.ResultBytes = clipKept(text)
	return text, rec, nil
}

func (e *StepEnv) call(ctx context.Context, c actors.ToolCall) (text, code string, err error) {
	if e.Over() {
		return "the step is over", ToolStepOver, nil
	}
	e.calls++
	size := max(c.Oversize, int64(len(c.Arguments)))
	spent := !e.spend(int64(len(c.Name)) + size)
	if e.calls > e.r.o.maxToolCalls() {
		e.end(EndedToolCalls)
		spent = true
	}
	if spent {
		return "the step's budget is spent; the step is over", ToolBudgetSpent, nil
	}
	if limit := e.r.o.maxAnswer(); size > limit {
		return fmt.Sprintf("the arguments have %d bytes; the limit is %d", size, limit), ToolOversized, nil
	}
	switch c.Name {
	case actors.ToolReadState:
		text, code = e.read(c.Arguments)
		return text, code, nil
	case actors.ToolProposePatch:
		return e.propose(ctx, c.Arguments)
	}
	return fmt.Sprintf("the tools are %s and %s", actors.ToolReadState, actors.ToolProposePatch), ToolUnknown, nil
}

// readArgs are read_state's arguments.
type readArgs struct {
	Pointer *string `json:"pointer"`
	Depth   *int    `json:"depth"`
}

// read answers read_state: the value at the pointer in what the actor may
// see, containers below the depth shown as their sizes. A location it may
// not see answers as an absent one: the same code and the same text,
// since both are computed from the view alone.
func (e *StepEnv) read(args string) (text, code string) {
	var a readArgs
	if err := decodeArgs(args, &a); err != nil {
		return err.Error(), ToolMalformed
	}
	if a.Pointer == nil {
		return `"pointer" is required`, ToolMalformed
	}
	depth := DefaultReadDepth
	if a.Depth != nil {
		if *a.Depth < 0 {
			return `"depth" must be at least 0`, ToolMalformed
		}
		depth = *a.Depth
	}
	p, err := runtime.ParsePointer(*a.Pointer)
	if err != nil {
		return "not a JSON Pointer (RFC 6901)", ToolBadPointer
	}
	v, ok := e.lookup(p)
	if !ok {
		return "nothing at this pointer in the state as you see it", ToolAbsent
	}
	b, err := runtime.EncodeIndent(Outline(v, depth), "")
	if err != nil {
		return "the value cannot be shown", ToolTooLarge
	}
	if len(b) > MaxResultBytes {
		return fmt.Sprintf("the value has %d bytes as shown, more than %d; read a smaller depth or a deeper pointer", len(b), MaxResultBytes), ToolTooLarge
	}
	return string(b), ""
}

// lookup is the value at p in what the actor may see. A hidden array
// element, which the view keeps as null so that positions hold, is not
// there.
func (e *StepEnv) lookup(p runtime.Pointer) (any, bool) {
	v, ok := runtime.Lookup(e.view, p)
	if !ok || (v == nil && !e.region.Visible(p)) {
		return nil, false
	}
	return v, true
}

// hidden reports whether p names a location of the state that the actor
// may not see (for the record: it was answered as absent).
func (e *StepEnv) hidden(p runtime.Pointer) bool {
	if _, ok := e.lookup(p); ok {
		return false
	}
	_, ok := runtime.Lookup(e.full, p)
	return ok
}

// propose answers propose_patch: the proposal goes through the session as
// an answer of the json protocol does (the configuration's gates decide,
// the full contract audits), and the result is the decision with the
// verifier's redacted messages. A commit ends the step; a rejection uses
// one of MaxAttempts.
func (e *StepEnv) propose(ctx context.Context, args string) (string, string, error) {
	if !isObject(args) {
		return `the arguments must be a JSON object {"patch": [...], "note": "..."}`, ToolMalformed, nil
	}
	r, s, sr := e.r, e.s, e.sr
	e.proposals++
	resp := actors.Response{Raw: args}
	before, phase := r.sess.State(), r.sess.Phase()
	res, err := r.decide(ctx, s, resp, e.submit)
	if err != nil {
		return "", "", err
	}
	own, inherited, err := ownViolation(ctx, s, before, phase, res.Decision)
	if err != nil {
		return "", "", err
	}
	turns := sr.Turns
	r.record(sr, s, e.proposals, e.prompt, resp, res.Decision, own, inherited, "")
	sr.Turns = turns
	if res.Committed {
		e.committed = true
		e.endRun = r.committedStep(sr, s, res)
		return "committed: the step is done", "", nil
	}
	var b strings.Builder
	left := r.o.MaxAttempts - e.proposals
	fmt.Fprintf(&b, "rejected (proposal %d of %d):", e.proposals, r.o.MaxAttempts)
	for _, g := range res.Gates {
		if !g.Passed {
			fmt.Fprintf(&b, "\n- %s: %s: %s", g.Gate, g.Code, feedbackText(g.Message))
		}
	}
	if left <= 0 {
		e.end(EndedAttempts)
		b.WriteString("\nNo proposal is left; the step is over.")
	} else {
		fmt.Fprintf(&b, "\nPropose a corrected patch (%d left).", left)
	}
	return b.String(), "", nil
}

// Outline is v with the containers depth levels below it shown as their
// sizes: "{…N members}" for an object, "[…N items]" for an array (depth
// 0 shows v's own size). Scalars are as they are.
func Outline(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if depth <= 0 {
			return fmt.Sprintf("{…%d members}", len(x))
		}
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = Outline(c, depth-1)
		}
		return out
	case []any:
		if depth <= 0 {
			return fmt.Sprintf("[…%d items]", len(x))
		}
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = Outline(c, depth-1)
		}
		return out
	}
	return v
}

// decodeArgs decodes a tool call's arguments into v strictly: one JSON
// object, with no member v does not have.
func decodeArgs(args string, v any) error {
	if !isObject(args) {
		return fmt.Errorf("the arguments must be a JSON object")
	}
	d := json.NewDecoder(strings.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return fmt.Errorf("the arguments do not decode: %s", actors.OneLine(err.Error()))
	}
	return nil
}

// isObject reports whether s is one valid JSON object.
func isObject(s string) bool {
	t := bytes.TrimSpace([]byte(s))
	return len(t) > 0 && t[0] == '{' && json.Valid(t)
}

// clipKept is s as a record keeps it: its first 64 KiB and, when cut,
// its full length.
func clipKept(s string) (string, int64) {
	if len(s) <= keptToolBytes {
		return s, 0
	}
	return textcut.Cut(s, keptToolBytes), int64(len(s))
}

// maxAnswer is the answer limit in bytes.
func (o *Options) maxAnswer() int64 {
	if o.MaxAnswerBytes > 0 {
		return o.MaxAnswerBytes
	}
	return actors.DefaultMaxAnswerBytes
}
