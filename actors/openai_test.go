package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// chatServer is a local server that speaks OpenAI's /v1/chat/completions
// wire format; handle decides each answer, given the request body and
// the call's number (from 1).
type chatServer struct {
	*httptest.Server
	calls  atomic.Int32
	mu     sync.Mutex
	bodies []map[string]any
}

func newChatServer(t *testing.T, handle func(w http.ResponseWriter, body map[string]any, n int)) *chatServer {
	t.Helper()
	s := &chatServer{}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var body map[string]any
		b, _ := io.ReadAll(r.Body)
		json.Unmarshal(b, &body)
		s.mu.Lock()
		s.bodies = append(s.bodies, body)
		s.mu.Unlock()
		handle(w, body, int(s.calls.Add(1)))
	}))
	t.Cleanup(s.Close)
	return s
}

func completion(content string, prompt, completionTokens, reasoning int) string {
	b, _ := json.Marshal(map[string]any{
		"id": "chatcmpl-1", "object": "chat.completion", "created": 1764460800, "model": "test-model-2026-01-01",
		"system_fingerprint": "fp_abc123",
		"choices":            []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage": map[string]any{"prompt_tokens": prompt, "completion_tokens": completionTokens, "total_tokens": prompt + completionTokens,
			"completion_tokens_details": map[string]any{"reasoning_tokens": reasoning}},
	})
	return string(b)
}

func apiError(w http.ResponseWriter, status int, typ, code, msg string) {
	apiErrorParam(w, status, typ, code, msg, "null")
}

// apiErrorParam writes an API error whose param is the JSON param.
func apiErrorParam(w http.ResponseWriter, status int, typ, code, msg, param string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error": {"message": %q, "type": %q, "param": %s, "code": %q}}`, msg, typ, param, code)
}

var fastRetry = Retry{MaxRetries: 3, Base: time.Millisecond, Max: 5 * time.Millisecond}

