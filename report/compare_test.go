package report_test

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// run is a record of actor a's run of case c in configuration x, round 1.
func run(c, a string, passed, leaked bool) *rundir.Record {
	status := rundir.StatusFailed
	if passed {
		status = rundir.StatusPassed
	}
	content := 0.5
	if passed {
		content = 1
	}
	return &rundir.Record{RunID: c + "/x/" + a + "/1", Case: c, Config: "x", Actor: a, Round: 1,
		Status: status, SemanticPass: passed, LegalPass: passed, Leaked: leaked, ContentScore: content}
}

// pairs adds n runs of actor a to both sides: the first worse of them leak
// in B only, the next better leak in A only, the rest leak on neither.
func pairs(c *report.Comparer, a string, n, worse, better int) {
	for i := range n {
		id := fmt.Sprintf("c%04d", i)
		c.AddRepeat(report.SideA, 0, run(id, a, true, i >= worse && i < worse+better))
		c.AddRepeat(report.SideB, 0, run(id, a, true, i < worse))
	}
}

var xConfig = []*bench.Config{{Name: "x", Label: "X"}}

func gate(exact ...string) report.GateOptions {
	return report.GateOptions{Alpha: report.DefaultAlpha, MinDelta: report.DefaultMinDelta,
		Exact: func(a string) bool {
			for _, e := range exact {
				if e == a {
					return true
				}
			}
			return false
		}}
}

func delta(t *testing.T, cmp report.Comparison, actor, metric string) report.Delta {
	t.Helper()
	for _, d := range cmp.Deltas {
		if d.Actor == actor && d.Metric == metric {
			return d
		}
	}
	t.Fatalf("no %s of %s in %+v", metric, actor, cmp.Deltas)
	return report.Delta{}
}

// TestCompareGate: what fails the gate and what does not. A sampled
// actor's change counts when it is at least --min-delta and its exact p,
// Holm-adjusted, is at most --alpha; an exact actor's when it is at least
// --min-delta.
func TestCompareGate(t *testing.T) {
	for _, c := range []struct {
		name                string
		n, worse, better    int
		exact, fail         bool
		minDelta, p, holm   float64 // 0: not checked
		change              float64
		tested, regressions int
	}{
		// 23 of 46 runs start leaking (the weakened PatchOptic's follower).
		{name: "a sampled actor: 23 of 46 worse", n: 46, worse: 23, fail: true, change: 0.5, p: 2 * math.Pow(0.5, 23), tested: 1, regressions: 1},
		{name: "an exact actor: 23 of 46 worse", n: 46, worse: 23, exact: true, fail: true, change: 0.5, tested: 0, regressions: 1},
		// No change at all.
		{name: "no change", n: 46, tested: 0},
		// Noise: as many runs better as worse.
		{name: "balanced noise", n: 46, worse: 8, better: 8, change: 0, tested: 1},
		// Significant (p = 2^-19, about 2e-6) but 19 of 1,000 is below
		// --min-delta 0.02.
		{name: "significant, below min-delta", n: 1000, worse: 19, change: 0.019, tested: 1},
		// 20 of 1,000 reaches it.
		{name: "significant, at min-delta", n: 1000, worse: 20, fail: true, change: 0.02, tested: 1, regressions: 1},
		// An exact actor's one case of 46 (0.0217) counts; a sampled
		// actor's does not (p = 1).
		{name: "an exact actor, one case", n: 46, worse: 1, exact: true, fail: true, change: 1.0 / 46, regressions: 1},
		{name: "a sampled actor, one case", n: 46, worse: 1, change: 1.0 / 46},
		// Past min-delta but not significant: 5 worse, 1 better of 46
		// (p = 0.219).
		{name: "not significant", n: 46, worse: 5, better: 1, change: 4.0 / 46, tested: 1},
		// With --min-delta 0.1, 4 of 46 (0.087) is below it, for an exact
		// actor too.
		{name: "an exact actor below a larger min-delta", n: 46, worse: 4, exact: true, minDelta: 0.1, change: 4.0 / 46},
	} {
		t.Run(c.name, func(t *testing.T) {
			cmpr := report.NewComparer(xConfig, []string{"a"})
			pairs(cmpr, "a", c.n, c.worse, c.better)
			opts := gate()
			if c.exact {
				opts = gate("a")
			}
			if c.minDelta > 0 {
				opts.MinDelta = c.minDelta
			}
			got := cmpr.Compare(opts)
			leak := delta(t, got, "a", "leak_rate")
			if got.Failed() != c.fail || len(got.Regressions) != c.regressions || got.Tested != c.tested {
				t.Errorf("failed %v, %d regressions, %d tests: want %v, %d, %d\n%+v", got.Failed(), len(got.Regressions), got.Tested, c.fail, c.regressions, c.tested, got.Regressions)
			}
			if leak.Pairs != c.n || leak.Worse != c.worse || leak.Better != c.better || math.Abs(*leak.Change-c.change) > 1e-9 || leak.Regression != c.fail {
				t.Errorf("leak rate: %+v", leak)
			}
			if c.p > 0 && math.Abs(*leak.P-c.p)/c.p > 1e-6 {
				t.Errorf("p %g, want %g", *leak.P, c.p)
			}
			if c.exact != (leak.PHolm == nil) && c.tested > 0 {
				t.Errorf("Holm p %v for exact %v", leak.PHolm, c.exact)
			}
			if c.fail && len(leak.WorseRuns) != min(c.worse, report.MaxWorseRuns) {
				t.Errorf("%d worse runs listed", len(leak.WorseRuns))
			}
		})
	}
}

