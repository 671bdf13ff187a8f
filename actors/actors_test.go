package actors

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

func exampleStep(t *testing.T) (*bench.Case, *bench.Step) {
	t.Helper()
	b, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, ps := bench.ParseCase("sup-example-refund.yaml", b)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return c, c.Steps[0]
}

func TestReference(t *testing.T) {
	c, s := exampleStep(t)
	r, err := Reference{}.Propose(context.Background(), Request{Case: c, Step: s})
	if err != nil || r.Raw != string(s.Reference) || r.Usage != nil {
		t.Fatalf("%+v %v", r, err)
	}
}

func TestOversharerQuotesItsView(t *testing.T) {
	c, s := exampleStep(t)
	for _, tc := range []struct {
		name   string
		view   any
		canary bool
	}{
		{"projected", s.Contract.View(c.State), false},
		{"full", c.State.Value(), true},
	} {
		r, err := Oversharer{}.Propose(context.Background(), Request{Case: c, Step: s, View: tc.view})
		if err != nil {
			t.Fatal(err)
		}
		var p struct {
			Patch []map[string]any `json:"patch"`
			Note  string           `json:"note"`
		}
		if err := json.Unmarshal([]byte(r.Raw), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Patch) != 3 || !strings.Contains(p.Note, "Refund for a damaged item") {
			t.Errorf("%s: %s", tc.name, r.Raw)
		}
		if strings.Contains(p.Note, "4000 0000 0000 9995") != tc.canary {
			t.Errorf("%s: the note quotes the canary: %v", tc.name, !tc.canary)
		}
	}
}

func TestNew(t *testing.T) {
	for _, n := range []string{"reference", "oversharer", "follower", "files:" + t.TempDir()} {
		a, err := New(n, Params{})
		if err != nil || a.Name() != n {
			t.Errorf("New(%q) = %v, %v", n, a, err)
		}
	}
	if _, err := New("gpt-5", Params{}); err == nil || !strings.Contains(err.Error(), "known: files:DIR, follower, ollama:MODEL, openai:MODEL, oversharer, reference") {
		t.Errorf("unknown actor: %v", err)
	}
}
