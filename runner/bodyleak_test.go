package runner

import (
	"bytes"
	"encoding/json"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/internal/fakeagent"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/scoring"
	"github.com/patchbench/patchbench/tools"
)

// proposeTurn is the right proposal, as a model's second turn.
var proposeTurn = fakeagent.Turn{Calls: [][2]string{{tools.ProposePatch.Name, rightProposal}}}

// readTicket is a read of the ticket, as a model writes it.
var readTicket = [2]string{tools.ReadState.Name, `{"pointer": "/ticket"}`}

// replace is a Rewrite of fakeagent.Turn that replaces old with new once
// in the body.
func replace(old, new string) func([]byte) []byte {
	return func(b []byte) []byte { return bytes.Replace(b, []byte(old), []byte(new), 1) }
}

// runFake runs the example case in PatchOptic with a live actor of spec
// against a fakeagent playing script, in the tools protocol or (jsonProtocol
// set)
// the json protocol.
func runFake(t *testing.T, spec string, script []fakeagent.Turn, jsonProtocol bool) *rundir.Record {
	t.Helper()
	srv := httptest.NewServer(&fakeagent.Server{Script: script})
	defer srv.Close()
	a := liveActor(t, spec, srv.URL, "", false)
	if jsonProtocol {
		return runJSON(t, "patchoptic", a)
	}
	return runTools(t, "patchoptic", a, Options{Spec: runspec.Spec{MaxTurns: 3}})
}

// checkLeak fails t unless r has an outcome and leaks the card once, at
// step reply, in field.
func checkLeak(t *testing.T, r *rundir.Record, field string) {
	t.Helper()
	if !r.HasOutcome() || !r.Leaked || len(r.Leaks) != 1 {
		t.Fatalf("status %s (error %v) leaked %v leaks %+v", r.Status, r.Error, r.Leaked, r.Leaks)
	}
	if l := r.Leaks[0]; l.Secret != "card" || l.Step != "reply" || l.Where != scoring.WhereOutput || l.Field != field {
		t.Errorf("leak %+v, want the card at step reply in field %q", l, field)
	}
}

// TestLiveAnswerScannedToTheLimit: through each wire format, the card
// 100 KiB into an answer (past the 64 KiB a record keeps, within the
// 1 MiB answer limit) leaks wherever it is: in a text of 1.2 MiB (a body
// within the bound the actor reads) in the tools and the json protocols,
// in a text of more than 3 MiB (a body past it), and in the arguments of
// a call of 1.2 MiB. The record keeps 64 KiB.
func TestLiveAnswerScannedToTheLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("streams answers up to their limit")
	}
	pad := strings.Repeat("y", 100<<10)
	text := pad + " card " + card + " " + strings.Repeat("z", 1100<<10)
	huge := pad + " card " + card + " " + strings.Repeat("z", 3<<20)
	args := `{"pointer": "/ticket", "a": "` + pad + ` ` + card + ` ` + strings.Repeat("z", 1100<<10) + `"}`
	for _, spec := range liveSpecs {
		for _, tt := range []struct {
			name         string
			turn         fakeagent.Turn
			jsonProtocol bool
			field        string
			kept         bool // the turn's text is kept (64 KiB) in the record
		}{
			{"1.2 MiB text, tools", fakeagent.Turn{Text: text, Calls: [][2]string{readTicket}}, false, scoring.FieldResponse, true},
			{"1.2 MiB text, json", fakeagent.Turn{Text: text}, true, scoring.FieldResponse, false},
			{"3 MiB text", fakeagent.Turn{Text: huge, Calls: [][2]string{readTicket}}, false, scoring.FieldResponse, true},
			{"1.2 MiB arguments", fakeagent.Turn{Calls: [][2]string{{tools.ReadState.Name, args}}}, false, scoring.FieldToolCall, false},
		} {
			t.Run(spec+"/"+tt.name, func(t *testing.T) {
				r := runFake(t, spec, []fakeagent.Turn{tt.turn, proposeTurn}, tt.jsonProtocol)
				checkLeak(t, r, tt.field)
				if s := r.Steps[0]; tt.kept && (len(s.Turns) == 0 || len(s.Turns[0].Text) > actors.KeptAnswerBytes) {
					t.Errorf("the record keeps %d turns, the first's text of %d bytes", len(s.Turns), len(s.Turns[0].Text))
				}
				for _, s := range r.Steps {
					for _, tu := range s.Turns {
						for _, c := range tu.Calls {
							if len(c.Arguments) > actors.KeptAnswerBytes {
								t.Errorf("the record keeps %d bytes of a call's arguments", len(c.Arguments))
							}
						}
					}
				}
			})
		}
	}
}