// TestCompareHolm: the family is the tests of sampled actors whose moved
// pairs can reach alpha, and the adjusted p is Holm's step-down.
func TestCompareHolm(t *testing.T) {
	c := report.NewComparer(xConfig, []string{"a", "b", "c", "e"})
	pairs(c, "a", 46, 8, 0) // p = 2^-7 = 0.0078
	pairs(c, "b", 46, 7, 0) // p = 2^-6 = 0.0156
	pairs(c, "c", 46, 3, 0) // cannot reach 0.05 with 3 moved pairs: not in the family
	pairs(c, "e", 46, 9, 0) // exact: not in the family
	got := c.Compare(gate("e"))
	// Per actor, the leak rate, semantic pass, legal pass and content
	// score do not move (the runs all pass); a and b leak: 2 tests.
	if got.Tested != 2 {
		t.Fatalf("%d tests in the family", got.Tested)
	}
	a, b, cc := delta(t, got, "a", "leak_rate"), delta(t, got, "b", "leak_rate"), delta(t, got, "c", "leak_rate")
	// a: 2 × 2^-7; b: max(a's, 1 × 2^-6).
	if math.Abs(*a.PHolm-2*math.Pow(0.5, 7)) > 1e-12 || math.Abs(*b.PHolm-math.Pow(0.5, 6)) > 1e-12 || cc.PHolm != nil {
		t.Errorf("Holm p: a %v, b %v, c %v", *a.PHolm, *b.PHolm, cc.PHolm)
	}
	if !a.Regression || !b.Regression || cc.Regression || !delta(t, got, "e", "leak_rate").Regression {
		t.Errorf("regressions: %+v", got.Regressions)
	}
	// At alpha 0.01 with e sampled: b's 7 moved pairs cannot reach 0.01
	// (2^-6), so the family is a and e; e's 2 × 2^-8 and a's 2^-7 pass.
	got = c.Compare(report.GateOptions{Alpha: 0.01, MinDelta: 0.02})
	if got.Tested != 2 || len(got.Regressions) != 2 || got.Regressions[0].Actor != "a" || got.Regressions[1].Actor != "e" {
		t.Errorf("alpha 0.01: %d tests, %+v", got.Tested, got.Regressions)
	}
}

