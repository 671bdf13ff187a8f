package actors

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// ollamaServer speaks Ollama's /api/show, /api/tags and /api/chat, the
// chat either as one JSON object or streamed as NDJSON.
func ollamaServer(t *testing.T, stream bool, known string) (*httptest.Server, *atomic.Int32, *map[string]any) {
	t.Helper()
	var chats atomic.Int32
	last := map[string]any{}
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/show":
			if body["model"] != known {
				w.WriteHeader(http.StatusNotFound)
				fmt.Fprintf(w, `{"error": "model '%s' not found"}`, body["model"])
				return
			}
			io.WriteString(w, `{"details": {"family": "llama", "parameter_size": "7.2B", "quantization_level": "Q4_0"}, "model_info": {}}`)
		case "/api/tags":
			fmt.Fprintf(w, `{"models": [{"name": "%s:latest", "model": "%s:latest", "digest": "f974a74358d62a017b37c6f424fcdf2744ca02926c4f952513ddf474b2fa5091", "size": 4113301824}]}`, known, known)
		case "/api/chat":
			chats.Add(1)
			last = body
			if !stream {
				io.WriteString(w, `{"model": "`+known+`", "created_at": "2026-11-30T05:00:00Z", "message": {"role": "assistant", "content": "{\"patch\": [], \"note\": \"ok\"}"}, "done": true, "done_reason": "stop", "prompt_eval_count": 321, "eval_count": 17}`)
				return
			}
			w.Header().Set("Content-Type", "application/x-ndjson")
			for _, part := range []string{`{\"patch\": `, `[], \"note\": `, `\"ok\"}`} {
				fmt.Fprintf(w, `{"model": "%s", "message": {"role": "assistant", "content": "%s"}, "done": false}`+"\n", known, part)
			}
			fmt.Fprintf(w, `{"model": "%s", "message": {"role": "assistant", "content": ""}, "done": true, "prompt_eval_count": 321, "eval_count": 17}`+"\n", known)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(s.Close)
	return s, &chats, &last
}

func TestOllamaChat(t *testing.T) {
	for _, stream := range []bool{false, true} {
		t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
			s, chats, last := ollamaServer(t, stream, "mistral")
			temp, seed := 0.0, 42
			a, err := NewOllama("ollama:mistral?num_ctx=8192", s.URL, Params{Temperature: &temp, Seed: &seed, Retry: fastRetry})
			if err != nil {
				t.Fatal(err)
			}
			r, err := a.Propose(context.Background(), testReq)
			if err != nil {
				t.Fatal(err)
			}
			if r.Raw != `{"patch": [], "note": "ok"}` || r.Usage.Prompt != 321 || r.Usage.Completion != 17 || r.Usage.Source != "provider" ||
				r.Model != "mistral" || !strings.HasPrefix(r.Fingerprint, "f974a743") {
				t.Fatalf("response %+v usage %+v", r, r.Usage)
			}
			opts := (*last)["options"].(map[string]any)
			if (*last)["format"] != "json" || opts["temperature"] != 0.0 || opts["seed"] != 42.0 || opts["num_ctx"] != 8192.0 {
				t.Errorf("request %v", *last)
			}
			if chats.Load() != 1 {
				t.Errorf("%d chats", chats.Load())
			}
			// Round 3 is another sample: the seed moves with the round.
			req := testReq
			req.Round = 3
			if _, err := a.Propose(context.Background(), req); err != nil {
				t.Fatal(err)
			}
			if opts := (*last)["options"].(map[string]any); opts["seed"] != 44.0 {
				t.Errorf("round 3 sent seed %v, want 44", opts["seed"])
			}
		})
	}
}

func TestOllamaModelNotFound(t *testing.T) {
	s, chats, _ := ollamaServer(t, false, "mistral")
	a, err := NewOllama("ollama:llama9", s.URL, Params{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), testReq)
	if err == nil || !strings.Contains(err.Error(), "ollama pull llama9") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("error %v", err)
	}
	if chats.Load() != 0 {
		t.Error("chatted with a model that is not there")
	}
}

func TestOllamaSpecs(t *testing.T) {
	for _, tt := range []struct{ spec, host, want string }{
		{"ollama:", "", "want ollama:MODEL"},
		{"ollama:m?num_ctx=0", "", "num_ctx"},
		{"ollama:m?top_k=3", "", `unknown parameter "top_k"`},
		{"ollama:m", "http://", "is not a host"},
	} {
		if _, err := NewOllama(tt.spec, tt.host, Params{}); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.spec, err, tt.want)
		}
	}
	a, err := NewOllama("ollama:mistral", "gpu-box:11434", Params{})
	if err != nil || a.params.Timeout.Minutes() < 10 {
		t.Errorf("%v %v", a, err)
	}
}

// ollamaChat is an Ollama server that knows every model and answers
// /api/chat with chat, which gets the call's number, from 1.
func ollamaChat(t *testing.T, chat func(w http.ResponseWriter, n int32)) *httptest.Server {
	t.Helper()
	var n atomic.Int32
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/api/show":
			io.WriteString(w, `{"details": {}, "model_info": {}}`)
		case "/api/tags":
			io.WriteString(w, `{"models": []}`)
		case "/api/chat":
			chat(w, n.Add(1))
		}
	}))
	t.Cleanup(s.Close)
	return s
}

// ollamaAnswer is a whole answer of model m.
const ollamaAnswer = `{"model": "m", "message": {"role": "assistant", "content": "{}"}, "done": true, "prompt_eval_count": 1, "eval_count": 1}`

func TestOllamaRetryAfter(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a Retry-After")
	}
	t.Parallel() // waits a second on its own server
	var gap time.Duration
	var first time.Time
	s := ollamaChat(t, func(w http.ResponseWriter, n int32) {
		if n == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			w.WriteHeader(http.StatusTooManyRequests)
			io.WriteString(w, `{"error": "busy"}`)
			return
		}
		gap = time.Since(first)
		io.WriteString(w, ollamaAnswer)
	})
	a, err := NewOllama("ollama:m", s.URL, Params{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Propose(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	if gap < time.Second {
		t.Errorf("retried after %v; the server asked for 1 s", gap)
	}
}
