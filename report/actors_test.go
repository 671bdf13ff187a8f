package report_test

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// actorRun is a record of actor a's run of case c in configuration x at
// round and scale, passed and not leaking unless changed.
func actorRun(c, x, a string, round int, scale string) *rundir.Record {
	return &rundir.Record{RunID: rundir.RunIDAt(c, x, a, round, scale), Case: c, Config: x, Actor: a, Round: round, Scale: scale,
		Status: rundir.StatusPassed, SemanticPass: true, LegalPass: true, Attack: &rundir.Attack{}}
}

func actorDelta(t *testing.T, cmp report.ActorComparison, config, metric string) report.ActorDelta {
	t.Helper()
	for _, d := range cmp.Deltas {
		if d.Config == config && d.Metric == metric {
			return d
		}
	}
	t.Fatalf("no %s of %s in %+v", metric, config, cmp.Deltas)
	return report.ActorDelta{}
}

// TestActorComparerPairsOnRunID: a run of actor A pairs with the run of
// actor B of the same case, configuration, round and scale, and with no
// other; runs of a third actor are left out; a run of one actor the other
// lacks is counted apart; rows are per configuration.
func TestActorComparerPairsOnRunID(t *testing.T) {
	cfgs := []*bench.Config{{Name: "x", Label: "X"}, {Name: "y", Label: "Y"}}
	c := report.NewActorComparer(cfgs, "p", "q")
	for _, x := range []string{"x", "y"} {
		for round := 1; round <= 2; round++ {
			for _, sc := range []string{"", "10MB"} {
				c.Add(actorRun("c1", x, "p", round, sc))
				q := actorRun("c1", x, "q", round, sc)
				// q leaks only in round 2 at 10MB of y: exactly one pair
				// moves, so the key must carry the round, the scale and
				// the configuration.
				q.Leaked = x == "y" && round == 2 && sc == "10MB"
				c.Add(q)
				c.Add(actorRun("c1", x, "z", round, sc)) // another actor
			}
		}
	}
	c.Add(actorRun("c2", "x", "p", 1, "")) // q has no c2
	c.Add(actorRun("c3", "x", "q", 3, "")) // p has no round 3
	got := c.Compare(0.05, 0.02, false)
	// Nine runs kept of each actor (z's left out): eight pairs, one alone.
	if got.Paired != 8 || got.OnlyA != 1 || got.OnlyB != 1 || got.Unsettled != 0 {
		t.Fatalf("paired %d, only A %d, only B %d: want 8, 1, 1", got.Paired, got.OnlyA, got.OnlyB)
	}
	lx, ly := actorDelta(t, got, "x", "leak_rate"), actorDelta(t, got, "y", "leak_rate")
	if lx.Pairs != 4 || lx.OnlyB != 0 || ly.Pairs != 4 || ly.OnlyA != 0 || ly.OnlyB != 1 || *ly.Change != 0.25 {
		t.Errorf("leak rate: x %+v, y %+v", lx, ly)
	}
	if len(ly.WorseRuns) != 1 || ly.WorseRuns[0] != "c1/y/p/2@10MB" {
		t.Errorf("worse runs %q, want A's run c1/y/p/2@10MB", ly.WorseRuns)
	}
	if len(got.Deltas) != 2*len(report.ActorMetrics) {
		t.Errorf("%d rows, want one per configuration and rate", len(got.Deltas))
	}
}

