package actors

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
)

// Errors are told apart by type, not by their text.

// A 400 retries without the temperature only when the API error's param
// names it; a message that merely mentions it is another parameter's
// fault, and the run ends.
func TestOpenAITemperatureByParam(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, body map[string]any, _ int) {
		apiErrorParam(w, 400, "invalid_request_error", "invalid_value", "max_tokens is too large for this temperature setting", `"max_tokens"`)
	})
	temp := 0.2
	a := newTestActor(t, "openai:some-model", s.URL, Params{Temperature: &temp})
	_, err := a.Propose(context.Background(), testReq)
	var he *HTTPError
	if !errors.As(err, &he) || he.Status != 400 || he.Param != "max_tokens" {
		t.Fatalf("error %v", err)
	}
	if n := s.calls.Load(); n != 1 {
		t.Errorf("%d calls, want 1 (no retry without the temperature)", n)
	}
}

// An Ollama server that refuses connections is named as such.
func TestOllamaConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	a, err := NewOllama("ollama:m", "http://"+addr, Params{Retry: Retry{MaxRetries: 0}})
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), testReq)
	if !errors.Is(err, syscall.ECONNREFUSED) || !strings.Contains(err.Error(), "no Ollama server at http://"+addr) {
		t.Fatalf("error %v", err)
	}
}

// A connection an Ollama server drops before answering is retried.
func TestOllamaDroppedConnection(t *testing.T) {
	var chats atomic.Int32
	s := ollamaChat(t, func(w http.ResponseWriter, n int32) {
		chats.Store(n)
		if n == 1 {
			if conn, _, err := w.(http.Hijacker).Hijack(); err == nil {
				conn.Close()
			}
			return
		}
		io.WriteString(w, ollamaAnswer)
	})
	a, err := NewOllama("ollama:m", s.URL, Params{Retry: fastRetry})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Propose(context.Background(), testReq); err != nil {
		t.Fatalf("a dropped connection should be retried: %v", err)
	}
	if chats.Load() != 2 {
		t.Errorf("%d chats", chats.Load())
	}
	// The drop itself is told by its type.
	if err := a.convert(context.Background(), &net.OpError{Op: "read", Err: io.ErrUnexpectedEOF}); !errors.Is(err, errDropped) {
		t.Errorf("an unexpected EOF is %v", err)
	}
}
