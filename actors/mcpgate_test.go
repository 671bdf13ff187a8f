package actors

import (
	"bufio"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

// fakeEnv is an AgentEnv that keeps the messages and calls it is given
// and answers every call with "ok".
type fakeEnv struct {
	mu    sync.Mutex
	msgs  []string
	calls []ToolCall
	// cancelled counts the messages handed on with a context that had
	// ended.
	cancelled int
}

func (e *fakeEnv) Task() string { return "the task" }

func (e *fakeEnv) Call(_ context.Context, c ToolCall) (string, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.calls = append(e.calls, c)
	return "ok", false
}

func (e *fakeEnv) Over() <-chan struct{} { return nil }

func (e *fakeEnv) Message(ctx context.Context, text string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.msgs = append(e.msgs, text)
	if ctx.Err() != nil {
		e.cancelled++
	}
}

// TestReadBoundedLine: a line is read up to the bound, the rest counted
// and dropped, and the next line read whole; the last line needs no
// newline.
func TestReadBoundedLine(t *testing.T) {
	r := bufio.NewReaderSize(strings.NewReader("short\n"+strings.Repeat("y", 100)+"\n0123456789\r\nlast"), 16)
	for _, want := range []struct {
		line  string
		total int64
		eof   bool
	}{
		{"short", 5, false}, {strings.Repeat("y", 10), 100, false}, {"0123456789", 11, false}, {"last", 4, true},
	} {
		line, total, err := readBoundedLine(r, 10)
		if strings.TrimSpace(string(line)) != want.line || total != want.total || (err != nil) != want.eof {
			t.Errorf("%q %d %v, want %q %d", line, total, err, want.line, want.total)
		}
	}
}

// TestPeekHeader: the id, method, tool name and where the arguments
// start, from a message cut anywhere.
func TestPeekHeader(t *testing.T) {
	msg := `{"jsonrpc": "2.0", "id": "a1", "method": "tools/call", "params": {"_meta": {"k": [1, 2]}, "name": "read_state", "arguments": {"pointer": "xxxx`
	h := peekHeader([]byte(msg))
	if string(h.id) != `"a1"` || h.method != "tools/call" || h.name != "read_state" || !strings.HasPrefix(msg[h.argsAt:], `{"pointer"`) {
		t.Errorf("%+v", h)
	}
	for _, cut := range []string{`{"id": {"x": 1}, "method": "ping"`, `[1, 2`, `{"method": "tools/ca`, ``} {
		if h := peekHeader([]byte(cut)); h.id != nil || h.argsAt != -1 {
			t.Errorf("%s: %+v", cut, h)
		}
	}
}

// TestBearerOnlyHandsOnBodies: a request's body is handed to the run
// before the handler sees it, whole; one over the bound is handed on up
// to the bound and answered here: a tools/call is made over-size (its
// arguments cut to what was read, sized to the rest), anything else gets
// 413 with a JSON-RPC Invalid Request error. A tools/call the SDK would
// refuse is made and answered here too.
func TestBearerOnlyHandsOnBodies(t *testing.T) {
	env := &fakeEnv{}
	var seen string
	h := bearerOnly("/mcp/x", "tok", 120, &mcpCalls{env: env, maxAnswer: 32}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b := make([]byte, 200)
		n, _ := r.Body.Read(b)
		seen = string(b[:n])
	}))
	post := func(body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest("POST", "/mcp/x", strings.NewReader(body))
		r.Header.Set("Authorization", "Bearer tok")
		r.Header.Set("Mcp-Session-Id", "s")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	// The run is handed each request's head, then its body.
	bodies := func() []string {
		var b []string
		for _, m := range env.msgs {
			if !strings.HasPrefix(m, "POST /mcp/x HTTP/1.1\n") {
				b = append(b, m)
			}
		}
		return b
	}
	small := `{"jsonrpc": "2.0", "id": 1, "method": "ping"}`
	if post(small); seen != small || len(env.msgs) != 2 || env.msgs[1] != small {
		t.Fatalf("handler saw %q, run %q", seen, env.msgs)
	}
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_state","arguments":{"p":"` + strings.Repeat("z", 200) + `"}}}`
	w := post(call)
	var resp struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct{ Text string }
		}
	}
	if err := json.Unmarshal(w.Body.Bytes(), &resp); err != nil || w.Code != http.StatusOK || resp.ID != 2 || resp.Result.Content[0].Text != "ok" {
		t.Fatalf("HTTP %d %s", w.Code, w.Body)
	}
	c := env.calls[0]
	if c.Name != "read_state" || c.Oversize != int64(len(call)-len(`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"read_state","arguments":`)) ||
		!strings.HasPrefix(c.Arguments, `{"p":"zz`) || bodies()[1] != call[:120] {
		t.Errorf("call %+v, message %q", c, bodies()[1])
	}
	if w := post(`{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":5}}`); w.Code != http.StatusOK || !strings.Contains(w.Body.String(), `"id":4`) ||
		len(env.calls) != 2 || env.calls[1].Name != "5" || env.calls[1].Arguments != "{}" {
		t.Errorf("a call the SDK would refuse: HTTP %d %s, calls %+v", w.Code, w.Body, env.calls)
	}
	if w := post(`{"jsonrpc":"2.0","id":3,"method":"ping","params":{"_meta":"` + strings.Repeat("z", 200) + `"}}`); w.Code != http.StatusRequestEntityTooLarge || !strings.Contains(w.Body.String(), `"id":3`) || !strings.Contains(w.Body.String(), "-32600") {
		t.Errorf("HTTP %d %s", w.Code, w.Body)
	}
}
