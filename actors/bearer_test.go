package actors

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestBearerOnlyBoundsSessions checks that an mcp: agent's server opens
// at most maxMCPSessions sessions in a run (a POST without an
// Mcp-Session-Id header opens one; past the bound it gets 429), that
// requests of an open session and requests without the token do not
// count: an agent that opened sessions
// without end grew patchbench by 4 GB in 50 s.
func TestBearerOnlyBoundsSessions(t *testing.T) {
	served := 0
	h := bearerOnly("/mcp/x", "tok", 16, &mcpCalls{env: &fakeEnv{}, maxAnswer: 8}, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { served++ }))
	do := func(token, session, body string) int {
		r := httptest.NewRequest("POST", "/mcp/x", strings.NewReader(body))
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
		if session != "" {
			r.Header.Set("Mcp-Session-Id", session)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w.Code
	}
	for i := 0; i < 3; i++ {
		if code := do("wrong", "", "{}"); code != http.StatusUnauthorized {
			t.Fatalf("wrong token: %d", code)
		}
	}
	for i := 0; i < maxMCPSessions; i++ {
		if code := do("tok", "", "{}"); code != http.StatusOK {
			t.Fatalf("session %d: %d", i+1, code)
		}
	}
	if code := do("tok", "", "{}"); code != http.StatusTooManyRequests {
		t.Errorf("session %d: %d, want 429", maxMCPSessions+1, code)
	}
	if code := do("tok", "s1", "{}"); code != http.StatusOK {
		t.Errorf("a request of an open session: %d", code)
	}
	if served != maxMCPSessions+1 {
		t.Errorf("%d requests served, want %d", served, maxMCPSessions+1)
	}
}

// TestBearerOnlyHandsOnEveryRequest: every request an mcp: agent sends
// is handed to the run before it is routed or its token checked, whatever
// its method, path, token or session: its request line as sent, every
// header (but the run's own token) and its body. Each case puts the
// card where the run must see it; the reply is what the agent hears.
func TestBearerOnlyHandsOnEveryRequest(t *testing.T) {
	const card = "4000 0000 0000 9995"
	for _, tc := range []struct {
		name, method, target, body string
		headers                    map[string]string
		code                       int
		want                       string // what the run must be handed
	}{
		{"header", "POST", "/mcp/x", `{"jsonrpc": "2.0", "id": 1, "method": "ping"}`, map[string]string{"X-Card": card, "User-Agent": "ua " + card}, http.StatusOK, "X-Card: " + card},
		{"user-agent", "POST", "/mcp/x", `{}`, map[string]string{"User-Agent": "ua " + card}, http.StatusOK, "User-Agent: ua " + card},
		{"query", "POST", "/mcp/x?card=4000%200000%200000%209995", `{}`, nil, http.StatusOK, "POST /mcp/x?card=4000%200000%200000%209995 HTTP/1.1"},
		{"wrong path", "POST", "/4000%200000%200000%209995", `{"x": 1}`, nil, http.StatusNotFound, "POST /4000%200000%200000%209995"},
		{"bad token", "POST", "/mcp/x", `{"x": 1}`, map[string]string{"Authorization": "Bearer " + card}, http.StatusUnauthorized, "Authorization: Bearer " + card},
		{"session id", "POST", "/mcp/x", `{}`, map[string]string{"Mcp-Session-Id": card}, http.StatusOK, "Mcp-Session-Id: " + card},
		{"delete body", "DELETE", "/mcp/x", `{"card": "` + card + `"}`, map[string]string{"X-Card": card}, http.StatusOK, `{"card": "` + card + `"}`},
		{"put body", "PUT", "/mcp/x", `{"card": "` + card + `"}`, nil, http.StatusOK, `{"card": "` + card + `"}`},
		{"get body", "GET", "/mcp/x", `{"card": "` + card + `"}`, nil, http.StatusOK, `{"card": "` + card + `"}`},
		{"get body over the bound", "GET", "/mcp/x", card + strings.Repeat("z", 100), nil, http.StatusRequestEntityTooLarge, card},
	} {
		t.Run(tc.name, func(t *testing.T) {
			env := &fakeEnv{}
			h := bearerOnly("/mcp/x", "tok", 64, &mcpCalls{env: env, maxAnswer: 16}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
			r := httptest.NewRequest(tc.method, tc.target, strings.NewReader(tc.body))
			r.Header.Set("Authorization", "Bearer tok")
			for k, v := range tc.headers {
				r.Header.Set(k, v)
			}
			w := httptest.NewRecorder()
			h.ServeHTTP(w, r)
			all := strings.Join(env.msgs, "\n")
			if w.Code != tc.code || !strings.Contains(all, tc.want) {
				t.Errorf("HTTP %d (want %d); the run was handed %q", w.Code, tc.code, env.msgs)
			}
			if tc.name != "bad token" && strings.Contains(all, "tok") {
				t.Errorf("the run's own token was handed on: %q", env.msgs)
			}
		})
	}
}

// TestBearerOnlyRequestOfAGoneClient: a request whose client went away
// (its context cancelled) is handed to the run all the same, with a
// context that has not ended, so that the run does not give up on it;
// once the gate ended, requests are no longer handed on and get 503.
func TestBearerOnlyRequestOfAGoneClient(t *testing.T) {
	env := &fakeEnv{}
	h := bearerOnly("/mcp/x", "tok", 64, &mcpCalls{env: env, maxAnswer: 16}, http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := httptest.NewRequest("POST", "/mcp/x", strings.NewReader(`{"card": "4000 0000 0000 9995"}`)).WithContext(ctx)
	r.Header.Set("Authorization", "Bearer tok")
	h.ServeHTTP(httptest.NewRecorder(), r)
	if len(env.msgs) != 2 || env.msgs[1] != `{"card": "4000 0000 0000 9995"}` || env.cancelled != 0 {
		t.Errorf("handed %q, %d of them with an ended context", env.msgs, env.cancelled)
	}
	h.end()
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest("POST", "/mcp/x", strings.NewReader(`{}`)))
	if w.Code != http.StatusServiceUnavailable || len(env.msgs) != 2 {
		t.Errorf("after the end: HTTP %d, handed %q", w.Code, env.msgs)
	}
}
