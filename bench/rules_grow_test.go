package bench

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
)

// referenceOps counts the operations of each step's reference proposal
// along the reference run of c (which must commit every step).
func referenceOps(t *testing.T, c *Case) map[string]int {
	t.Helper()
	run, err := RunReference(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if run.Failed >= 0 {
		why := run.RuleError + run.PhaseError
		if d := run.Steps[run.Failed].Decision; d != nil && d.Rejection() != nil {
			why = d.Rejection().Code + ": " + d.Rejection().Message
		}
		t.Fatalf("case %s: the reference run fails at step %d: %s", c.ID, run.Failed, why)
	}
	out := map[string]int{}
	for _, rs := range run.Steps {
		var ref struct {
			Patch []json.RawMessage `json:"patch"`
		}
		if err := json.Unmarshal(rs.Proposal, &ref); err != nil {
			t.Fatal(err)
		}
		out[rs.Step.ID] = len(ref.Patch)
	}
	return out
}

// The growing cases' targets grow with the state: at 1 MB each has a
// step whose reference, generated from rules, has more operations than
// at 1x. With PB_REFERENCE_10MB=1 the counts at 10 MB are logged too
// (the figures of docs/scale.md; slow).
func TestGrownReferencesGrow(t *testing.T) {
	cases, ps, err := LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	scales := []string{"1MB"}
	if os.Getenv("PB_REFERENCE_10MB") != "" {
		scales = append(scales, "10MB")
	}
	n := 0
	for _, c := range cases {
		if len(c.Grow) == 0 {
			continue
		}
		rules := false
		for _, s := range c.Steps {
			rules = rules || s.HasReferenceRules()
		}
		if !rules {
			continue
		}
		n++
		base := referenceOps(t, c)
		counts := map[string][]int{}
		for _, s := range c.Steps {
			counts[s.ID] = []int{base[s.ID]}
		}
		grew := false
		for _, size := range scales {
			sc, err := ParseScale(size)
			if err != nil {
				t.Fatal(err)
			}
			g, err := c.Grown(sc, DefaultScaleSeed)
			if err != nil {
				t.Fatal(err)
			}
			ops := referenceOps(t, g)
			for _, s := range c.Steps {
				counts[s.ID] = append(counts[s.ID], ops[s.ID])
				grew = grew || size == "1MB" && ops[s.ID] > base[s.ID]
			}
		}
		for _, s := range c.Steps {
			t.Logf("%s %s: reference ops at 1x, %v: %v", c.ID, s.ID, scales, counts[s.ID])
		}
		if !grew {
			t.Errorf("case %s: no step's reference has more operations at 1MB than at 1x", c.ID)
		}
	}
	if n == 0 {
		t.Error("no growing case generates its reference from rules")
	}
}

// A grow variant gives about its share of the generated records its
// fixed members, over the Grow's own; shares out of (0, 1], summing past
// 1, or naming no member of the records are grow errors.
func TestGrowVariants(t *testing.T) {
	c := embeddedCase(t, "mkt-crm-segment-export")
	if len(c.Grow) != 1 || len(c.Grow[0].Variants) != 1 {
		t.Fatal("mkt-crm-segment-export no longer grows its contacts with one variant")
	}
	share := c.Grow[0].Variants[0].Share
	g, err := c.Grown(Scale{Bytes: 1 << 20}, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	contacts := g.State.Value().(map[string]any)["contacts"].([]any)
	own := len(c.State.Value().(map[string]any)["contacts"].([]any))
	running, consenting, n := 0, 0, 0
	for _, x := range contacts[own:] {
		r := x.(map[string]any)
		n++
		if r["top_category"] == "running" {
			running++
			if r["email_consent"].(map[string]any)["marketing"] == true {
				consenting++
			}
		} else if r["top_category"] != "cycling" {
			t.Fatalf("a generated contact's top category is %v", r["top_category"])
		}
	}
	if got := float64(running) / float64(n); got < share/2 || got > share*2 || consenting != running {
		t.Errorf("%d of %d generated contacts are runners (share %g), %d of them with consent", running, n, share, consenting)
	}
	for _, tt := range []struct {
		variants []GrowVariant
		want     string
	}{
		{[]GrowVariant{{Share: 0, Fixed: map[string]any{"top_category": "running"}}}, "not in (0, 1]"},
		{[]GrowVariant{{Share: 0.6, Fixed: map[string]any{"top_category": "running"}}, {Share: 0.6, Fixed: map[string]any{"country": "NL"}}}, "sum to 1.2"},
		{[]GrowVariant{{Share: 0.1, Fixed: map[string]any{"favourite": "running"}}}, `variant 0: fixed member "favourite"`},
	} {
		bad := *c
		bad.Grow = []Grow{c.Grow[0]}
		bad.Grow[0].Variants = tt.variants
		if _, err := bad.Grown(Scale{Bytes: 100_000}, DefaultScaleSeed); err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("variants %v: error %v, want one with %q", tt.variants, err, tt.want)
		}
	}
}
