package report_test

import (
	"math"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// TestReliabilityOverRounds: pass^k and pass@k per case, averaged over
// cases, by hand. Actor s, 3 rounds: case c1 passes in rounds 1 and 2
// (n = 3, c = 2: pass^1 2/3, pass^2 1/3, pass^3 0; pass@2 = pass@3 = 1),
// c2 in all three (1 at every k): averaged, pass^1 5/6, pass^2 2/3,
// pass^3 1/2, pass@1 5/6, pass@2 1. c1 leaks in round 3 only, so no-leak
// is as the semantic pass. Actor d answers alike in each round (passes c1,
// fails c2): pass^k = pass@k = pass^1 = 1/2 at every k.
func TestReliabilityOverRounds(t *testing.T) {
	b := report.NewBuilder(xConfig, []string{"s", "d"}, "")
	for round := 1; round <= 3; round++ {
		r1 := actorRun("c1", "x", "s", round, "")
		if round == 3 {
			r1.SemanticPass, r1.LegalPass, r1.Leaked, r1.Status = false, false, true, rundir.StatusFailed
		}
		b.Add(r1)
		b.Add(actorRun("c2", "x", "s", round, ""))
		b.Add(actorRun("c1", "x", "d", round, ""))
		d2 := actorRun("c2", "x", "d", round, "")
		d2.SemanticPass, d2.LegalPass, d2.Leaked, d2.Status = false, false, true, rundir.StatusFailed
		b.Add(d2)
	}
	rep := b.Report()
	want := map[string][][2]float64{ // actor → per k: pass^k, pass@k
		"s": {{5.0 / 6, 5.0 / 6}, {2.0 / 3, 1}, {0.5, 1}},
		"d": {{0.5, 0.5}, {0.5, 0.5}, {0.5, 0.5}},
	}
	if len(rep.Reliability) != 6 {
		t.Fatalf("%d reliability rows, want 3 per actor: %+v", len(rep.Reliability), rep.Reliability)
	}
	for _, r := range rep.Reliability {
		w := want[r.Actor][r.K-1]
		for _, got := range [][2]float64{{r.SemanticHatK, r.SemanticAtK}, {r.LegalHatK, r.LegalAtK}, {r.NoLeakHatK, r.NoLeakAtK}} {
			if math.Abs(got[0]-w[0]) > 1e-9 || math.Abs(got[1]-w[1]) > 1e-9 {
				t.Errorf("%s k=%d: %v, want %v (%+v)", r.Actor, r.K, got, w, r)
			}
		}
		if r.Cases != 2 || r.Rounds != 3 {
			t.Errorf("%+v: want 2 cases of 3 rounds", r)
		}
	}
	var tab report.Table
	for _, t := range rep.Tables {
		if t.Name == "reliability" {
			tab = t
		}
	}
	if len(tab.Rows) != 6 || tab.Rows[1][4] != "0.667" || tab.Rows[1][5] != "1.000" || strings.Contains(tab.Title, "k = 1 only") {
		t.Errorf("reliability table: %s\n%q", tab.Title, tab.Rows)
	}
}

// TestReliabilityOneRound: a single round gives k = 1 only, and the
// table says so; a case with fewer rounds than k is left out at that k.
func TestReliabilityOneRound(t *testing.T) {
	b := report.NewBuilder(xConfig, []string{"s"}, "")
	b.Add(actorRun("c1", "x", "s", 1, ""))
	rep := b.Report()
	if len(rep.Reliability) != 1 || rep.Reliability[0].K != 1 || rep.Reliability[0].SemanticHatK != 1 {
		t.Fatalf("one round: %+v", rep.Reliability)
	}
	if tab := rep.Tables[len(rep.Tables)-1]; tab.Name != "reliability" || !strings.Contains(tab.Title, "k = 1 only") {
		t.Errorf("last table %s: %s", tab.Name, tab.Title)
	}
	// c1 has 2 rounds, c2 one: k = 2 counts c1 only.
	b.Add(actorRun("c1", "x", "s", 2, ""))
	r2 := actorRun("c2", "x", "s", 1, "")
	r2.SemanticPass = false
	b.Add(r2)
	rel := b.Report().Reliability
	if len(rel) != 2 || rel[0].Cases != 2 || rel[0].SemanticHatK != 0.5 || rel[1].Cases != 1 || rel[1].SemanticHatK != 1 {
		t.Errorf("uneven rounds: %+v", rel)
	}
}

// TestReliabilityPlots: one chart per actor, named after it with the
// characters a file name cannot hold replaced.
func TestReliabilityPlots(t *testing.T) {
	b := report.NewBuilder(xConfig, []string{"openai:gpt/5"}, "")
	for round := 1; round <= 2; round++ {
		b.Add(actorRun("c1", "x", "openai:gpt/5", round, ""))
	}
	dir := t.TempDir()
	files, err := report.WriteReliabilityPlots(dir, b.Report().Reliability, xConfig, []string{"openai:gpt/5"}, report.PlotOptions{Format: "svg"})
	if err != nil || len(files) != 1 || !strings.HasSuffix(files[0], "/reliability-openai-gpt-5.svg") {
		t.Fatalf("%q, %v", files, err)
	}
}
