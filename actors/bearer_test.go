package actors

import (
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
// without end grew patchbench by 4 GB in 50 s (issue 23's fifth attack).
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
