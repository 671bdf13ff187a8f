// Package tools defines the tools of a step in the tools protocol
// (docs/agents.md): each tool is one Def, which holds its name, its
// description, the JSON Schema of its arguments, its defaults and what it
// does. Every transport serves the same Defs (OpenAI, Ollama and
// Anthropic tool calling, MCP, answer files, through Specs), and the
// runner's step environment calls them (Def.Call) on a Step: the state as
// the step's actor may see it, and a way to propose a patch. A tool
// returns what happened (Result); the environment counts the budgets
// and keeps the record.
//
// A new tool is one more Def in All, in a file of its own: its Spec is
// offered from then on, its Usage is named in the prompt and in the MCP
// server's instructions, and Find finds it for the environment.
package tools

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/runtime"
)

// Spec is a tool as an actor is offered it: its name, what it does and
// the JSON Schema of its arguments (an object). Its JSON is the one every
// transport is given and a turn's request digest covers.
type Spec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// Def is one tool: what is offered (Spec), how the prompt names it
// (Usage) and what it does (Call).
type Def struct {
	Spec
	// Usage is the tool as the prompt and the MCP server's instructions
	// name it: its call and what it does, one clause without a final
	// full stop, e.g. "read_state(pointer, depth) shows the state at a
	// JSON Pointer as you may see it".
	Usage string
	// Call answers one call on step s: args are the call's arguments as
	// the actor sent them (meant to be a JSON object; anything else is
	// answered with CodeMalformed). The error is non-nil only when ctx
	// ends while the step decides (Step.Propose).
	Call func(ctx context.Context, s Step, args string) (Result, error)
}

// Step is what a tool works on: one step of a run as its actor may see
// it. The runner's step environment implements it.
type Step interface {
	// Lookup is the value at p in the state as the actor may see it,
	// and whether there is one there: a location it may not see is not.
	// The view keeps a hidden array element as null so that positions
	// hold: a tool that walks the value at a pointer (query_state,
	// search_state) asks Lookup about a null it meets.
	Lookup(p runtime.Pointer) (any, bool)
	// ResultLimit is the most bytes one tool result may have (the run's
	// --max-result-bytes): a tool that would answer more answers less,
	// saying what it left out and how to read the rest.
	ResultLimit() int
	// Propose runs a proposal, the arguments of propose_patch as sent
	// ({"patch": [...], "note": "..."}), through the step's gates and
	// says what they decided. The error is ctx's, when it ends.
	Propose(ctx context.Context, args string) (Verdict, error)
}

// Verdict is the decision on a proposal (Step.Propose).
type Verdict struct {
	Committed bool
	// N is the proposal's number in the step (1 for the first) and Of
	// the proposals the step allows.
	N, Of int
	// Rejections are the gates that rejected it, one "gate: code:
	// message" each, the messages as redacted for the actor.
	Rejections []string
}

// Result is what a call did: the text the actor is given, and the error
// code when the call could not do what it asked ("" when it could).
type Result struct {
	Text string
	Code string
	// Read is the pointer a read named, when the tool got as far as
	// looking there (found or absent), for the record to say which
	// locations an actor asked for; nil otherwise.
	Read *string
}

// The codes of a tool's error results (rundir.ToolCall.Error). The
// environment answers the first three and the last two before a tool
// runs; the tools answer the others.
const (
	CodeUnknown     = "unknown_tool"        // no tool has the call's name
	CodeMalformed   = "malformed_arguments" // not a JSON object of the tool's members
	CodeOversized   = "oversized_arguments" // the arguments are over the answer limit
	CodeAbsent      = "absent"              // nothing at the pointer in the state as the actor sees it
	CodeBadPointer  = "bad_pointer"         // not a JSON Pointer (RFC 6901)
	CodeTooLarge    = "result_too_large"    // one value is over the result limit (Step.ResultLimit) and cannot be paged
	CodeBadQuery    = "bad_query"           // not a JSONPath query (RFC 9535), or one over the work bounds
	CodeStepOver    = "step_over"           // the step has committed or ended
	CodeBudgetSpent = "budget_spent"        // the call spent the step's tool calls or bytes
)

// DefaultResultBytes is the result limit (Step.ResultLimit) of a run
// that sets none: 16 KiB.
const DefaultResultBytes = 16 << 10

// MinResultBytes is the least result limit a tool works with: a
// Step.ResultLimit below it is taken as it, so that a page always has
// room for its envelope and note.
const MinResultBytes = 1024

// resultLimit is s's result limit, at least MinResultBytes.
func resultLimit(s Step) int { return max(s.ResultLimit(), MinResultBytes) }

// All are the tools of a step, in the order they are offered.
var All = []Def{ReadState, QueryState, SearchState, ProposePatch}

// Specs are All as offered to an actor, in order.
func Specs() []Spec {
	out := make([]Spec, len(All))
	for i, d := range All {
		out[i] = d.Spec
	}
	return out
}

// Find is the tool of a name.
func Find(name string) (Def, bool) {
	i := slices.IndexFunc(All, func(d Def) bool { return d.Name == name })
	if i < 0 {
		return Def{}, false
	}
	return All[i], true
}

// Names are the tools' names in order, as an English list ("read_state
// and propose_patch"), for an unknown tool's error.
func Names() string {
	names := make([]string, len(All))
	for i, d := range All {
		names[i] = d.Name
	}
	return List(names)
}

// Usages are the tools' Usage clauses as an English list ("A, B, C, and D"),
// for the prompt and the MCP server's instructions.
func Usages() string {
	u := make([]string, len(All))
	for i, d := range All {
		u[i] = d.Usage
	}
	return List(u)
}

// List joins items as an English list: "a", "a and b", "a, b, and c".
func List(items []string) string {
	switch len(items) {
	case 0:
		return ""
	case 1:
		return items[0]
	case 2:
		return items[0] + " and " + items[1]
	}
	return strings.Join(items[:len(items)-1], ", ") + ", and " + items[len(items)-1]
}

// Count is the number of tools as a word ("two"), for the prompt.
func Count() string {
	words := []string{"no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine"}
	if n := len(All); n < len(words) {
		return words[n]
	}
	return "these"
}

// decodeArgs decodes a call's arguments into v strictly: one JSON
// object, with no member v does not have.
func decodeArgs(args string, v any) error {
	if !isObject(args) {
		return errNotObject
	}
	d := json.NewDecoder(strings.NewReader(args))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return argsError("the arguments do not decode: " + textcut.OneLine(err.Error()))
	}
	return nil
}

// argsError is a malformed call's message.
type argsError string

func (e argsError) Error() string { return string(e) }

const errNotObject = argsError("the arguments must be a JSON object")

// isObject reports whether s is one valid JSON object.
func isObject(s string) bool {
	t := strings.TrimSpace(s)
	return len(t) > 0 && t[0] == '{' && json.Valid([]byte(t))
}
