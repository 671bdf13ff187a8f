package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

// writeHugeCompletion writes a chat completion whose answer is n bytes of
// filler, in chunks, without holding it.
func writeHugeCompletion(w http.ResponseWriter, prefix, filler string, n int) {
	w.Header().Set("Content-Type", "application/json")
	io.WriteString(w, `{"id": "x", "object": "chat.completion", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "`+prefix)
	chunk := strings.Repeat(filler, (64<<10)/len(filler))
	for left := n - len(prefix); left > 0; left -= len(chunk) {
		if left < len(chunk) {
			chunk = chunk[:left]
		}
		if _, err := io.WriteString(w, chunk); err != nil {
			return
		}
	}
	io.WriteString(w, `"}, "finish_reason": "length"}], "usage": {"prompt_tokens": 10, "completion_tokens": 9000000, "total_tokens": 9000010}}`)
}

// An answer over the limit is an answer, not an error: its first limit
// bytes (what the runner scans for leaks) and its exact length come back, whether its body is within the tap's bound (the
// client decodes it) or far beyond (the rest is read through the
// scanner), and it is asked once.
func TestOpenAIOverlongAnswer(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
	}{
		{"just over the limit", DefaultMaxAnswerBytes + 100},
		{"30 MiB", 30 << 20},
	} {
		t.Run(tt.name, func(t *testing.T) {
			s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
				writeHugeCompletion(w, `{\"patch\": [], \"note\": \"`, "x", tt.n)
			})
			a := newTestActor(t, "openai:m", s.URL, Params{})
			r, err := a.Propose(context.Background(), testReq)
			if err != nil {
				t.Fatal(err)
			}
			// The prefix's five escapes decode to one byte each fewer.
			if want := int64(tt.n - 5); r.Oversize != want || len(r.Raw) != DefaultMaxAnswerBytes || !strings.HasPrefix(r.Raw, `{"patch": [], "note": "xxx`) {
				t.Errorf("oversize %d (want %d), kept %d bytes: %.40q", r.Oversize, want, len(r.Raw), r.Raw)
			}
			if s.calls.Load() != 1 {
				t.Errorf("%d calls: an over-long answer is not retried", s.calls.Load())
			}
		})
	}
	// A limit of the actor's own.
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) { writeHugeCompletion(w, "", "y", 5000) })
	a := newTestActor(t, "openai:m", s.URL, Params{MaxAnswerBytes: 4096})
	if r, err := a.Propose(context.Background(), testReq); err != nil || r.Oversize != 5000 {
		t.Errorf("a 5000-byte answer over a 4096-byte limit: %v, oversize %d", err, r.Oversize)
	}
	// An answer within the limit whose JSON is over the tap's bound (every
	// byte escaped) comes back whole, without the provider's usage.
	s = newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) { writeHugeCompletion(w, "", `\u0001`, 6*400000) })
	a = newTestActor(t, "openai:m", s.URL, Params{})
	r, err := a.Propose(context.Background(), testReq)
	if err != nil || r.Oversize != 0 || r.Raw != strings.Repeat("\x01", 400000) || r.Usage != nil {
		t.Errorf("an escaped answer within the limit: %v, oversize %d, %d bytes, usage %v", err, r.Oversize, len(r.Raw), r.Usage)
	}
}

// An error response is read only to the tap's bound.
func TestOpenAIHugeErrorBody(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		w.WriteHeader(500)
		io.WriteString(w, `{"error": {"message": "`)
		chunk := strings.Repeat("e", 1<<20)
		for range 40 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
	})
	a := newTestActor(t, "openai:m", s.URL, Params{Retry: Retry{}})
	_, err := a.Propose(context.Background(), testReq)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 500 || len(err.Error()) > 4096 {
		t.Fatalf("error %.200v", err)
	}
}