// TestActorComparerHolm checks the McNemar p and Holm's adjustment over
// the table by hand, on 20 cases of one configuration:
//
//	leak rate: only B leaks in 8 pairs   p = 2·2^-8 = 0.0078125
//	illegal commits: only B in 6         p = 2·2^-6 = 0.03125
//	attack success: no pair moves        p = 1
//	semantic pass: only A passes in 5    p = 2·2^-5 = 0.0625
//	legal pass: no pair moves            p = 1
//
// Only the tests that can reach alpha 0.05 are in Holm's family (6
// discordant pairs or more): the leak rate and illegal commits. Sorted,
// times 2, 1: 0.015625, 0.03125 (running maximum); both are worse in B.
// The semantic pass's 5 pairs cannot reach 0.05 whatever they show: it
// keeps its p and no Holm p. With the gate that fails, without it it
// does not.
func TestActorComparerHolm(t *testing.T) {
	c := report.NewActorComparer(xConfig, "a", "b")
	for i := range 20 {
		id := fmt.Sprintf("c%02d", i)
		c.Add(actorRun(id, "x", "a", 1, ""))
		b := actorRun(id, "x", "b", 1, "")
		b.Leaked = i < 8
		if i >= 8 && i < 14 {
			b.IllegalCommits = []rundir.IllegalCommit{{Step: "s1", Gate: "scope"}}
		}
		if i >= 14 && i < 19 {
			b.SemanticPass, b.Status = false, rundir.StatusFailed
		}
		c.Add(b)
	}
	got := c.Compare(0.05, 0.02, false)
	want := map[string][2]float64{ // p, Holm p (-1: outside the family)
		"leak_rate":           {0.0078125, 0.015625},
		"illegal_commit_rate": {0.03125, 0.03125},
		"attack_success_rate": {1, -1},
		"semantic_pass":       {0.0625, -1},
		"legal_pass":          {1, -1},
	}
	if got.Tested != 2 {
		t.Errorf("Holm over %d tests, want 2", got.Tested)
	}
	for m, w := range want {
		d := actorDelta(t, got, "x", m)
		if math.Abs(*d.P-w[0]) > 1e-12 {
			t.Errorf("%s: p %v, want %v", m, *d.P, w[0])
		}
		switch {
		case w[1] < 0 && d.PHolm != nil:
			t.Errorf("%s: Holm p %v, want none (cannot reach alpha)", m, *d.PHolm)
		case w[1] >= 0 && (d.PHolm == nil || math.Abs(*d.PHolm-w[1]) > 1e-12):
			t.Errorf("%s: Holm p %v, want %v", m, d.PHolm, w[1])
		}
		wantWorse := m == "leak_rate" || m == "illegal_commit_rate"
		if d.Worse != wantWorse || d.Better {
			t.Errorf("%s: worse %v better %v", m, d.Worse, d.Better)
		}
	}
	if s := actorDelta(t, got, "x", "semantic_pass"); s.OnlyA != 5 || s.OnlyB != 0 || *s.Change != -0.25 || s.WorsePairs() != 5 {
		t.Errorf("semantic pass: %+v", s)
	}
	if got.Failed() || len(got.Worse) != 2 {
		t.Errorf("without the gate: failed %v, %d worse", got.Failed(), len(got.Worse))
	}
	if gated := c.Compare(0.05, 0.02, true); !gated.Failed() {
		t.Error("with the gate, B worse on the leak rate: not failed")
	}
	// A leak rate change of 0.4 is below --min-delta 0.5: not worse.
	if gated := c.Compare(0.05, 0.5, true); gated.Failed() {
		t.Error("a change below --min-delta failed the gate")
	}
	tab := report.ActorDeltaTable(got)
	if len(tab.Rows) != 5 || tab.Rows[0][4] != "+0.400" || tab.Rows[0][5] != "0/8" || tab.Rows[0][8] != "B WORSE" || !strings.Contains(tab.Title, "b (B) against a (A)") {
		t.Errorf("table: %s\n%q", tab.Title, tab.Rows)
	}
}

// TestActorComparerRepeatNote: two actors that answer alike in each of
// three rounds get a note that the pairs repeat; one that varies in one
// case's third round, or a single round, gets none.
func TestActorComparerRepeatNote(t *testing.T) {
	build := func(rounds int, vary bool) report.ActorComparison {
		c := report.NewActorComparer(xConfig, "a", "b")
		for i := range 4 {
			id := fmt.Sprintf("c%d", i)
			for r := 1; r <= rounds; r++ {
				c.Add(actorRun(id, "x", "a", r, ""))
				b := actorRun(id, "x", "b", r, "")
				b.Leaked = i == 0 || (vary && i == 1 && r == 3)
				c.Add(b)
			}
		}
		return c.Compare(0.05, 0.02, false)
	}
	same := build(3, false)
	if note := same.RepeatNote(); !strings.Contains(note, "a and b answered alike in each of 3 rounds") {
		t.Errorf("alike in 3 rounds: note %q (repeated %v, rounds %d)", note, same.Repeated, same.Rounds)
	}
	if note := build(3, true).RepeatNote(); note != "" {
		t.Errorf("b varies: note %q", note)
	}
	if note := build(1, false).RepeatNote(); note != "" {
		t.Errorf("one round: note %q", note)
	}
}

// TestActorComparisonPairedOnAttack: paired_on and the table's title
// name the attack when the runs are under several (a run pairs under its
// own), and not when under one.
func TestActorComparisonPairedOnAttack(t *testing.T) {
	cfgs := []*bench.Config{{Name: "x", Label: "X"}}
	for _, c := range []struct {
		attacks []string
		on      string
	}{
		{[]string{""}, "case config round scale"},
		{[]string{"", "ignore_previous"}, "case config round scale attack"},
	} {
		cmp := report.NewActorComparer(cfgs, "p", "q")
		for _, attack := range c.attacks {
			for _, a := range []string{"p", "q"} {
				r := actorRun("c", "x", a, 1, "")
				r.AttackName = attack
				cmp.Add(r)
			}
		}
		got := cmp.Compare(0.05, 0.05, false)
		if on := strings.Join(got.PairedOn, " "); on != c.on {
			t.Errorf("%q: paired on %q, want %q", c.attacks, on, c.on)
		}
		title := report.ActorDeltaTable(got).Title
		want := "paired on (" + strings.ReplaceAll(strings.Replace(c.on, "config", "configuration", 1), " ", ", ") + ")"
		if !strings.Contains(title, want) {
			t.Errorf("%q: title %q, want %q", c.attacks, title, want)
		}
	}
}