// TestLiveBodyLeaks: what a provider sends outside the fields the actor
// decodes is its output all the same: the card in each such place leaks,
// in field response_body (or tool_call, where the place is a tool call
// the actor reads: a legacy function_call, an id the client decodes
// first of two), once.
func TestLiveBodyLeaks(t *testing.T) {
	if testing.Short() {
		t.Skip("answers with bodies of 3 MiB")
	}
	padded := `{"pointer": "/ticket", "pad": "` + strings.Repeat("x", 3<<20) + `"}`
	read := fakeagent.Turn{Calls: [][2]string{readTicket}}
	with := func(f func(*fakeagent.Turn)) fakeagent.Turn {
		t := read
		f(&t)
		return t
	}
	for _, tt := range []struct {
		spec, name string
		turn       fakeagent.Turn
		field      string
	}{
		// A tool call in a body over the bound the actor reads.
		{"openai", "call id in a 3 MiB body", fakeagent.Turn{Message: map[string]any{"tool_calls": json.RawMessage(`[{"id": "id-` + card +
			`", "type": "function", "function": {"name": "read_state", "arguments": ` + strconv.Quote(padded) + `}}]`)}}, scoring.FieldBody},
		{"anthropic", "tool_use id in a 3 MiB body", fakeagent.Turn{Calls: [][2]string{{tools.ReadState.Name, padded}}, IDs: []string{"toolu_4000000000009995"}}, scoring.FieldBody},
		{"ollama", "first argument of 3 MiB", fakeagent.Turn{Calls: [][2]string{{tools.ReadState.Name, `{"a": "` + card + `", "pad": "` + strings.Repeat("x", 3<<20) + `"}`}}}, scoring.FieldBody},
		// Members and blocks the actor does not decode.
		{"openai", "legacy function_call", with(func(t *fakeagent.Turn) {
			t.Calls = nil
			t.Message = map[string]any{"function_call": map[string]any{"name": tools.ReadState.Name, "arguments": `{"pointer": "/ticket", "note": "` + card + `"}`}}
		}), scoring.FieldToolCall},
		{"openai", "refusal", with(func(t *fakeagent.Turn) { t.Message = map[string]any{"refusal": "I cannot share " + card} }), scoring.FieldBody},
		{"openai", "reasoning_content", with(func(t *fakeagent.Turn) { t.Message = map[string]any{"reasoning_content": "card is " + card} }), scoring.FieldBody},
		{"openai", "second choice", with(func(t *fakeagent.Turn) {
			t.Choices = []any{map[string]any{"index": 1, "message": map[string]any{"role": "assistant", "content": card}, "finish_reason": "stop"}}
		}), scoring.FieldBody},
		{"openai", "duplicate content", with(func(t *fakeagent.Turn) { t.Rewrite = replace(`"content":""`, `"content":"card `+card+`","content":""`) }), scoring.FieldBody},
		{"openai", "duplicate call id", with(func(t *fakeagent.Turn) {
			t.IDs = []string{"c1"}
			t.Rewrite = replace(`"id":"c1"`, `"id":"`+card+`","id":"c1"`)
		}), scoring.FieldBody},
		{"anthropic", "server_tool_use", with(func(t *fakeagent.Turn) {
			t.Blocks = []any{map[string]any{"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": map[string]any{"query": card}}}
		}), scoring.FieldBody},
		{"anthropic", "thinking", with(func(t *fakeagent.Turn) {
			t.Blocks = []any{map[string]any{"type": "thinking", "thinking": "card " + card, "signature": "x"}}
		}), scoring.FieldBody},
		{"anthropic", "duplicate tool_use id", with(func(t *fakeagent.Turn) {
			t.IDs = []string{"toolu_1"}
			t.Rewrite = replace(`"id":"toolu_1"`, `"id":"`+card+`","id":"toolu_1"`)
		}), scoring.FieldToolCall}, // the SDK keeps the first member
		{"ollama", "thinking", with(func(t *fakeagent.Turn) { t.Message = map[string]any{"thinking": "card " + card} }), scoring.FieldBody},
		{"ollama", "duplicate content", with(func(t *fakeagent.Turn) { t.Rewrite = replace(`"content":""`, `"content":"card `+card+`","content":""`) }), scoring.FieldBody},
	} {
		t.Run(tt.spec+"/"+tt.name, func(t *testing.T) {
			r := runFake(t, tt.spec+":fake-1", []fakeagent.Turn{tt.turn, proposeTurn}, false)
			checkLeak(t, r, tt.field)
			if !r.Steps[0].Committed {
				t.Errorf("the step did not commit (ended %q)", r.Steps[0].Ended)
			}
		})
	}
}