func newTestActor(t *testing.T, spec, url string, p Params) *OpenAI {
	t.Helper()
	p.OpenAIBaseURL = url + "/v1"
	if p.Retry == (Retry{}) {
		p.Retry = fastRetry
	}
	a, err := NewOpenAI(spec, p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

var testReq = Request{Messages: []Message{{Role: "system", Content: "answer in JSON"}, {Role: "user", Content: "task"}}}

func TestOpenAISuccess(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion(`{"patch": [], "note": "ok"}`, 120, 30, 0))
	})
	temp := 0.0
	a := newTestActor(t, "openai:test-model?seed=7", s.URL, Params{Temperature: &temp})
	r, err := a.Propose(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Raw != `{"patch": [], "note": "ok"}` || r.Usage.Prompt != 120 || r.Usage.Completion != 30 || r.Usage.Source != "provider" ||
		r.Model != "test-model-2026-01-01" || r.Fingerprint != "fp_abc123" {
		t.Fatalf("response %+v usage %+v", r, r.Usage)
	}
	body := s.bodies[0]
	if body["model"] != "test-model" || body["seed"] != 7.0 || body["response_format"].(map[string]any)["type"] != "json_object" {
		t.Errorf("request body %v", body)
	}
	req := testReq
	req.Round = 2
	if _, err := a.Propose(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if got := s.bodies[len(s.bodies)-1]["seed"]; got != 8.0 {
		t.Errorf("round 2 sent seed %v, want 8 (the seed moves with the round)", got)
	}
	if tv, ok := body["temperature"].(float64); !ok || tv > 1e-6 {
		t.Errorf("temperature 0 was not sent as (nearly) 0: %v", body["temperature"])
	}
	msgs := body["messages"].([]any)
	if len(msgs) != 2 || msgs[0].(map[string]any)["role"] != "system" {
		t.Errorf("messages %v", msgs)
	}
}

func TestOpenAIReasoningModel(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, body map[string]any, _ int) {
		if _, ok := body["temperature"]; ok {
			apiErrorParam(w, 400, "invalid_request_error", "unsupported_value", "Unsupported value: 'temperature' does not support 0.2 with this model.", `"temperature"`)
			return
		}
		io.WriteString(w, completion(`{"patch": []}`, 200, 900, 850))
	})
	temp := 0.2
	a := newTestActor(t, "openai:gpt-5-mini", s.URL, Params{Temperature: &temp})
	r, err := a.Propose(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Usage.Reasoning != 850 || r.Usage.Completion != 900 || s.calls.Load() != 1 {
		t.Errorf("usage %+v after %d calls", r.Usage, s.calls.Load())
	}
	// A model not known as a reasoning one that refuses the temperature
	// is asked once more without it.
	b := newTestActor(t, "openai:some-reasoner", s.URL, Params{Temperature: &temp})
	if _, err := b.Propose(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	if n := s.calls.Load(); n != 3 {
		t.Errorf("%d calls, want 3 (one refused, one without a temperature)", n)
	}
}

func TestOpenAIErrors(t *testing.T) {
	tests := []struct {
		status      int
		typ, code   string
		calls       int32
		wantInError string
	}{
		{400, "invalid_request_error", "invalid_value", 1, "HTTP 400: bad messages"},
		{401, "invalid_request_error", "invalid_api_key", 1, "check the API key"},
		{403, "invalid_request_error", "forbidden", 1, "check the API key"},
		{404, "invalid_request_error", "model_not_found", 1, "check the model name"},
		{429, "rate_limit_exceeded", "rate_limit_exceeded", 4, "HTTP 429"},
		{500, "server_error", "server_error", 4, "HTTP 500"},
		{503, "server_error", "overloaded", 4, "HTTP 503"},
	}
	for _, tt := range tests {
		t.Run(fmt.Sprint(tt.status), func(t *testing.T) {
			msg := "bad messages"
			s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) { apiError(w, tt.status, tt.typ, tt.code, msg) })
			a := newTestActor(t, "openai:test-model", s.URL, Params{})
			_, err := a.Propose(context.Background(), testReq)
			var he *HTTPError
			if !errors.As(err, &he) || he.Status != tt.status || !strings.Contains(err.Error(), tt.wantInError) {
				t.Fatalf("error %v", err)
			}
			if got := s.calls.Load(); got != tt.calls {
				t.Errorf("%d calls, want %d (retries only on 429 and 5xx)", got, tt.calls)
			}
		})
	}
}

func TestOpenAIRetryAfter(t *testing.T) {
	if testing.Short() {
		t.Skip("waits out a Retry-After")
	}
	t.Parallel() // waits a second on its own server
	var first time.Time
	var gap time.Duration
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, n int) {
		if n == 1 {
			first = time.Now()
			w.Header().Set("Retry-After", "1")
			apiError(w, 429, "rate_limit_exceeded", "rate_limit_exceeded", "slow down")
			return
		}
		gap = time.Since(first)
		io.WriteString(w, completion(`{"patch": []}`, 1, 1, 0))
	})
	a := newTestActor(t, "openai:test-model", s.URL, Params{})
	if _, err := a.Propose(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	if gap < time.Second {
		t.Errorf("retried after %v; the server asked for 1 s", gap)
	}
}

func TestOpenAITimeoutAndDroppedConnection(t *testing.T) {
	release := make(chan struct{})
	slow := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, n int) {
		if n == 1 {
			select {
			case <-release:
			case <-time.After(5 * time.Second):
			}
			return
		}
		io.WriteString(w, completion(`{"patch": []}`, 1, 1, 0))
	})
	defer close(release)
	a := newTestActor(t, "openai:test-model", slow.URL, Params{Timeout: 100 * time.Millisecond})
	if _, err := a.Propose(context.Background(), testReq); err != nil {
		t.Fatalf("a slow first answer should be retried: %v", err)
	}
	if slow.calls.Load() != 2 {
		t.Errorf("%d calls", slow.calls.Load())
	}

	dropped := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, n int) {
		if n == 1 {
			conn, _, err := w.(http.Hijacker).Hijack()
			if err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, completion(`{"patch": []}`, 1, 1, 0))
	})
	b := newTestActor(t, "openai:test-model", dropped.URL, Params{})
	if _, err := b.Propose(context.Background(), testReq); err != nil {
		t.Fatalf("a dropped connection should be retried: %v", err)
	}
	if dropped.calls.Load() != 2 {
		t.Errorf("%d calls", dropped.calls.Load())
	}
}

