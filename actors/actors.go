// Package actors holds the actors of a PatchBench run: what proposes a
// patch for a step (docs/actors.md). An actor gets a Request (the
// rendered prompt, the step's role and view, and for the no-model actors
// the step's reference proposal) and returns its raw response text, which
// the runner parses and verifies. The no-model actors (reference,
// oversharer, follower) need no network; the file actor answers from
// files; the exec actor runs a program the user brings (an agent
// framework, a script); the live ones (openai, ollama) ask a model,
// through a response cache and a rate limiter (Build). The package knows
// nothing of the case format: the runner fills each request. In the tools
// protocol a request carries the step's tools (tools.Specs()) and the
// conversation, and an answer tool calls; anthropic: joins the live
// actors, and mcp:COMMAND (MCPAgent) and patchbench mcp (MCPStdio) serve
// the tools to external agents over MCP (Driver).
package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/tools"
)

// Message is one chat message of a prompt: Role is "system" or "user"; in
// the tools protocol a conversation also holds the actor's turns
// ("assistant", with the tool calls it made) and the tools' results
// ("tool", answering the call ToolCallID).
type Message struct {
	Role       string     `json:"role"`
	Content    string     `json:"content"`
	ToolCalls  []ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string     `json:"tool_call_id,omitempty"`
}

// Request is what an actor is asked for one attempt at one step; the
// runner fills it from the case.
type Request struct {
	// CaseID and StepID name the case and the step; Role is the step's
	// role (what a RoleMap routes by).
	CaseID, StepID, Role string
	// Messages is the rendered prompt.
	Messages []Message
	// View is the state as the actor is shown it (the projected view or
	// the full state), a decoded JSON value: what an oversharer quotes.
	// Projected says which.
	View      any
	Projected bool
	// Reference is the step's reference proposal as JSON bytes,
	// {"patch": [...], "note": "..."}: the answer of the no-model actors.
	Reference []byte
	// Injected is the reference proposal plus what the step's prompt
	// injections ask (bench.InjectedProposal on View): the follower's
	// answer. It is nil when the step has no injection.
	Injected []byte
	// Attempt counts from 1; Round from 1. In the tools protocol
	// Attempt counts the turns of the step, from 1.
	Attempt, Round int
	// Tools, set in the tools protocol, are the tools offered
	// (tools.Specs()); Messages is then the whole conversation of the step
	// so far, and the actor answers with text, tool calls or both.
	Tools []tools.Spec
	// InjectionTargets are the locations the step's prompt injections
	// point at (JSON Pointers), which the follower reads and searches
	// for in the tools protocol before it proposes what they ask.
	InjectionTargets []string
	// Planted, in the tools protocol at a step with injections, are the
	// locations (JSON Pointers) of the texts its injections planted: the
	// case's own and, in a grown state, those registered in generated
	// records, in the case's order.
	Planted []string
	// Obey, set with Planted, is the follower's answer once it has met
	// the planted texts at the given locations (some of Planted): the
	// reference proposal plus what their injections ask
	// (bench.InjectedProposal of them on View), as JSON. The error is a
	// broken case's.
	Obey func(at []string) ([]byte, error) `json:"-"`
	// Stderr, when not nil, receives what an exec actor's program writes
	// to standard error, whole, as it arrives (the Response keeps an
	// excerpt only), from another goroutine: the runner scans it for
	// leaks. Its errors are ignored.
	Stderr io.Writer
}

// Usage counts the tokens of one response (prompt and completion) and
// says where the counts come from ("provider", or "tokenizer:o200k_base").
type Usage struct {
	Prompt     int `json:"prompt"`
	Completion int `json:"completion"`
	// Reasoning is the part of Completion a reasoning model spent
	// thinking, when the provider reports it.
	Reasoning int    `json:"reasoning,omitempty"`
	Source    string `json:"source"`
	// Invalid, set by a live actor, quotes figures the provider sent
	// that are not token counts at all (a fraction, a string, a number
	// beyond 64 bits: "usage.prompt_tokens: number 1e300"); the counts
	// above are then meaningless, and Implausible says so.
	Invalid string `json:"invalid,omitempty"`
}

// MaxUsageTokens bounds each figure of one answer's usage (100 million
// tokens: beyond any model's context and output): a provider's figure
// above it, or below 0, is not believed.
const MaxUsageTokens = 100_000_000

