// Package fakeagent is a scripted tool-calling model behind a local HTTP
// server, speaking the three wire formats of PatchBench's live actors
// (OpenAI chat completions at /v1/chat/completions, Ollama chat at
// /api/chat with /api/show and /api/tags, Anthropic messages at
// /v1/messages): for runner's tests of the tools protocol and for
// scripts/fakeprovider's agent mode (scripts/hostile-agents.sh).
package fakeagent

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
)

// Turn is one scripted answer: a text and tool calls (name and
// arguments, as the model writes them), or an HTTP error Status. IDs,
// when given, are the calls' ids in the formats that carry them (OpenAI,
// Anthropic), in order; a call without one gets call_TURN_I (toolu_TURN_I).
//
// The rest add what a provider sends beside the text and the calls: Message
// adds members to the answer's message (OpenAI's choices[0].message,
// Ollama's message: a refusal, reasoning_content, thinking, a legacy
// function_call); Choices adds OpenAI choices after the first; Blocks
// adds Anthropic content blocks before the text and the calls (thinking,
// server_tool_use); Rewrite, when set, changes the encoded body before it
// is sent (a duplicate member, a usage figure of the wrong type).
type Turn struct {
	Text    string
	Calls   [][2]string
	IDs     []string
	Status  int
	Message map[string]any
	Choices []any
	Blocks  []any
	Rewrite func(body []byte) []byte
}

// message is the answer's message members with t.Message added.
func (t Turn) message(m map[string]any) map[string]any {
	for k, v := range t.Message {
		m[k] = v
	}
	return m
}

// id is the id of call i of turn t (turn n of its step), with prefix
// when the script gives none.
func (t Turn) id(prefix string, n, i int) string {
	if i < len(t.IDs) {
		return t.IDs[i]
	}
	return fmt.Sprintf("%s_%d_%d", prefix, n, i)
}

// Server answers turn n of a step (one more than the assistant messages
// in the request) with Script[n-1], the last one again past the script's
// end, and keeps every request's body. Its zero value with a Script is
// ready; it is safe for concurrent use.
type Server struct {
	Script   []Turn
	requests atomic.Int64
	mu       sync.Mutex
	bodies   []string
}

// Requests is the number of model requests answered (or failed).
func (f *Server) Requests() int64 { return f.requests.Load() }

// Bodies are the requests' bodies, in order.
func (f *Server) Bodies() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.bodies...)
}

// ServeHTTP implements http.Handler.
func (f *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/api/show":
		fmt.Fprint(w, `{}`)
		return
	case "/api/tags":
		fmt.Fprint(w, `{"models": []}`)
		return
	}
	f.requests.Add(1)
	b, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	f.bodies = append(f.bodies, string(b))
	f.mu.Unlock()
	var req struct {
		Messages []struct {
			Role string `json:"role"`
		} `json:"messages"`
	}
	json.Unmarshal(b, &req)
	turn := 1
	for _, m := range req.Messages {
		if m.Role == "assistant" {
			turn++
		}
	}
	t := f.Script[min(turn, len(f.Script))-1]
	if t.Status != 0 {
		w.WriteHeader(t.Status)
		fmt.Fprint(w, `{"error": {"message": "scripted failure", "type": "api_error"}}`)
		return
	}
	var out any
	switch r.URL.Path {
	case "/v1/chat/completions":
		var calls []any
		for i, c := range t.Calls {
			calls = append(calls, map[string]any{"id": t.id("call", turn, i), "type": "function", "function": map[string]any{"name": c[0], "arguments": c[1]}})
		}
		choices := append([]any{map[string]any{"index": 0,
			"message": t.message(map[string]any{"role": "assistant", "content": t.Text, "tool_calls": calls}), "finish_reason": "tool_calls"}}, t.Choices...)
		out = map[string]any{"id": "x", "object": "chat.completion", "model": "fake-1", "choices": choices,
			"usage": map[string]any{"prompt_tokens": 100, "completion_tokens": 10, "total_tokens": 110}}
	case "/api/chat":
		var calls []any
		for _, c := range t.Calls {
			calls = append(calls, map[string]any{"function": map[string]any{"name": c[0], "arguments": object(c[1])}})
		}
		out = map[string]any{"model": "fake-1", "created_at": "2025-01-01T00:00:00Z", "message": t.message(map[string]any{"role": "assistant", "content": t.Text, "tool_calls": calls}),
			"done": true, "prompt_eval_count": 100, "eval_count": 10}
	case "/v1/messages":
		blocks := append([]any(nil), t.Blocks...)
		if t.Text != "" {
			blocks = append(blocks, map[string]any{"type": "text", "text": t.Text})
		}
		for i, c := range t.Calls {
			blocks = append(blocks, map[string]any{"type": "tool_use", "id": t.id("toolu", turn, i), "name": c[0], "input": object(c[1])})
		}
		out = map[string]any{"id": "msg_1", "type": "message", "role": "assistant", "model": "fake-1", "content": blocks, "stop_reason": "tool_use",
			"usage": map[string]any{"input_tokens": 100, "output_tokens": 10}}
	default:
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	answer, _ := json.Marshal(out)
	if t.Rewrite != nil {
		answer = t.Rewrite(answer)
	}
	w.Write(append(answer, '\n'))
}

// object is arguments as the wire formats that carry them as a JSON
// object do: {} for arguments that are not one.
func object(args string) any {
	var v map[string]any
	if json.Unmarshal([]byte(args), &v) != nil {
		return map[string]any{}
	}
	return v
}