func TestOpenAISpecs(t *testing.T) {
	for _, tt := range []struct{ spec, base, key, want string }{
		{"openai:", "", "k", "want openai:MODEL"},
		{"openai:m?temperature=3", "", "k", "temperature"},
		{"openai:m?colour=red", "", "k", `unknown parameter "colour"`},
		{"openai:m", "https://api.openai.com/v1", "", "OPENAI_API_KEY is not set"},
		{"openai:m", "not a url", "k", "is not a URL"},
		{"openai:m", "http://api.example.com/v1", "k", "refusing to send OPENAI_API_KEY in plain text"},
	} {
		_, err := NewOpenAI(tt.spec, Params{OpenAIBaseURL: tt.base, OpenAIKey: tt.key})
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want %q", tt.spec, err, tt.want)
		}
	}
	// No key is needed for a server on this machine.
	if _, err := NewOpenAI("openai:m", Params{OpenAIBaseURL: "http://127.0.0.1:8000/v1"}); err != nil {
		t.Error(err)
	}
}

func TestOpenAIRefusesRedirects(t *testing.T) {
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { elsewhere.Add(1) }))
	defer other.Close()
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		w.Header().Set("Location", other.URL+"/v1/chat/completions")
		w.WriteHeader(http.StatusTemporaryRedirect)
	})
	a := newTestActor(t, "openai:m", s.URL, Params{OpenAIKey: "sk-secret", Retry: Retry{}})
	if _, err := a.Propose(context.Background(), testReq); err == nil || !strings.Contains(err.Error(), "not followed") {
		t.Fatalf("error %v", err)
	}
	if elsewhere.Load() != 0 {
		t.Error("the request followed the redirect")
	}
}

func TestOpenAINoChoicesIsAnError(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, `{"id": "x", "object": "chat.completion", "choices": []}`)
	})
	a := newTestActor(t, "openai:m", s.URL, Params{Retry: Retry{}})
	if _, err := a.Propose(context.Background(), testReq); err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Fatalf("error %v", err)
	}
}

// TestLatencyRecorded checks that a live answer carries the provider's
// latency without the cache (--no-cache), and that a cache hit carries
// the original latency and says it is cached.
func TestLatencyRecorded(t *testing.T) {
	const delay = 40 * time.Millisecond
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, n int) {
		if n == 1 {
			apiError(w, 500, "server_error", "", "try again") // retried: not part of the latency
			return
		}
		time.Sleep(delay)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, completion(`{"patch": [], "note": "ok"}`, 12, 3, 0))
	})
	a := newTestActor(t, "openai:test-model", s.URL, Params{})
	r, err := a.Propose(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if r.Latency < delay || r.Latency > 20*delay || r.Cached {
		t.Fatalf("uncached answer: latency %v cached %v, want at least %v and not cached", r.Latency, r.Cached, delay)
	}
	c := &Cached{Actor: a, Dir: t.TempDir()}
	first, err := c.Propose(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	hit, err := c.Propose(context.Background(), testReq)
	if err != nil {
		t.Fatal(err)
	}
	if first.Cached || first.Latency < delay {
		t.Fatalf("first answer through the cache: latency %v cached %v", first.Latency, first.Cached)
	}
	if !hit.Cached || hit.Latency.Milliseconds() != first.Latency.Milliseconds() {
		t.Fatalf("cache hit: latency %v cached %v, want %v and cached", hit.Latency, hit.Cached, first.Latency)
	}
}
