package actors

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestRoleMap(t *testing.T) {
	mk := func(spec string) (Actor, error) { return New(spec, Params{}) }
	m, err := ParseRoleMap("agent=oversharer,reviewer=reference", mk)
	if err != nil {
		t.Fatal(err)
	}
	req := exampleRequest()
	req.View = map[string]any{"x": 1}
	r, err := m.Propose(context.Background(), req)
	if err != nil || !strings.Contains(r.Raw, "everything I was shown") {
		t.Fatalf("role agent went to %q: %v", r.Raw, err)
	}
	if got := m.Missing([]string{"agent", "reviewer", "lead"}); len(got) != 1 || got[0] != "lead" {
		t.Errorf("missing %v", got)
	}
	if _, err := m.Propose(context.Background(), Request{Role: "lead"}); err == nil || !strings.Contains(err.Error(), `no actor for role "lead"`) {
		t.Errorf("unmapped role: %v", err)
	}
	// A spec alone takes the other roles; a spec's own query is no role.
	m, err = ParseRoleMap("reviewer=reference,openai:m?temperature=0", func(spec string) (Actor, error) {
		return New(spec, Params{OpenAIBaseURL: "http://127.0.0.1:1/v1"})
	})
	if err != nil || len(m.Missing([]string{"lead"})) != 0 || m.fallback.Name() != "openai:m?temperature=0" {
		t.Fatalf("%v %v", m, err)
	}
	// Two specs without roles are most likely two actors meant to run
	// side by side: the refusal says how to give them.
	if _, err := ParseRoleMap("reference,oversharer", mk); err == nil || !strings.Contains(err.Error(), "two actors for the other roles") ||
		!strings.Contains(err.Error(), "to run several actors, give --actor once per actor") {
		t.Errorf("two actors without roles: %v", err)
	}
	for _, bad := range []string{"a=reference,a=oversharer", "reference,oversharer", "a=nobody"} {
		if _, err := ParseRoleMap(bad, mk); err == nil {
			t.Errorf("%s: accepted", bad)
		}
	}
}

func TestRateLimitPerEndpoint(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(`{"patch": []}`, 1, 1, 0))
	})
	lims := &Limiters{RPS: 20}
	a := newTestActor(t, "openai:a", s.URL, Params{})
	b := newTestActor(t, "openai:b", s.URL, Params{})
	la := &Limited{Actor: a, Limiter: lims.For(Endpoint(a))}
	lb := &Limited{Actor: b, Limiter: lims.For(Endpoint(b))}
	if lims.For(Endpoint(a)) != lims.For(Endpoint(b)) {
		t.Fatal("two actors on one server do not share a limiter")
	}
	start := time.Now()
	for i := 0; i < 3; i++ {
		for _, x := range []Actor{la, lb} {
			if _, err := x.Propose(context.Background(), testReq); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Six requests at 20 per second with a burst of one: at least 250 ms.
	if d := time.Since(start); d < 250*time.Millisecond {
		t.Errorf("six requests took %v at --rps 20", d)
	}
}

func TestStructuredOutput(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(`{"patch": [], "note": "x"}`, 1, 1, 0))
	})
	a := newTestActor(t, "openai:m", s.URL, Params{Structured: true})
	if _, err := a.Propose(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	rf := s.bodies[0]["response_format"].(map[string]any)
	js := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "proposal" {
		t.Fatalf("response_format %v", rf)
	}
	b, _ := json.Marshal(js["schema"])
	if !strings.Contains(string(b), `"required":["patch","note"]`) {
		t.Errorf("schema %s", b)
	}
	so, _, last := ollamaServer(t, false, "mistral")
	o, _ := NewOllama("ollama:mistral", so.URL, Params{Structured: true, Retry: fastRetry})
	if _, err := o.Propose(context.Background(), testReq); err != nil {
		t.Fatal(err)
	}
	if f, ok := (*last)["format"].(map[string]any); !ok || f["type"] != "object" {
		t.Errorf("ollama format %v", (*last)["format"])
	}
}
