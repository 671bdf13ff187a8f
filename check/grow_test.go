package check

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// TestValidateGrown: a case's grow list is checked at a scale: the
// suite's growing case passes every rule there; a grow list that cannot
// grow (a kind not known, a path that is no collection) is a grow
// problem; and one whose generated secrets a step may see fails the rule
// that every secret is hidden, at that scale.
func TestValidateGrown(t *testing.T) {
	var c *bench.Case
	for _, x := range loadSuite(t) {
		if x.ID == "mkt-crm-segment-export" {
			c = x
		}
	}
	if c == nil || len(c.Grow) == 0 {
		t.Fatal("mkt-crm-segment-export does not grow")
	}
	configs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	with := func(g ...bench.Grow) *bench.Case {
		x := *c
		x.Grow = g
		return &x
	}
	contacts := runtime.MustPointer("/contacts")
	for _, tt := range []struct {
		name string
		c    *bench.Case
		code string // "" for none
		msg  string
	}{
		{"the suite's case", c, "", ""},
		{"an unknown kind", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "mobile", Kind: "gossip"}}}), bench.ProblemGrow, `kind "gossip"`},
		{"no collection", with(bench.Grow{Path: runtime.MustPointer("/meta/export_id")}), bench.ProblemGrow, "not an array or an object of records"},
		{"nothing there", with(bench.Grow{Path: runtime.MustPointer("/no/such")}), bench.ProblemGrow, "nothing at /no/such"},
		{"a visible secret", with(bench.Grow{Path: contacts, Fixed: map[string]any{"top_category": "cycling"},
			Secrets: []bench.GrowSecret{{Member: "first_name", Kind: bench.KindPersonalData}}}), bench.ProblemSecretVisible, "at scale 100KB"},
	} {
		ps, err := ValidateGrown(context.Background(), []*bench.Case{tt.c}, configs, DefaultCheckScale, bench.DefaultScaleSeed)
		if err != nil {
			t.Fatal(err)
		}
		if tt.code == "" {
			if len(ps) > 0 {
				t.Errorf("%s: %v", tt.name, ps)
			}
			continue
		}
		if !slices.ContainsFunc(ps, func(p bench.Problem) bool { return p.Code == tt.code && strings.Contains(p.Msg, tt.msg) }) {
			t.Errorf("%s: want a %s problem saying %q, got %v", tt.name, tt.code, tt.msg, ps)
		}
	}
}
