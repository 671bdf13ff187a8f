package runner

import (
	"encoding/json"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/internal/fakeagent"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/tools"
)

// liveActor builds the actor spec (openai:, ollama: or anthropic:)
// against the fake at url, with a response cache in cacheDir ("" for
// none) and no retries.
func liveActor(t testing.TB, spec, url, cacheDir string, cacheOnly bool) actors.Actor {
	t.Helper()
	p := actors.Params{OpenAIBaseURL: url + "/v1", OllamaHost: url, AnthropicBaseURL: url, Retry: actors.Retry{MaxRetries: 0}, CacheOnly: cacheOnly}
	o := actors.BuildOptions{Params: p, NoCache: cacheDir == "", CacheDir: cacheDir}
	as, err := actors.Build([]string{spec}, o)
	if err != nil {
		t.Fatal(err)
	}
	return as[0]
}

var liveSpecs = []string{"openai:fake-1", "ollama:fake-1", "anthropic:fake-1"}

// TestToolsLiveScript: through each wire format, the model reads, makes a
// wrong proposal, reads the feedback and makes the right one: the step
// commits on the second proposal, the feedback went back to the provider
// as a tool result, tokens are the provider's summed over turns, and a
// second run from the cache alone sends nothing and records the same.
func TestToolsLiveScript(t *testing.T) {
	wrong := `{"patch": [{"op": "replace", "path": "/order/status", "value": "refunded"}], "note": "x"}`
	for _, spec := range liveSpecs {
		t.Run(spec, func(t *testing.T) {
			f := &fakeagent.Server{Script: []fakeagent.Turn{
				{Text: "Let me look.", Calls: [][2]string{{tools.ReadState.Name, `{"pointer": "/ticket", "depth": 1}`}}},
				{Calls: [][2]string{{tools.ProposePatch.Name, wrong}}},
				{Calls: [][2]string{{tools.ReadState.Name, `{"pointer": "/audit"}`}}},
				{Calls: [][2]string{{tools.ProposePatch.Name, rightProposal}}},
			}}
			srv := httptest.NewServer(f)
			defer srv.Close()
			cache := t.TempDir()
			r := runTools(t, "patchoptic", liveActor(t, spec, srv.URL, cache, false), Options{Spec: runspec.Spec{MaxAttempts: 2}})
			s := r.Steps[0]
			if r.Status != rundir.StatusPassed || !s.Committed || s.Attempts != 2 || len(s.Turns) != 4 {
				t.Fatalf("status %s error %v committed %v attempts %d turns %d", r.Status, r.Error, s.Committed, s.Attempts, len(s.Turns))
			}
			if r.Tokens.Prompt != 400 || r.Tokens.Completion != 40 || r.Tokens.Source != "provider" || f.Requests() != 4 {
				t.Errorf("tokens %+v after %d requests", r.Tokens, f.Requests())
			}
			third := f.Bodies()[2]
			if !strings.Contains(third, "write_outside_region") || !strings.Contains(third, "Let me look.") {
				t.Errorf("the third request lacks the feedback or the first turn: %.2000s", third)
			}
			if !strings.Contains(f.Bodies()[0], `"read_state"`) || !strings.Contains(f.Bodies()[0], `"propose_patch"`) {
				t.Errorf("the tools were not offered: %.1000s", f.Bodies()[0])
			}
			// Each wire format's own shape of tools, calls and results.
			wire := map[string][]string{
				"openai:fake-1":    {`"type":"function"`, `"tool_calls":[`, `"role":"tool"`, `"tool_call_id":"call_2_0"`},
				"ollama:fake-1":    {`"tools":[`, `"tool_calls":[`, `"role":"tool"`, `"tool_name":"propose_patch"`},
				"anthropic:fake-1": {`"input_schema":{`, `"type":"tool_use"`, `"type":"tool_result"`, `"tool_use_id":"toolu_2_0"`, `"system":[`},
			}[spec]
			for _, w := range wire {
				if !strings.Contains(third, w) {
					t.Errorf("the third request lacks %s: %.3000s", w, third)
				}
			}
			before := f.Requests()
			again := runTools(t, "patchoptic", liveActor(t, spec, srv.URL, cache, true), Options{Spec: runspec.Spec{MaxAttempts: 2}})
			if f.Requests() != before || again.Status != rundir.StatusPassed || len(again.Steps[0].Turns) != 4 || !again.Steps[0].Turns[3].Cached {
				t.Errorf("--cache-only: %d requests, status %s, turns %d", f.Requests()-before, again.Status, len(again.Steps[0].Turns))
			}
		})
	}
}

