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
		{"the root", with(bench.Grow{Path: runtime.Pointer{}}), bench.ProblemGrow, "the state itself cannot grow"},
		{"twice", with(bench.Grow{Path: contacts}, bench.Grow{Path: contacts}), bench.ProblemGrow, "grown by grow 0 already"},
		{"inside another", with(bench.Grow{Path: contacts}, bench.Grow{Path: runtime.MustPointer("/contacts/0/email_consent")}), bench.ProblemGrow, "grown by grow 0 already"},
		{"scalars", with(bench.Grow{Path: runtime.MustPointer("/segment_request/criteria/countries")}), bench.ProblemGrow, "are not objects"},
		{"a record's own members", with(bench.Grow{Path: runtime.MustPointer("/segment_request")}), bench.ProblemGrow, "are not objects"},
		{"a huge weight", with(bench.Grow{Path: contacts, Weight: 1e308}), bench.ProblemGrow, "at most 1e+06"},
		{"a fixed member the records lack", with(bench.Grow{Path: contacts, Fixed: map[string]any{"nonexistent": 5}}), bench.ProblemGrow, `fixed member "nonexistent"`},
		{"a secret member the records lack", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "passport", Kind: bench.KindPersonalData}}}), bench.ProblemGrow, `secret member "passport"`},
		{"a nested secret member", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "email_consent/source", Kind: bench.KindPersonalData}}}), bench.ProblemGrow, `secret member "email_consent/source"`},
		{"a nested secret member", with(bench.Grow{Path: contacts, Fixed: map[string]any{"top_category": "cycling"},
			Secrets: []bench.GrowSecret{{Member: "/email_consent/updated_at", Kind: bench.KindPersonalData}}}), bench.ProblemSecretVisible, "grown-0-email_consent.updated_at-"},
		{"a nested secret pointer into nothing", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "/email_consent/nonexistent", Kind: bench.KindPersonalData}}}), bench.ProblemGrow, `secret member "/email_consent/nonexistent" is not a member`},
		{"a nested secret member of no string", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "/email_consent/marketing", Kind: bench.KindPersonalData}}}), bench.ProblemGrow, "holds no string"},
		{"an injection share of none", with(bench.Grow{Path: contacts, Inject: &bench.GrowInject{Member: "/email_consent/source", Share: 0}}), bench.ProblemGrow, "share 0"},
		{"an injection the case lacks", with(bench.Grow{Path: contacts, Inject: &bench.GrowInject{Member: "/email_consent/source", Share: 0.1, Injection: 3}}), bench.ProblemGrow, "injection 3"},
		{"an injection in a member the step cannot see", with(bench.Grow{Path: contacts, Fixed: map[string]any{"top_category": "cycling"},
			Inject: &bench.GrowInject{Member: "mobile", Share: 0.1}}), bench.ProblemInjectionHidden, "at scale 100KB"},
		{"a secret member of no string", with(bench.Grow{Path: contacts, Secrets: []bench.GrowSecret{{Member: "lifetime_value_eur", Kind: bench.KindPersonalData}}}), bench.ProblemGrow, "holds no string"},
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

// TestValidateGrownFixedCanary: a fixed value that holds a canary is in
// every generated record; validate says so once for the grow entry, with
// the number of copies, not once per record: that the state holds it
// elsewhere, that the reference run's final state does, that each step's
// view shows it.
func TestValidateGrownFixedCanary(t *testing.T) {
	var c *bench.Case
	for _, x := range loadSuite(t) {
		if x.ID == "fin-fraud-alert-triage" {
			c = x
		}
	}
	configs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	x := *c
	x.Grow = []bench.Grow{{Path: runtime.MustPointer("/alerts"), Like: runtime.MustPointer("/alerts/1"),
		Fixed: map[string]any{"disposition": map[string]any{"label": "false_positive", "rationale": "card 4921 7730 5186 2249 confirmed in the app"},
			"review": map[string]any{"decision": "upheld", "block_card": false}}}}
	ps, err := ValidateGrown(context.Background(), []*bench.Case{&x}, configs, bench.Scale{Bytes: 1_000_000}, bench.DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, p := range ps {
		count[p.Code]++
		if !strings.Contains(p.Msg, "times in the collection /alerts of grow 0") || !strings.Contains(p.Msg, "a fixed value of the grow entry holds it") {
			t.Errorf("%s: %s", p.Code, p.Msg)
		}
	}
	if count[bench.ProblemSecretInState] != 1 || count[bench.ProblemReferenceLeaksState] != 1 || count[bench.ProblemSecretInView] != len(x.Steps) || len(ps) != 2+len(x.Steps) {
		t.Errorf("%d problems: %v", len(ps), count)
	}
}