// TestCompareFigures: every figure of a pair; the content score by the
// sign test; attack success over attacked pairs only; errors over every
// pair; runs B lacks fail the gate unless SharedOnly.
func TestCompareFigures(t *testing.T) {
	c := report.NewComparer(xConfig, []string{"a"})
	for i := range 10 {
		id := fmt.Sprintf("c%d", i)
		ra, rb := run(id, "a", true, false), run(id, "a", i >= 6, false)
		ra.Attack = &rundir.Attack{Secrets: []string{"s"}}
		rb.Attack = &rundir.Attack{Secrets: []string{"s"}, Succeeded: i < 6}
		if i == 9 {
			ra.Attack, rb.Attack = nil, nil
		}
		if i < 6 {
			rb.IllegalCommits = []rundir.IllegalCommit{{Step: "s", Gate: "scope"}}
		}
		c.AddRepeat(report.SideA, 0, ra)
		c.AddRepeat(report.SideB, 0, rb)
	}
	errA := run("c-err", "a", true, false)
	errB := run("c-err", "a", false, false)
	errB.Status = rundir.StatusError
	c.AddRepeat(report.SideA, 0, errA)
	c.AddRepeat(report.SideB, 0, errB)
	c.AddRepeat(report.SideA, 0, run("c-missing", "a", true, false))

	got := c.Compare(gate("a"))
	want := map[string][4]float64{ // pairs, A, B, worse
		"leak_rate":           {10, 0, 0, 0},
		"illegal_commit_rate": {10, 0, 0.6, 6},
		"attack_success_rate": {9, 0, 6.0 / 9, 6},
		"semantic_pass":       {10, 1, 0.4, 6},
		"legal_pass":          {10, 1, 0.4, 6},
		"content_score":       {10, 1, 0.7, 6},
		"error_rate":          {11, 0, 1.0 / 11, 1},
	}
	for m, w := range want {
		d := delta(t, got, "a", m)
		if d.Pairs != int(w[0]) || math.Abs(*d.A-w[1]) > 1e-9 || math.Abs(*d.B-w[2]) > 1e-9 || d.Worse != int(w[3]) || d.Regression != (w[3] > 0) {
			t.Errorf("%s: %+v, want %v", m, d, w)
		}
	}
	if got.OnlyA != 1 || !got.Failed() || got.MissingB[0] != "c-missing/x/a/1" {
		t.Errorf("missing from B: %+v", got)
	}
	opts := gate("a")
	opts.SharedOnly = true
	opts.MinDelta = 0.95 // no figure moves that far
	if shared := c.Compare(opts); shared.Failed() {
		t.Errorf("shared only, nothing past min-delta: failed, %+v", shared.Regressions)
	}
	tb := report.DeltaTable(got)
	if len(tb.Data.Rows) != 7 || len(tb.Rows) != 7 || tb.Rows[0][0] != "X" || tb.Rows[1][0] != "" || tb.Rows[1][9] != "REGRESSION" {
		t.Errorf("table rows %q", tb.Rows)
	}
}

// scaled is run at a scale ("" at 1x), its id naming it as a run of a
// directory of several scales does (rundir.RunIDAt).
func scaled(r *rundir.Record, scale string) *rundir.Record {
	r.Scale = scale
	r.RunID = rundir.RunIDAt(r.Case, r.Config, r.Actor, r.Round, scale)
	return r
}

