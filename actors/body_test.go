package actors

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/fakeagent"
	"github.com/patchbench/patchbench/tools"
)

// fakeActor is a live actor of spec (openai:, ollama: or anthropic:)
// against a fakeagent playing script, with answer limit limit (0: the
// default).
func fakeActor(t *testing.T, spec string, limit int64, script ...fakeagent.Turn) Actor {
	t.Helper()
	srv := httptest.NewServer(&fakeagent.Server{Script: script})
	t.Cleanup(srv.Close)
	p := Params{OpenAIBaseURL: srv.URL + "/v1", OllamaHost: srv.URL, AnthropicBaseURL: srv.URL, Retry: fastRetry, MaxAnswerBytes: limit}
	a, err := New(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var toolsReq = Request{Messages: testReq.Messages, Tools: tools.Specs()}

// TestBodyIsTheAnswerAsSent: through each wire format, Response.Body is
// the response body whole, members the client does not decode included;
// a body over what the actor reads (twice the limit, plus 64 KiB) is
// kept to that bound, its tool calls unread but in it, and its text is
// kept to the answer limit.
func TestBodyIsTheAnswerAsSent(t *testing.T) {
	for _, spec := range []string{"openai:m", "ollama:m", "anthropic:m"} {
		t.Run(spec, func(t *testing.T) {
			a := fakeActor(t, spec, 0, fakeagent.Turn{Text: "hello", Calls: [][2]string{{tools.ReadState.Name, `{"pointer": ""}`}},
				Message: map[string]any{"refusal": "secret-refusal"}, Blocks: []any{map[string]any{"type": "thinking", "thinking": "secret-refusal"}}})
			r, err := a.Propose(context.Background(), toolsReq)
			if err != nil {
				t.Fatal(err)
			}
			if r.Raw != "hello" || len(r.Calls) != 1 || !strings.Contains(r.Body, `"secret-refusal"`) || !strings.Contains(r.Body, `hello`) {
				t.Errorf("raw %q, %d calls, body %.300q", r.Raw, len(r.Calls), r.Body)
			}
			const limit = 100 << 10
			big := fakeagent.Turn{Text: strings.Repeat("y", 2*limit) + " tail",
				Calls: [][2]string{{tools.ReadState.Name, `{"a": "first-member", "pad": "` + strings.Repeat("x", 3*limit) + `"}`}}, IDs: []string{"id-early"}}
			a = fakeActor(t, spec, limit, big)
			r, err = a.Propose(context.Background(), toolsReq)
			if err != nil {
				t.Fatal(err)
			}
			if r.Oversize == 0 || len(r.Raw) != limit || len(r.Body) != 2*limit+envelopeBytes || !strings.Contains(r.Body, "first-member") {
				t.Errorf("oversize %d, %d bytes of text, body of %d bytes (first member: %v)", r.Oversize, len(r.Raw), len(r.Body), strings.Contains(r.Body, "first-member"))
			}
		})
	}
}

// TestOpenAILegacyFunctionCall: the deprecated message.function_call is a
// tool call like the others.
func TestOpenAILegacyFunctionCall(t *testing.T) {
	a := fakeActor(t, "openai:m", 0, fakeagent.Turn{Message: map[string]any{"function_call": map[string]any{"name": tools.ReadState.Name, "arguments": `{"pointer": "/x"}`}}})
	r, err := a.Propose(context.Background(), toolsReq)
	if err != nil || len(r.Calls) != 1 || r.Calls[0] != (ToolCall{ID: "call_1", Name: tools.ReadState.Name, Arguments: `{"pointer": "/x"}`}) {
		t.Fatalf("%v: calls %+v", err, r.Calls)
	}
}

// TestOllamaBadUsageKeepsCalls: an answer whose eval_count is a fraction
// (read leniently from the body) keeps its text and its tool calls.
func TestOllamaBadUsageKeepsCalls(t *testing.T) {
	a := fakeActor(t, "ollama:m", 0, fakeagent.Turn{Text: "t", Calls: [][2]string{{tools.ReadState.Name, `{"pointer": "/x"}`}},
		Rewrite: func(b []byte) []byte {
			return []byte(strings.Replace(string(b), `"eval_count":10`, `"eval_count":1.5`, 1))
		}})
	r, err := a.Propose(context.Background(), toolsReq)
	if err != nil || r.Raw != "t" || len(r.Calls) != 1 || r.Calls[0].Name != tools.ReadState.Name || r.Calls[0].Arguments != `{"pointer":"/x"}` ||
		r.Usage == nil || r.Usage.Invalid == "" {
		t.Fatalf("%v: raw %q, calls %+v, usage %+v", err, r.Raw, r.Calls, r.Usage)
	}
}