func TestOllamaOverlongAnswer(t *testing.T) {
	s := ollamaChat(t, func(w http.ResponseWriter, _ int32) {
		io.WriteString(w, `{"model": "m", "message": {"role": "assistant", "content": "`)
		chunk := strings.Repeat("z", 1<<20)
		for range 30 {
			if _, err := io.WriteString(w, chunk); err != nil {
				return
			}
		}
		io.WriteString(w, `"}, "done": true, "prompt_eval_count": 1, "eval_count": 7000000}`+"\n")
	})
	a, err := NewOllama("ollama:m", s.URL, Params{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Propose(context.Background(), testReq)
	if err != nil || r.Oversize != 30<<20 || len(r.Raw) != DefaultMaxAnswerBytes {
		t.Fatalf("%v: oversize %d, kept %d", err, r.Oversize, len(r.Raw))
	}
}

func TestFilesOverlongAnswer(t *testing.T) {
	dir := t.TempDir()
	a, err := New("files:"+dir, Params{MaxAnswerBytes: 1000})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{CaseID: "c", StepID: "s", Round: 1, Attempt: 1, Messages: testReq.Messages}
	if _, err := a.Propose(context.Background(), req); !errors.Is(err, ErrPending) {
		t.Fatal(err)
	}
	answer := filepath.Join(dir, FilesAnswers, RequestKey(req)+".txt")
	os.WriteFile(answer, []byte(strings.Repeat("é", 1500)), 0o644)
	r, err := a.Propose(context.Background(), req)
	if err != nil || r.Oversize != 3000 || !utf8.ValidString(r.Raw) || len(r.Raw) > 1000 || len(r.Raw) < 999 {
		t.Fatalf("%v: oversize %d, %q", err, r.Oversize, r.Raw)
	}
}

// TestClip: an answer over the limit keeps its first limit bytes (what
// the runner scans), at a UTF-8 boundary; Kept cuts it to
// KeptAnswerBytes for the record, text and arguments alike.
func TestClip(t *testing.T) {
	long := strings.Repeat("€", KeptAnswerBytes) // 3 bytes each
	r := Response{Raw: long, Calls: []ToolCall{{ID: "c", Arguments: long}, {ID: "d", Arguments: "{}"}}}.Clip(100000)
	if r.Oversize != int64(len(long)) || len(r.Raw) > 100000 || !utf8.ValidString(r.Raw) || len(r.Raw) < 100000-3 {
		t.Errorf("oversize %d, kept %d", r.Oversize, len(r.Raw))
	}
	if c := r.Calls[0]; c.Oversize != int64(len(long)) || c.Arguments != r.Raw || r.Calls[1].Oversize != 0 {
		t.Errorf("arguments: oversize %d, kept %d", c.Oversize, len(c.Arguments))
	}
	k := r.Kept()
	if k.Oversize != r.Oversize || len(k.Raw) > KeptAnswerBytes || len(k.Raw) < KeptAnswerBytes-3 || !utf8.ValidString(k.Raw) ||
		len(k.Calls[0].Arguments) != len(k.Raw) || k.Calls[1].Arguments != "{}" || len(r.Calls[0].Arguments) < 100000-3 {
		t.Errorf("kept: %d bytes, arguments %d bytes (the clipped response's %d)", len(k.Raw), len(k.Calls[0].Arguments), len(r.Calls[0].Arguments))
	}
	if k := (Response{Raw: long}).Kept(); k.Raw != long {
		t.Errorf("an answer within the limit is kept whole by Kept: %d bytes", len(k.Raw))
	}
	if r := (Response{Raw: "short"}).Clip(10); r.Oversize != 0 || r.Raw != "short" {
		t.Errorf("%+v", r)
	}
	// A response clipped already keeps its length.
	if r := (Response{Raw: "abc", Oversize: 99}).Clip(10); r.Oversize != 99 || r.Raw != "abc" {
		t.Errorf("%+v", r)
	}
}

// The scanner decodes the answer as encoding/json does, however the
// text is cut into writes.
func TestAnswerScanner(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	pieces := []string{"a", "é", "€", "😀", `"`, `\`, "\n", "\t", "\x01", "/", "{", "}", "[", "]", ":", ",", "\u2028", "\ud7ff"}
	for range 2000 {
		var b strings.Builder
		for range rng.IntN(30) {
			b.WriteString(pieces[rng.IntN(len(pieces))])
		}
		content := b.String()
		other, _ := json.Marshal(map[string]any{"x": []any{content, map[string]any{"content": "no"}}})
		body, _ := json.Marshal(map[string]any{"id": "x", "other": json.RawMessage(other),
			"choices": []any{map[string]any{"message": map[string]any{"role": "assistant", "content": content}}}, "usage": map[string]any{"content": "no"}})
		// Escape some characters as \u, surrogate pairs included.
		text := strings.NewReplacer("😀", `\ud83d\ude00`, "é", `\u00e9`).Replace(string(body))
		for _, keep := range []int{1 << 20, 5} {
			sc := &answerScanner{path: []string{"choices", "0", "message", "content"}, keep: keep}
			for rest := []byte(text); len(rest) > 0; {
				n := 1 + rng.IntN(len(rest))
				sc.Write(rest[:n])
				rest = rest[n:]
			}
			want := content
			if len(want) > keep {
				want = want[:keep]
			}
			if !sc.found || sc.n != int64(len(content)) || string(sc.text) != want {
				t.Fatalf("%s: found %v, %d bytes %q; want %d bytes %q", text, sc.found, sc.n, sc.text, len(content), want)
			}
		}
	}
	// A lone surrogate is U+FFFD, as encoding/json makes it; NDJSON
	// values add up.
	sc := &answerScanner{path: []string{"message", "content"}, keep: 100}
	sc.Write([]byte(`{"message": {"content": "a\ud800b"}}` + "\n" + `{"message": {"content": "c"}, "done": true}`))
	if string(sc.text) != "a\uFFFDbc" {
		t.Errorf("%q", sc.text)
	}
}

// Usage figures a provider sends go on as they are; figures that are not
// integers are quoted, and the answer is kept.
func TestUsageAsSent(t *testing.T) {
	for _, tt := range []struct {
		usage   string
		invalid string
		prompt  int
	}{
		{`{"prompt_tokens": 4611686018427387904, "completion_tokens": 5}`, "", 1 << 62},
		{`{"prompt_tokens": -7, "completion_tokens": 5}`, "", -7},
		{`{"prompt_tokens": 1e300, "completion_tokens": 5}`, "usage.prompt_tokens: number 1e300", 0},
		{`{"prompt_tokens": "NaN", "completion_tokens": 5}`, "usage.prompt_tokens: string", 0},
	} {
		s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
			fmt.Fprintf(w, `{"id": "x", "model": "m", "choices": [{"index": 0, "message": {"role": "assistant", "content": "{}"}}], "usage": %s}`, tt.usage)
		})
		a := newTestActor(t, "openai:m", s.URL, Params{Retry: Retry{}})
		r, err := a.Propose(context.Background(), testReq)
		if err != nil || r.Raw != "{}" || r.Usage == nil || r.Usage.Invalid != tt.invalid || r.Usage.Prompt != tt.prompt || r.Usage.Implausible() == "" {
			t.Errorf("%s: %v %+v", tt.usage, err, r.Usage)
		}
	}
	s := ollamaChat(t, func(w http.ResponseWriter, _ int32) {
		io.WriteString(w, `{"model": "m", "message": {"role": "assistant", "content": "{}"}, "done": true, "prompt_eval_count": 1e300, "eval_count": 3}`)
	})
	a, err := NewOllama("ollama:m", s.URL, Params{Retry: Retry{}})
	if err != nil {
		t.Fatal(err)
	}
	r, err := a.Propose(context.Background(), testReq)
	if err != nil || r.Raw != "{}" || r.Usage.Invalid != "prompt_eval_count: 1e300" || r.Usage.Completion != 3 || r.Model != "m" {
		t.Fatalf("%v %+v", err, r.Usage)
	}
	for _, u := range []Usage{{Prompt: 10, Completion: 5}, {Prompt: MaxUsageTokens}} {
		if why := u.Implausible(); why != "" {
			t.Errorf("%+v: %s", u, why)
		}
	}
}

// What a provider sends reaches a terminal, a record or a prompt with its
// control and formatting characters escaped.
func TestProviderTextIsEscaped(t *testing.T) {
	hostile := "bad\x1b[2J\r\x07 \u202eevil\u2066 key\nnext line"
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		b, _ := json.Marshal(map[string]any{"error": map[string]any{"message": hostile, "type": "invalid_request_error", "param": nil, "code": "x"}})
		w.WriteHeader(400)
		w.Write(b)
	})
	a := newTestActor(t, "openai:m", s.URL, Params{})
	_, err := a.Propose(context.Background(), testReq)
	var he *HTTPError
	if !errors.As(err, &he) || he.Message != hostile {
		t.Fatalf("error %v", err)
	}
	if msg := err.Error(); strings.ContainsAny(msg, "\x1b\r\x07\n\u202e\u2066") || !strings.Contains(msg, `bad\u001b[2J\u000d\u0007 \u202eevil\u2066 key\u000anext line`) {
		t.Errorf("message %q", msg)
	}
	// Ollama's client makes an error of a line it cannot read.
	o := ollamaChat(t, func(w http.ResponseWriter, _ int32) { io.WriteString(w, "\x1b]0;pwned\x07 not json\n") })
	b, _ := NewOllama("ollama:m", o.URL, Params{Retry: Retry{}})
	if _, err := b.Propose(context.Background(), testReq); err == nil || strings.ContainsAny(err.Error(), "\x1b\x07") {
		t.Errorf("error %q", err)
	}
}