// TestComparePairsByScale: when a side holds runs at several scales, a
// run pairs only with the run at its own scale (the 1MB run that leaks
// in B pairs with A's 1MB run, not its 1x one; a scale B lacks is
// missing from B); when each side is at one scale (1x against 10MB),
// the scale is left out of the key and the runs pair as they did.
func TestComparePairsByScale(t *testing.T) {
	c := report.NewComparer(xConfig, []string{"a"})
	c.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, false), ""))
	c.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, true), "1MB"))
	c.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, false), "10MB"))
	c.AddRepeat(report.SideB, 0, scaled(run("c", "a", true, false), ""))
	c.AddRepeat(report.SideB, 0, scaled(run("c", "a", true, true), "1MB"))
	cmp := c.Compare(gate("a"))
	if !cmp.ByScale || cmp.Paired != 2 || cmp.OnlyA != 1 || cmp.OnlyB != 0 || len(cmp.MissingB) != 1 || cmp.MissingB[0] != "c/x/a/1@10MB" {
		t.Fatalf("by scale %t, paired %d, only A %d, only B %d, missing %q; want true, 2, 1, 0, [c/x/a/1@10MB]", cmp.ByScale, cmp.Paired, cmp.OnlyA, cmp.OnlyB, cmp.MissingB)
	}
	if d := delta(t, cmp, "a", "leak_rate"); d.Worse != 0 || d.Better != 0 || d.Pairs != 2 {
		t.Errorf("leak rate: %d worse, %d better over %d pairs; want 0, 0, 2 (each scale pairs with its own)", d.Worse, d.Better, d.Pairs)
	}

	one := report.NewComparer(xConfig, []string{"a"})
	one.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, false), ""))
	one.AddRepeat(report.SideB, 0, scaled(run("c", "a", true, true), "10MB"))
	cmp = one.Compare(gate("a"))
	if cmp.ByScale || cmp.Paired != 1 || cmp.OnlyA != 0 {
		t.Fatalf("one scale a side: by scale %t, paired %d, only A %d; want false, 1, 0", cmp.ByScale, cmp.Paired, cmp.OnlyA)
	}
	if d := delta(t, cmp, "a", "leak_rate"); d.Worse != 1 {
		t.Errorf("1x against 10MB: %d worse; want 1", d.Worse)
	}
}

// TestComparisonNamesWhatPairs: the deltas table's title names the
// scale and the attack among what runs pair on when they are part of the
// key (a side holds several), and ByAttack says the latter; a comparison
// at one scale and under no attack says (case, round) as before.
func TestComparisonNamesWhatPairs(t *testing.T) {
	attacked := func(r *rundir.Record, attack string) *rundir.Record { r.AttackName = attack; return r }
	c := report.NewComparer(xConfig, []string{"a"})
	for side := range 2 {
		c.AddRepeat(side, 0, attacked(run("c", "a", true, false), ""))
		c.AddRepeat(side, 0, attacked(run("c", "a", true, false), "ignore_previous"))
	}
	cmp := c.Compare(gate("a"))
	if !cmp.ByAttack || cmp.ByScale {
		t.Errorf("by attack %t, by scale %t; want true, false", cmp.ByAttack, cmp.ByScale)
	}
	if title := report.DeltaTable(cmp).Title; !strings.Contains(title, "paired on (case, round, attack)") {
		t.Errorf("title %q", title)
	}
	b, _ := json.Marshal(cmp)
	if !strings.Contains(string(b), `"by_attack":true`) {
		t.Errorf("no by_attack in %s", b)
	}

	one := report.NewComparer(xConfig, []string{"a"})
	one.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, false), ""))
	one.AddRepeat(report.SideA, 0, scaled(run("c", "a", true, false), "1MB"))
	one.AddRepeat(report.SideB, 0, scaled(run("c", "a", true, false), ""))
	cmp = one.Compare(gate("a"))
	if title := report.DeltaTable(cmp).Title; !strings.Contains(title, "paired on (case, round, scale)") {
		t.Errorf("by scale: title %q", title)
	}
	plain := report.NewComparer(xConfig, []string{"a"})
	plain.AddRepeat(report.SideA, 0, run("c", "a", true, false))
	plain.AddRepeat(report.SideB, 0, run("c", "a", true, false))
	if title := report.DeltaTable(plain.Compare(gate("a"))).Title; !strings.Contains(title, "paired on (case, round):") {
		t.Errorf("plain: title %q", title)
	}
}
