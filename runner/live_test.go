package runner

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
)

// TestLiveActorEndToEnd runs the whole suite in every configuration with
// an OpenAI actor against a scripted local server that speaks the chat
// completions wire format. The server answers each step with the case's
// reference patch and, in the note, every canary that appears in the
// prompt it was sent: the leak rate must be 1.0 in the full-state
// configurations and 0.0 in the projected ones.
func TestLiveActorEndToEnd(t *testing.T) {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	steps := map[string]*bench.Step{}
	var canaries []string
	for _, c := range cases {
		for _, s := range c.Steps {
			steps[strings.TrimSpace(s.Instruction)] = s
		}
		for _, s := range c.Secrets {
			canaries = append(canaries, s.Value)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		if err := json.Unmarshal(b, &req); err != nil || len(req.Messages) != 2 {
			http.Error(w, `{"error": {"message": "bad request", "type": "invalid_request_error"}}`, 400)
			return
		}
		prompt := req.Messages[1].Content
		var step *bench.Step
		for instr, s := range steps {
			if strings.Contains(prompt, "Task: "+instr+"\n") {
				step = s
			}
		}
		if step == nil {
			http.Error(w, `{"error": {"message": "unknown task", "type": "invalid_request_error"}}`, 400)
			return
		}
		var ref struct {
			Patch json.RawMessage `json:"patch"`
		}
		json.Unmarshal(step.Reference, &ref)
		var seen []string
		for _, c := range canaries {
			if strings.Contains(prompt, c) {
				seen = append(seen, c)
			}
		}
		content, _ := json.Marshal(map[string]any{"patch": ref.Patch, "note": "I saw: " + strings.Join(seen, "; ")})
		resp, _ := json.Marshal(map[string]any{
			"id": "x", "object": "chat.completion", "created": time.Now().Unix(), "model": "scripted-1",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(content)}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(content) / 4, "total_tokens": (len(prompt) + len(content)) / 4},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	}))
	defer srv.Close()
	a, err := actors.NewOpenAI("openai:scripted", actors.Params{OpenAIBaseURL: srv.URL + "/v1", Retry: actors.Retry{MaxRetries: 0}})
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	opts := Options{Cases: cases, Configs: cfgs, Actors: []actors.Actor{a}, Rounds: 1, Concurrency: 4, MaxAttempts: 1, PassThreshold: 0.8}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	sum := Summarize(sink.recs, cfgs, []string{a.Name()})
	for _, row := range sum.Rows {
		want := 1.0
		if row.View == bench.ViewProjected {
			want = 0
		}
		if row.Errors > 0 || row.Runs != len(cases) || row.LeakRate != want || row.CommitRate != 1 {
			t.Errorf("%s: runs %d errors %d leak rate %v (want %v) commit %v", row.Config, row.Runs, row.Errors, row.LeakRate, want, row.CommitRate)
		}
	}
	for _, r := range sink.recs {
		if r.Tokens.Source != "provider" || r.Steps[0].Model != "scripted-1" {
			t.Fatalf("%s: tokens %+v model %q", r.RunID, r.Tokens, r.Steps[0].Model)
		}
	}
}