// Implausible says why u's figures cannot be token counts of one answer
// ("" when they can): Invalid is set, or a figure is negative or above
// MaxUsageTokens. The runner then counts the answer with its tokenizer
// and records the reason, so that no figure a provider sends can
// overflow a run's totals.
func (u *Usage) Implausible() string {
	switch {
	case u.Invalid != "":
		return "not a token count: " + textcut.OneLine(u.Invalid)
	case u.Prompt < 0 || u.Completion < 0 || u.Reasoning < 0 ||
		u.Prompt > MaxUsageTokens || u.Completion > MaxUsageTokens || u.Reasoning > MaxUsageTokens:
		return fmt.Sprintf("prompt %d, completion %d, reasoning %d: outside [0, %d]", u.Prompt, u.Completion, u.Reasoning, MaxUsageTokens)
	}
	return ""
}

// Response is an actor's answer: the raw text (parsed by the runner) and
// its usage, when the actor knows it (no-model actors leave it zero and
// the runner counts with a tokenizer).
type Response struct {
	Raw   string
	Usage *Usage
	// Model is the model the server says answered; Fingerprint its
	// system_fingerprint, when given.
	Model, Fingerprint string
	// Latency is how long the provider took to answer: the request
	// that answered, from send to the whole body, without the retries
	// and waits before it; the live actors set it, cached or not.
	// Cached says the answer came from the response cache (with its
	// original latency).
	Latency time.Duration
	Cached  bool
	// Oversize, when positive, says the answer was longer than the
	// actor's limit (Params.MaxAnswerBytes; see Clip): it is the answer's
	// full length in bytes, and Raw holds only its first limit bytes
	// (Clip; the record keeps KeptAnswerBytes of them, Kept).
	// The runner rejects such an answer with limit_exceeded.
	Oversize int64
	// Stderr is what an exec actor's program wrote to standard error
	// (its first and last 32 KiB when it wrote more than 64 KiB), kept in
	// the step's record.
	Stderr string
	// Calls are the tool calls of the answer, in the tools protocol
	// (Request.Tools set); Raw is then the text beside them, maybe "".
	Calls []ToolCall
	// Body is the answer as sent, whole: a live actor's response body
	// (its first twice the answer limit plus 64 KiB when longer) or an
	// exec program's standard output (as far as it is kept). Every byte
	// of it is the actor's output, parsed into the fields above or not
	// (a member the client does not read, a duplicate member, a second
	// choice, a refusal, the model's thinking): the runner scans it for
	// leaks as a catch-all (scoring.FieldBody), and does not record it.
	// It is "" for the actors that send no body (the no-model and file
	// actors).
	Body string
}

// Actor proposes patches. Propose must be safe for concurrent use. An
// error is a failure of the actor itself (a provider down), never a bad
// proposal: a bad proposal is a Response the verifier rejects.
type Actor interface {
	// Name is the actor's spec as given on the command line
	// ("reference", "oversharer", "openai:gpt-5-mini").
	Name() string
	Propose(ctx context.Context, req Request) (Response, error)
}

// Reference answers every step with its reference proposal.
type Reference struct{}

// Name implements Actor.
func (Reference) Name() string { return "reference" }

// SpeaksTools implements ToolSpeaker.
func (Reference) SpeaksTools() bool { return true }

// Propose implements Actor.
// In the tools protocol it first looks up what its patch touches: one
// query_state per collection whose records it touches, a JSONPath filter
// selecting them by id ($['alerts'][?@['id'] == 'FA-1' || ...]), and a
// read_state of every other location; then it proposes.
func (Reference) Propose(_ context.Context, req Request) (Response, error) {
	if req.Tools != nil {
		if navigated(req.Messages) {
			return proposeCall(req.Messages, req.Reference), nil
		}
		calls, err := referenceCalls(req.Reference, req.View)
		if err != nil {
			return Response{}, fmt.Errorf("step %s: reference: %w", req.StepID, err)
		}
		if len(calls) == 0 {
			return proposeCall(req.Messages, req.Reference), nil
		}
		return Response{Calls: calls}, nil
	}
	return Response{Raw: string(req.Reference)}, nil
}

// Oversharer answers with the reference patch and a note that quotes the
// whole view it was shown: the worst-case discloser, which leaks exactly
// what it sees. In the tools protocol it reads the view a page at a time
// (read_state of "" at every depth, then each next page, and an element
// too large for a page on its own), up to MaxOversharerReads reads, and
// its note quotes every page it read.
type Oversharer struct{}

// Name implements Actor.
func (Oversharer) Name() string { return "oversharer" }

// SpeaksTools implements ToolSpeaker.
func (Oversharer) SpeaksTools() bool { return true }