// TestToolsLiveHostile: hostile models through each wire format end their
// step as an outcome with a stable code, or their run as an error run (a
// provider error mid-loop), never a panic; the figures are in the note.
func TestToolsLiveHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("answers a hostile provider over the tools protocol")
	}
	many := make([][2]string, 1000)
	for i := range many {
		many[i] = [2]string{tools.ReadState.Name, `{"pointer": ""}`}
	}
	big := `{"patch": [], "note": "` + strings.Repeat("a", 10<<20) + `"}`
	for _, tc := range []struct {
		name   string
		script []fakeagent.Turn
		ended  string
		status string
	}{
		{"unknown tool", []fakeagent.Turn{{Calls: [][2]string{{"shell", `{"cmd": "cat /etc/passwd"}`}}}}, EndedTurns, rundir.StatusFailed},
		{"malformed arguments", []fakeagent.Turn{{Calls: [][2]string{{tools.ReadState.Name, `{"pointer": 5, "depth": "deep"}`}}}}, EndedTurns, rundir.StatusFailed},
		{"1000 calls", []fakeagent.Turn{{Calls: many}}, EndedToolCalls, rundir.StatusFailed},
		{"10 MB arguments", []fakeagent.Turn{{Calls: [][2]string{{tools.ProposePatch.Name, big}}}}, EndedBytes, rundir.StatusFailed},
		{"tool call as text", []fakeagent.Turn{{Text: `{"tool": "propose_patch", "arguments": ` + rightProposal + `}`}}, EndedFinalText, rundir.StatusFailed},
		{"provider error mid-loop", []fakeagent.Turn{{Calls: [][2]string{{tools.ReadState.Name, `{"pointer": ""}`}}}, {Status: 500}}, "", rundir.StatusError},
	} {
		for _, spec := range liveSpecs {
			t.Run(tc.name+"/"+spec, func(t *testing.T) {
				srv := httptest.NewServer(&fakeagent.Server{Script: tc.script})
				defer srv.Close()
				r := runTools(t, "patchoptic", liveActor(t, spec, srv.URL, "", false), Options{Spec: runspec.Spec{MaxTurns: 4}})
				if r.Status != tc.status || r.Steps[0].Ended != tc.ended || r.Steps[0].Committed {
					t.Fatalf("status %s (want %s), ended %q (want %q), error %v", r.Status, tc.status, r.Steps[0].Ended, tc.ended, r.Error)
				}
				if b, _ := json.Marshal(r); len(b) > 2<<20 {
					t.Errorf("the record has %d bytes", len(b))
				}
			})
		}
	}
}

// TestToolsFilesActor: the file actor in the tools protocol shows each
// turn's conversation and the tools in its pending request, reads an
// answer file as a tool call ({"tool", "arguments"}) or a final text, and
// each run of the same command goes one turn further.
func TestToolsFilesActor(t *testing.T) {
	dir := t.TempDir()
	f, err := actors.NewFiles("files:" + dir)
	if err != nil {
		t.Fatal(err)
	}
	answer := func(text string) {
		t.Helper()
		reqs, _, err := actors.PendingRequests(dir)
		if err != nil || len(reqs) != 1 {
			t.Fatalf("pending %v, %v", reqs, err)
		}
		if reqs[0].Tools == nil {
			t.Fatalf("the pending request has no tools")
		}
		if err := os.WriteFile(filepath.Join(dir, reqs[0].Answer), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	o := Options{Spec: runspec.Spec{Disclosure: DisclosureProgressive}}
	if r := runTools(t, "patchoptic", f, o); r.Status != rundir.StatusPending {
		t.Fatalf("status %s", r.Status)
	}
	answer(`{"tool": "read_state", "arguments": {"pointer": "/customer/card_number"}}`)
	if r := runTools(t, "patchoptic", f, o); r.Status != rundir.StatusPending || len(r.Steps[0].Turns) != 1 || !r.Steps[0].Turns[0].Calls[0].Hidden {
		t.Fatalf("status %s, turns %+v", r.Status, r.Steps[0].Turns)
	}
	reqs, _, _ := actors.PendingRequests(dir)
	text, err := os.ReadFile(filepath.Join(dir, actors.FilesPending, reqs[0].Key+".txt"))
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range []string{"===== result of call_1 =====\nerror: absent: nothing at this pointer", `[call_1] {"tool": "read_state"`, "===== tools =====", "propose_patch: "} {
		if !strings.Contains(string(text), w) {
			t.Errorf("the pending request lacks %q:\n%s", w, text)
		}
	}
	answer(`{"tool": "propose_patch", "arguments": ` + rightProposal + `}`)
	r := runTools(t, "patchoptic", f, o)
	if r.Status != rundir.StatusPassed || len(r.Steps[0].Turns) != 2 {
		t.Fatalf("status %s error %v turns %d", r.Status, r.Error, len(r.Steps[0].Turns))
	}
}

// TestToolsLiveBrokenArguments: OpenAI's wire format carries arguments as
// text, so a model can send arguments that are not JSON at all: each gets
// an error result (malformed_arguments), and the step ends when its turns
// are spent.
func TestToolsLiveBrokenArguments(t *testing.T) {
	srv := httptest.NewServer(&fakeagent.Server{Script: []fakeagent.Turn{{Calls: [][2]string{{tools.ProposePatch.Name, `{"patch": [`}, {tools.ReadState.Name, `pointer=/`}}}}})
	defer srv.Close()
	r := runTools(t, "patchoptic", liveActor(t, "openai:fake-1", srv.URL, "", false), Options{Spec: runspec.Spec{MaxTurns: 3}})
	s := r.Steps[0]
	if r.Status != rundir.StatusFailed || s.Ended != EndedTurns || len(s.Turns) != 3 || s.Attempts != 0 {
		t.Fatalf("status %s ended %q turns %d attempts %d", r.Status, s.Ended, len(s.Turns), s.Attempts)
	}
	for _, c := range s.Turns[0].Calls {
		if c.Error != tools.CodeMalformed {
			t.Errorf("%s %q: %q", c.Name, c.Arguments, c.Error)
		}
	}
}
