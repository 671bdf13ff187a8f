package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
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
	refs := map[*bench.Step][]byte{}
	var canaries []string
	for _, c := range cases {
		for _, s := range c.Steps {
			steps[strings.TrimSpace(s.Instruction)] = s
			refs[s] = referenceOf(t, c, s)
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
		json.Unmarshal(refs[step], &ref)
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
	opts := Options{Cases: cases, Configs: cfgs, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 4}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	sum := summarize(sink.recs, cfgs, []string{a.Name()})
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

// scriptedExample is a local chat completions server that answers every
// request with the example case's reference patch, slowly.
func scriptedExample(t *testing.T, ref []byte, delay time.Duration) (*httptest.Server, *atomic.Int32, *sync.Map) {
	t.Helper()
	var calls atomic.Int32
	var prompts sync.Map
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		b, _ := io.ReadAll(r.Body)
		prompts.Store(string(b), true)
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
		resp, _ := json.Marshal(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "scripted-1",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": string(ref)}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(resp)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls, &prompts
}

// cancelAfter cancels a run once n records are written.
type cancelAfter struct {
	*rundir.Sink
	n      atomic.Int32
	limit  int32
	cancel context.CancelFunc
}

func (c *cancelAfter) Write(r *rundir.Record) error {
	if err := c.Sink.Write(r); err != nil {
		return err
	}
	if c.n.Add(1) == c.limit {
		c.cancel()
	}
	return nil
}

// An interrupted live run resumes: no run is recorded twice and no
// finished run's request is sent again.
func TestLiveResume(t *testing.T) {
	if testing.Short() {
		t.Skip("runs and resumes a live actor")
	}
	c, cfgs := loadExample(t)
	srv, calls, _ := scriptedExample(t, referenceOf(t, c, c.Steps[0]), 20*time.Millisecond)
	a, err := actors.NewOpenAI("openai:scripted", actors.Params{OpenAIBaseURL: srv.URL + "/v1", Retry: actors.Retry{MaxRetries: 0}})
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 3, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	total := len(opts.Jobs())
	ctx, cancel := context.WithCancel(context.Background())
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(ctx, opts, nil, &cancelAfter{Sink: sink, limit: int32(total / 2), cancel: cancel})
	sink.Close()
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first part: %v", err)
	}
	recs := readRuns(t, filepath.Join(dir, rundir.RunsFile))
	if len(recs) < total/2 || len(recs) >= total {
		t.Fatalf("after the interrupt: %d of %d runs", len(recs), total)
	}
	before := calls.Load()
	skip := map[string]bool{}
	for _, r := range recs {
		skip[r.RunID] = true
	}
	sink, _ = rundir.OpenSink(dir)
	if err := Run(context.Background(), opts, skip, sink); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	recs = readRuns(t, filepath.Join(dir, rundir.RunsFile))
	ids := map[string]int{}
	for _, r := range recs {
		ids[r.RunID]++
	}
	if len(recs) != total || len(ids) != total {
		t.Fatalf("%d records, %d distinct, want %d", len(recs), len(ids), total)
	}
	// The second part asked only for the runs not recorded (at most one
	// of them had been in flight when the run was cancelled).
	if sent := calls.Load() - before; int(sent) != total-len(skip) {
		t.Errorf("the resumed run sent %d requests for %d missing runs", sent, total-len(skip))
	}
}

// A second identical run answers from the cache without a request, and
// a cache-only run with an empty cache ends its runs as errors.
func TestLiveCache(t *testing.T) {
	c, cfgs := loadExample(t)
	srv, calls, _ := scriptedExample(t, referenceOf(t, c, c.Steps[0]), 50*time.Millisecond)
	live, err := actors.NewOpenAI("openai:scripted", actors.Params{OpenAIBaseURL: srv.URL + "/v1", Retry: actors.Retry{MaxRetries: 0}})
	if err != nil {
		t.Fatal(err)
	}
	cache := t.TempDir()
	run := func(a actors.Actor) []*rundir.Record {
		sink := &memSink{}
		opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 6}
		if err := Run(context.Background(), opts, nil, sink); err != nil {
			t.Fatal(err)
		}
		return sink.recs
	}
	run(&actors.Cached{Actor: live, Dir: cache})
	n := calls.Load()
	second := run(&actors.Cached{Actor: live, Dir: cache})
	// The four full-state configurations send one prompt and the two
	// projected ones another: the cache, keyed by the messages, asks
	// twice.
	if calls.Load() != n || n != 2 {
		t.Errorf("requests: %d after the first run, %d after the second", n, calls.Load())
	}
	for i := range second {
		if !second[i].Steps[0].Cached || second[i].Status != rundir.StatusPassed {
			t.Errorf("%s: cached %v status %s", second[i].RunID, second[i].Steps[0].Cached, second[i].Status)
		}
	}
	empty := run(&actors.Cached{Actor: live, Dir: t.TempDir(), Only: true})
	for _, r := range empty {
		if r.Status != rundir.StatusError || r.Error == nil || !strings.Contains(*r.Error, "not in the response cache") {
			t.Errorf("%s: %s %v", r.RunID, r.Status, r.Error)
		}
	}
	if calls.Load() != n {
		t.Error("a cache-only run sent requests")
	}
}

// A bad key fails every run: the first is recorded and the run stops.
func TestLiveFatalStops(t *testing.T) {
	c, cfgs := loadExample(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(401)
		io.WriteString(w, `{"error": {"message": "Incorrect API key provided: sk-bad.", "type": "invalid_request_error", "param": null, "code": "invalid_api_key"}}`)
	}))
	defer srv.Close()
	a, _ := actors.NewOpenAI("openai:m", actors.Params{OpenAIBaseURL: srv.URL + "/v1", Retry: actors.Retry{MaxRetries: 3}})
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 3, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	err := Run(context.Background(), opts, nil, sink)
	var fatal *FatalError
	if !errors.As(err, &fatal) || !strings.Contains(fatal.Msg, "check the API key") {
		t.Fatalf("error %v", err)
	}
	if len(sink.recs) != 1 || calls.Load() != 1 || sink.recs[0].Status != rundir.StatusError || sink.recs[0].Steps[0].Attempts != 1 || sink.recs[0].Steps[0].Prompt == nil {
		t.Errorf("%d records, %d requests, first %+v", len(sink.recs), calls.Load(), sink.recs[0].Steps)
	}
}

// Only the request actually sent counts as not cached, and only tokens
// sent count as spent.
func TestLiveTokensSent(t *testing.T) {
	c, cfgs := loadExample(t)
	srv, calls, _ := scriptedExample(t, referenceOf(t, c, c.Steps[0]), 30*time.Millisecond)
	live, _ := actors.NewOpenAI("openai:scripted", actors.Params{OpenAIBaseURL: srv.URL + "/v1", Retry: actors.Retry{MaxRetries: 0}})
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{&actors.Cached{Actor: live, Dir: t.TempDir()}},
		Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 6}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	notCached, sent := 0, 0
	for _, r := range sink.recs {
		if !r.Steps[0].Cached {
			notCached++
		}
		sent += r.TokensSent
	}
	if int32(notCached) != calls.Load() || sent != int(calls.Load())*15 {
		t.Errorf("%d requests sent, %d steps not cached, %d tokens sent", calls.Load(), notCached, sent)
	}
}