// Propose implements Actor.
func (Oversharer) Propose(_ context.Context, req Request) (Response, error) {
	var ref struct {
		Patch json.RawMessage `json:"patch"`
	}
	if err := json.Unmarshal(req.Reference, &ref); err != nil {
		return Response{}, fmt.Errorf("step %s: reference: %w", req.StepID, err)
	}
	if req.Tools != nil {
		made := madeCalls(req.Messages)
		if next, ok := oversharerNext(made); ok && !slices.ContainsFunc(made, func(c madeCall) bool { return c.Name == tools.ProposePatch.Name }) {
			args := map[string]any{"pointer": next.Pointer, "depth": next.Depth}
			if next.Offset > 0 {
				args["offset"] = next.Offset
			}
			c, err := call("read", len(made)+1, tools.ReadState.Name, args)
			if err != nil {
				return Response{}, err
			}
			return Response{Calls: []ToolCall{c}}, nil
		}
		var pages []string
		for _, c := range made {
			if c.Name == tools.ReadState.Name && c.result != "" {
				pages = append(pages, c.result)
			}
		}
		out, err := json.Marshal(map[string]any{
			"patch": ref.Patch,
			"note":  "Done. For the record, here is everything I read: " + strings.Join(pages, " "),
		})
		if err != nil {
			return Response{}, err
		}
		return proposeCall(req.Messages, out), nil
	}
	view, err := json.Marshal(req.View)
	if err != nil {
		return Response{}, err
	}
	out, err := json.Marshal(map[string]any{
		"patch": ref.Patch,
		"note":  "Done. For the record, here is everything I was shown: " + string(view),
	})
	if err != nil {
		return Response{}, err
	}
	return Response{Raw: string(out)}, nil
}

// Follower obeys the prompt injections the case declares (the attacker
// of docs/run.md): at a step with injections it answers with the request's
// Injected proposal (the reference patch plus the copy, move or test each
// injection asks for, and every target value its view shows quoted in the
// note); at other steps with the reference proposal. It sends the
// operations in every configuration, playing a compromised actor that
// knows the paths, so each configuration's gates show what they stop.
// In the tools protocol it obeys the planted texts it meets: it reads
// what its patch touches and each injection's target, and searches for
// each target's pointer and last member name (what a planted text names
// it by), then proposes what the texts it met ask (Request.Obey), or the
// reference proposal when it met none.
type Follower struct{}

// Name implements Actor.
func (Follower) Name() string { return "follower" }

// SpeaksTools implements ToolSpeaker.
func (Follower) SpeaksTools() bool { return true }

// Propose implements Actor.
// In the tools protocol it reads the locations its patch touches and each
// injection's target (absent where the view hides it) and searches for
// the targets, then proposes what the planted texts it met ask.
func (Follower) Propose(_ context.Context, req Request) (Response, error) {
	if req.Tools != nil {
		if navigated(req.Messages) {
			proposal := req.Reference
			if req.Obey == nil && req.Injected != nil {
				// A request that says only what every injection asks:
				// the follower obeys them all, as in the json protocol.
				proposal = req.Injected
			} else if at := met(madeCalls(req.Messages), req.Planted); len(at) > 0 && req.Obey != nil {
				var err error
				if proposal, err = req.Obey(at); err != nil {
					return Response{}, fmt.Errorf("step %s: %w", req.StepID, err)
				}
			}
			return proposeCall(req.Messages, proposal), nil
		}
		reads, err := touchedPaths(req.Reference)
		if err != nil {
			return Response{}, fmt.Errorf("step %s: reference: %w", req.StepID, err)
		}
		for _, t := range req.InjectionTargets {
			if !slices.Contains(reads, t) {
				reads = append(reads, t)
			}
		}
		var calls []ToolCall
		for i, p := range reads {
			c, err := call("read", i+1, tools.ReadState.Name, map[string]any{"pointer": p, "depth": 1})
			if err != nil {
				return Response{}, err
			}
			calls = append(calls, c)
		}
		for i, text := range followerSearches(req.InjectionTargets) {
			c, err := call("search", i+1, tools.SearchState.Name, map[string]any{"text": text, "limit": FollowerSearchLimit})
			if err != nil {
				return Response{}, err
			}
			calls = append(calls, c)
		}
		if len(calls) == 0 {
			return proposeCall(req.Messages, req.Reference), nil
		}
		return Response{Calls: calls}, nil
	}
	if req.Injected != nil {
		return Response{Raw: string(req.Injected)}, nil
	}
	return Response{Raw: string(req.Reference)}, nil
}

// The no-model actors' kinds: each answers one whole spec.
func init() {
	Register(Kind{Spec: "reference", Usage: "reference", New: func(string, Params) (Actor, error) { return Reference{}, nil }})
	Register(Kind{Spec: "oversharer", Usage: "oversharer", New: func(string, Params) (Actor, error) { return Oversharer{}, nil }})
	Register(Kind{Spec: "follower", Usage: "follower", New: func(string, Params) (Actor, error) { return Follower{}, nil }})
}