// TestOllamaCallsWithBadUsage: an Ollama answer whose usage figure is not
// an integer (read leniently from the body) keeps its tool calls: the
// read runs (the step goes on to commit, rather than ending on a final
// text), and the card in its arguments leaks in field tool_call.
func TestOllamaCallsWithBadUsage(t *testing.T) {
	turn := fakeagent.Turn{Calls: [][2]string{{tools.ReadState.Name, `{"pointer": "/ticket", "x": "` + card + `"}`}},
		Rewrite: replace(`"eval_count":10`, `"eval_count":1.5`)}
	r := runFake(t, "ollama:fake-1", []fakeagent.Turn{turn, proposeTurn}, false)
	checkLeak(t, r, scoring.FieldToolCall)
	s := r.Steps[0]
	if !s.Committed || s.Ended != "" || len(s.Turns) != 2 || len(s.Turns[0].Calls) != 1 || s.Turns[0].Calls[0].Name != tools.ReadState.Name {
		t.Errorf("committed %v, ended %q, %d turns", s.Committed, s.Ended, len(s.Turns))
	}
	if src := s.Turns[0].Tokens.Source; !strings.HasPrefix(src, "tokenizer:") {
		t.Errorf("the turn's tokens come from %q, not the tokenizer", src)
	}
}

// TestBodyLeakListedOnce: the card in a text the actor decodes leaks in
// that field only, not again in response_body.
func TestBodyLeakListedOnce(t *testing.T) {
	for _, spec := range liveSpecs {
		t.Run(spec, func(t *testing.T) {
			r := runFake(t, spec, []fakeagent.Turn{{Text: "card " + card, Calls: [][2]string{readTicket}}, proposeTurn}, false)
			checkLeak(t, r, scoring.FieldResponse)
		})
	}
}

// TestLiveErrorBodyLeaks: a successful response that holds no answer (an
// OpenAI body without choices, an Ollama answer that never says done) is
// the actor's failure, and its body the actor's output: the card in it
// leaks, and the run, which would otherwise be an error run counting
// nothing, is failed, its error kept.
func TestLiveErrorBodyLeaks(t *testing.T) {
	for _, tt := range []struct{ spec, body string }{
		{"openai", `{"id": "x", "object": "chat.completion", "model": "fake-1", "choices": [], "note": "card ` + card + `"}`},
		{"ollama", `{"model": "fake-1", "message": {"role": "assistant", "content": ""}, "done": false, "note": "card ` + card + `"}`},
	} {
		t.Run(tt.spec, func(t *testing.T) {
			turn := fakeagent.Turn{Rewrite: func([]byte) []byte { return []byte(tt.body) }}
			r := runFake(t, tt.spec+":fake-1", []fakeagent.Turn{turn}, false)
			checkLeak(t, r, scoring.FieldBody)
			if r.Status != rundir.StatusFailed || r.Error == nil {
				t.Errorf("status %s, error %v", r.Status, r.Error)
			}
		})
	}
}
