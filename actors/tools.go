package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/tools"
)

// ToolCall is one call of a tool an actor made: the provider's id for it
// (a transport without ids gets "call_N"), the tool's name and its
// arguments as the actor wrote them (meant to be a JSON object, but any
// text: a malformed one is answered with an error result).
type ToolCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	// Oversize, when positive, is the full length in bytes of arguments
	// longer than the answer limit (Response.Clip), of which Arguments
	// keeps the first limit bytes (the record KeptAnswerBytes of them).
	Oversize int64 `json:"oversize,omitempty"`
}

// toolTurn is what a no-model actor in the tools protocol does next, from
// the conversation so far: read (the pointers it has not read yet), then
// propose; after a rejection it proposes again, as it answers again in
// the json protocol.
func toolTurn(req Request, reads []string, proposal []byte) (Response, error) {
	if !calledBefore(req.Messages, tools.ReadState.Name) && len(reads) > 0 {
		var calls []ToolCall
		for i, p := range reads {
			args, err := json.Marshal(map[string]any{"pointer": p, "depth": 1})
			if err != nil {
				return Response{}, err
			}
			calls = append(calls, ToolCall{ID: fmt.Sprintf("read_%d", i+1), Name: tools.ReadState.Name, Arguments: string(args)})
		}
		return Response{Calls: calls}, nil
	}
	n := 0
	for _, m := range req.Messages {
		for _, c := range m.ToolCalls {
			if c.Name == tools.ProposePatch.Name {
				n++
			}
		}
	}
	return Response{Calls: []ToolCall{{ID: fmt.Sprintf("propose_%d", n+1), Name: tools.ProposePatch.Name, Arguments: string(proposal)}}}, nil
}

// calledBefore reports whether an assistant message of msgs called tool.
func calledBefore(msgs []Message, tool string) bool {
	for _, m := range msgs {
		for _, c := range m.ToolCalls {
			if c.Name == tool {
				return true
			}
		}
	}
	return false
}

// maxTouchedReads bounds the reads a no-model actor makes before it
// proposes (touchedPaths), far below the runner's tool-call budget: a
// reference generated from rules on a grown state touches hundreds of
// records.
const maxTouchedReads = 16

// touchedPaths lists the locations a proposal's patch touches, for a
// no-model actor to read before it proposes: each operation's path (its
// parent for an add, which may create it) and from, in order, once each.
// When there are more than maxTouchedReads, the deepest are replaced by
// their containers until they fit (the hundred tickets a patch classifies are
// read as their list).
func touchedPaths(proposal []byte) ([]string, error) {
	var p struct {
		Patch []struct {
			Op   string  `json:"op"`
			Path string  `json:"path"`
			From *string `json:"from"`
		} `json:"patch"`
	}
	if err := json.Unmarshal(proposal, &p); err != nil {
		return nil, err
	}
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, op := range p.Patch {
		if op.From != nil {
			add(*op.From)
		}
		if op.Op == "add" {
			add(parentPointer(op.Path))
		} else {
			add(op.Path)
		}
	}
	for len(out) > maxTouchedReads {
		deepest := 0
		for _, p := range out {
			deepest = max(deepest, strings.Count(p, "/"))
		}
		if deepest <= 1 {
			break
		}
		prev := out
		out = nil
		for _, p := range prev {
			if strings.Count(p, "/") == deepest {
				p = parentPointer(p)
			}
			add(p)
		}
	}
	return out, nil
}

// parentPointer is the pointer to the container of p's location ("" for
// a top-level member or for "" itself).
func parentPointer(p string) string {
	if i := strings.LastIndexByte(p, '/'); i > 0 {
		return p[:i]
	}
	return ""
}

// ToolSpeaker is an actor that says whether it answers the tools protocol
// (Request.Tools): with text and tool calls, a turn at a time.
type ToolSpeaker interface {
	SpeaksTools() bool
}

// SpeaksTools reports whether a answers the tools protocol: whether every
// actor Walk finds in it that is no Wrapper (through the cache, the rate
// limit, a role map) is a ToolSpeaker that says it does. The no-model
// actors, the live ones, the file and MCP actors do; the exec actor (and
// no actor at all, nil) does not.
func SpeaksTools(a Actor) bool {
	if a == nil {
		return false
	}
	return Walk(a, func(x Actor) bool {
		if _, wraps := x.(Wrapper); wraps {
			return true
		}
		t, ok := x.(ToolSpeaker)
		return ok && t.SpeaksTools()
	})
}

// AgentEnv is what an external agent works on during one run of the tools
// protocol (a Driver's side of the runner): the current step's task and
// the step's tools. It is safe for concurrent use.
type AgentEnv interface {
	// Task is the current step's task: the first messages of the step
	// as text (instruction, contract, the view or its outline).
	Task() string
	// Call runs one tool call on the current step and returns its result
	// and whether it is an error result. A call that ends a step answers
	// once the next step's task is set, and says what it is; after the
	// run is over every call answers that it is.
	Call(ctx context.Context, c ToolCall) (result string, isError bool)
	// Over is closed when the run is over (every step ran).
	Over() <-chan struct{}
	// Message hands on one message the agent sent, as its transport
	// read it (the raw text, up to the transport's bound; over HTTP a
	// request's head and its body are two messages), before
	// it is acted on: every string in it is an output of the agent at
	// the current step, scanned for leaks (scoring.FieldMCPMessage); once
	// the run is over, at its last step until the agent's session ends.
	// It returns once the runner has taken or scanned the text (or the
	// session has ended); a transport passes a ctx that does not end
	// with its client's connection.
	Message(ctx context.Context, text string)
}

// RunEnv is an AgentEnv that names its run: the id of the case and the
// name of the configuration it runs in, as the run's record has them. An
// mcp: agent's server instructions name them ("PatchBench case ID,
// configuration NAME."); an env that is not a RunEnv leaves them empty.
type RunEnv interface {
	AgentEnv
	Run() (caseID, config string)
}

// StderrEnv is an AgentEnv that takes what the agent's process writes to
// standard error (an mcp: agent's): Stderr is the writer that receives
// it, whole, as it arrives, from another goroutine; its errors are
// ignored. The runner records an excerpt of it and scans it for leaks.
type StderrEnv interface {
	AgentEnv
	Stderr() io.Writer
}

// Driver is an actor of the tools protocol that is not asked turn by turn
// but drives the loop itself: an external agent that calls the tools
// (over MCP). For each run the runner calls Drive once, with the run's
// AgentEnv, and runs the steps on the calls it makes; Drive returns when
// the agent is done (its process ended, its session closed) or ctx ends.
// A step still open when Drive returns ends with agent_exited.
type Driver interface {
	Actor
	Drive(ctx context.Context, env AgentEnv) error
}

// ErrNoToolCalled is what a Driver's Drive returns when its client ended
// the session without calling a tool, and the run is then to be left
// undone rather than recorded: patchbench mcp, whose client (an MCP
// client configuration) may start the server only to list its tools. The
// runner records no run for it unless the client's messages leaked a
// canary (a leak is an outcome); an agent that returns any other error,
// or nil, without calling a tool has its run recorded (an error run, or
// a failed one).
var ErrNoToolCalled = errors.New("no tool was called")
