package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

// referenceServer is a local chat completions server that answers each
// step of cases with its reference proposal, found by the step's
// instruction in the prompt.
func referenceServer(t *testing.T, cases []*bench.Case) *httptest.Server {
	t.Helper()
	steps := map[string][]byte{}
	for _, c := range cases {
		for _, s := range c.Steps {
			steps[strings.TrimSpace(s.Instruction)] = referenceOf(t, c, s)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Messages []struct{ Role, Content string } `json:"messages"`
		}
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &req)
		var ref []byte
		for instr, s := range steps {
			if len(req.Messages) == 2 && strings.Contains(req.Messages[1].Content, "Task: "+instr+"\n") {
				ref = s
			}
		}
		if ref == nil {
			http.Error(w, `{"error": {"message": "unknown task", "type": "invalid_request_error"}}`, 400)
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
	return srv
}

// A provider nothing listens on: after actors.BreakAfter consecutive
// connection failures the runner starts no more runs of the actor that
// uses it (the others go on), says so once, and returns a *DownError; the
// runs that met it are recorded as errors. Once the server is up, the same
// runs with the errors retried finish the work, each run once.
func TestEndpointDownStopsItsRuns(t *testing.T) {
	all, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	var cases []*bench.Case
	for _, c := range all {
		if c.Domain == "finance" && len(cases) < 3 {
			cases = append(cases, c)
		}
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := "http://" + l.Addr().String() + "/v1"
	l.Close()
	build := func(base string) []actors.Actor {
		acts, err := actors.Build([]string{"reference", "openai:m"}, actors.BuildOptions{NoCache: true,
			Params: actors.Params{OpenAIBaseURL: base, Retry: actors.Retry{MaxRetries: 2, Base: time.Millisecond, Max: 5 * time.Millisecond}}})
		if err != nil {
			t.Fatal(err)
		}
		return acts
	}
	dir := t.TempDir()
	opts := Options{Cases: cases, Configs: cfgs, Actors: build(closed), Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 4}
	perActor := len(cases) * len(cfgs)
	var mu sync.Mutex
	var said []string
	opts.EndpointDown = func(e *actors.EndpointDownError) {
		mu.Lock()
		said = append(said, e.Endpoint)
		mu.Unlock()
	}
	var last Progress
	opts.Progress = func(p Progress) { last = p }
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), opts, nil, sink)
	sink.Close()
	var down *DownError
	if !errors.As(err, &down) || len(down.Endpoints) != 1 || down.Endpoints[0].Endpoint != "openai "+closed {
		t.Fatalf("Run: %v", err)
	}
	if len(said) != 1 || said[0] != "openai "+closed {
		t.Errorf("said %v", said)
	}
	recs := readRuns(t, filepath.Join(dir, rundir.RunsFile))
	errorRuns, refRuns := 0, 0
	for _, r := range recs {
		switch {
		case r.Actor == "reference" && r.Status == rundir.StatusPassed:
			refRuns++
		case r.Actor == "openai:m" && r.Status == rundir.StatusError:
			errorRuns++
		default:
			t.Errorf("%s: %s", r.RunID, r.Status)
		}
	}
	// The breaker opens within the first runs (their retries count);
	// the runs already in flight then end at once.
	if refRuns != perActor || errorRuns == 0 || errorRuns > opts.Concurrency+1 || down.NotStarted != perActor-errorRuns {
		t.Errorf("reference runs %d of %d, openai error runs %d, not started %d", refRuns, perActor, errorRuns, down.NotStarted)
	}
	if last.Done != len(recs) || last.Errors != errorRuns || last.NotStarted != down.NotStarted || last.Total != 2*perActor {
		t.Errorf("last progress %+v", last)
	}
	t.Logf("closed port: %d openai runs recorded as errors, %d not started, %d reference runs done", errorRuns, down.NotStarted, refRuns)

	// The server is up: the same runs, with the errors retried.
	srv := referenceServer(t, cases)
	opts.Actors, opts.EndpointDown = build(srv.URL+"/v1"), nil
	sink, err = rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sink.Resume(true)
	if err != nil {
		t.Fatal(err)
	}
	err = Run(context.Background(), opts, res.Skip, sink)
	sink.Close()
	if err != nil {
		t.Fatal(err)
	}
	latest := map[string]string{}
	rundir.Latest(filepath.Join(dir, rundir.RunsFile), func(r *rundir.Record) error { latest[r.RunID] = r.Status; return nil })
	outcomes := 0
	for id, st := range latest {
		if st == rundir.StatusPassed || st == rundir.StatusFailed {
			outcomes++
		} else {
			t.Errorf("%s: %s after the retry", id, st)
		}
	}
	if outcomes != 2*perActor {
		t.Errorf("%d runs with an outcome, want %d", outcomes, 2*perActor)
	}
}
