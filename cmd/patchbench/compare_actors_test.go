package main

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// actorComparison is compare --actors' JSON, as far as the tests read it.
type actorComparison struct {
	ActorA    string `json:"actor_a"`
	ActorB    string `json:"actor_b"`
	Paired    int    `json:"paired"`
	OnlyA     int    `json:"only_a"`
	OnlyB     int    `json:"only_b"`
	HolmTests int    `json:"holm_tests"`
	Deltas    []struct {
		Config, Metric string
		Pairs          int
		Change         float64
		OnlyA          int      `json:"only_a"`
		OnlyB          int      `json:"only_b"`
		PHolm          *float64 `json:"p_holm"`
		Worse          bool     `json:"b_worse"`
	}
}

// twoPerDomain is a 12-case subset of the suite, two cases of each
// domain, for the tests that run the suite to check what a command does
// with the runs rather than the runs themselves.
const twoPerDomain = "fin-expense-review,fin-invoice-dispute,mkt-ab-test-readout,mkt-influencer-contract,med-bed-huddle,med-lab-result-routing," +
	"sci-dataset-release-deid,sci-hpc-allocation,sw-flag-rollout,sw-oncall-handover,sup-account-recovery,sup-kb-article"

func compareActorsJSON(t *testing.T, args ...string) actorComparison {
	t.Helper()
	var got actorComparison
	if err := json.Unmarshal([]byte(runOK(t, append(args, "--format", "json")...)), &got); err != nil {
		t.Fatal(err)
	}
	return got
}

// TestCompareActors: two actors of the suite (reference, oversharer) over
// two configurations and two rounds, run into one directory and into one
// directory each. A plain compare of the two directories pairs nothing
// (the actors' names differ: exit 2); compare --actors pairs each run of
// the reference with the oversharer's of the same case, configuration
// and round (12 cases, two of each domain: 12 × 2 × 2 = 48 pairs), the
// same from one directory or two: under Unconstrained the oversharer leaks
// in every pair (B − A = +1, 24 discordant pairs, Holm p < 0.05: B
// worse), under PatchOptic nothing moves. It is a comparison (exit 0)
// unless --gate, which exits 1 when B is worse and 0 the other way round.
func TestCompareActors(t *testing.T) {
	if testing.Short() {
		t.Skip("runs twelve cases three times")
	}
	tmp := t.TempDir()
	both, ref, over := filepath.Join(tmp, "both"), filepath.Join(tmp, "ref"), filepath.Join(tmp, "over")
	common := []string{"--config", "unconstrained,patchoptic", "--rounds", "2", "--case", twoPerDomain}
	runOK(t, append([]string{"run", "--actor", "reference", "--actor", "oversharer", "--out", both}, common...)...)
	runOK(t, append([]string{"run", "--actor", "reference", "--out", ref}, common...)...)
	runOK(t, append([]string{"run", "--actor", "oversharer", "--out", over}, common...)...)

	checkCLI(t, []cliCase{
		{name: "two actors' directories share no run by the actor's name", args: []string{"compare", ref, over}, exit: 2, stderr: []string{"share no run"}},
		{name: "--actors takes two", args: []string{"compare", "--actors", "reference", both}, exit: 2, stderr: []string{"--actors takes two actors"}},
		{name: "the same actor twice", args: []string{"compare", "--actors", "reference,reference", both}, exit: 2, stderr: []string{"names reference twice"}},
		{name: "an actor the directory lacks", args: []string{"compare", "--actors", "reference,follower", both}, exit: 2, stderr: []string{`no run of actor "follower"`, "actors: reference, oversharer"}},
		{name: "--gate without --actors", args: []string{"compare", "--gate", ref, over}, exit: 2, stderr: []string{"--gate goes with --actors"}},
		{name: "--exact is the gate of two directories", args: []string{"compare", "--actors", "reference,oversharer", "--exact", "", both}, exit: 2, stderr: []string{"--exact goes with a comparison of two directories"}},
		{name: "no directory", args: []string{"compare", "--actors", "reference,oversharer"}, exit: 2, stderr: []string{"give the run directory"}},
		{name: "a comparison exits 0", args: []string{"compare", "--actors", "reference,oversharer", both}},
		{name: "the gate: B worse", args: []string{"compare", "--actors", "reference,oversharer", both, "--gate"}, exit: 1},
		{name: "the gate: B better", args: []string{"compare", "--actors", "oversharer,reference", both, "--gate"}},
		{name: "the gate over two directories", args: []string{"compare", "--actors", "reference,oversharer", ref, over, "--gate"}, exit: 1},
	})

	one := compareActorsJSON(t, "compare", "--actors", "reference,oversharer", both)
	two := compareActorsJSON(t, "compare", "--actors", "reference,oversharer", ref, over)
	for _, got := range []actorComparison{one, two} {
		if got.ActorA != "reference" || got.ActorB != "oversharer" || got.Paired != 48 || got.OnlyA != 0 || got.OnlyB != 0 || got.HolmTests != 4 || len(got.Deltas) != 10 {
			t.Fatalf("%+v", got)
		}
		for _, d := range got.Deltas {
			switch {
			case d.Config == "unconstrained" && d.Metric == "leak_rate":
				if d.Pairs != 24 || d.Change != 1 || d.OnlyA != 0 || d.OnlyB != 24 || d.PHolm == nil || *d.PHolm > 0.05 || !d.Worse {
					t.Errorf("unconstrained leak rate: %+v", d)
				}
			case d.Config == "patchoptic":
				if d.Change != 0 || d.OnlyA+d.OnlyB != 0 || d.Worse {
					t.Errorf("patchoptic %s: %+v", d.Metric, d)
				}
			}
		}
	}

	// Text, Markdown and CSV say the same.
	text := runOK(t, "compare", "--actors", "reference,oversharer", both)
	for _, want := range []string{"oversharer (B) against reference (A)", "│ Unconstrained │ leak rate", "0/24", "B WORSE",
		"48 paired runs", "Holm over 4 tests", "a comparison: exit 0", "answered alike in each of 2 rounds"} {
		if !strings.Contains(text, want) {
			t.Errorf("text: no %q in:\n%s", want, text)
		}
	}
	md, _, code := runCLI(t, cliCase{args: []string{"compare", "--actors", "reference,oversharer", both, "--format", "markdown", "--gate"}})
	if code != 1 || !strings.Contains(md, "B worse on 4 rates: exit 1") {
		t.Errorf("markdown --gate: exit %d\n%s", code, md)
	}
	if !strings.Contains(md, "- B WORSE: Unconstrained: leak rate 0.000 → 1.000 (+1.000; only A 0, only B 24") || !strings.Contains(md, "| Unconstrained | leak rate") {
		t.Errorf("markdown:\n%s", md)
	}
	rows, err := csv.NewReader(strings.NewReader(runOK(t, "compare", "--actors", "reference,oversharer", both, "--format", "csv"))).ReadAll()
	if err != nil || len(rows) != 11 || strings.Join(rows[0], ",") != "config,label,metric,pairs,a,b,change,only_a,only_b,p,p_holm,verdict" || rows[1][11] != "b_worse" {
		t.Errorf("csv %v: %q", err, rows)
	}
}

// TestReportReliabilityNoModel: the reliability table of a real run of
// the no-model actors over three rounds (twelve cases). They answer alike in every
// round, so pass^k and pass@k equal the rate (pass^1) at every k, and k
// runs to 3; the table is selected by --table reliability, and is in the
// JSON report. The plots include pass^k against k per actor.
func TestReportReliabilityNoModel(t *testing.T) {
	out := filepath.Join(t.TempDir(), "r3")
	runOK(t, "run", "--config", "patchoptic", "--rounds", "3", "--case", twoPerDomain, "--out", out)
	rows, err := csv.NewReader(strings.NewReader(runOK(t, "report", out, "--table", "reliability", "--format", "csv"))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, c := range rows[0] {
		col[c] = i
	}
	if len(rows) != 1+3*3 {
		t.Fatalf("%d rows, want 3 actors × k = 1..3:\n%q", len(rows)-1, rows)
	}
	first := map[string][]string{}
	for _, r := range rows[1:] {
		k, _ := strconv.Atoi(r[col["k"]])
		figures := r[col["semantic_pass_hat_k"]:]
		if k == 1 {
			first[r[col["actor"]]] = figures
			if figures[0] != figures[1] {
				t.Errorf("%s: pass^1 %s and pass@1 %s differ", r[col["actor"]], figures[0], figures[1])
			}
		} else if strings.Join(figures, ",") != strings.Join(first[r[col["actor"]]], ",") {
			t.Errorf("%s k=%d: %q, want pass^1's %q (a deterministic actor)", r[col["actor"]], k, figures, first[r[col["actor"]]])
		}
		if r[col["cases"]] != "12" || r[col["rounds"]] != "3" {
			t.Errorf("%q: want 12 cases of 3 rounds", r)
		}
	}
	if first["reference"][0] != "1" || first["follower"][0] == "1" {
		t.Errorf("semantic pass^1: reference %s, follower %s", first["reference"][0], first["follower"][0])
	}
	var rep struct {
		Reliability []struct {
			Actor string
			K     int
		}
	}
	if err := json.Unmarshal([]byte(runOK(t, "report", out, "--format", "json")), &rep); err != nil || len(rep.Reliability) != 9 {
		t.Errorf("json reliability: %v, %+v", err, rep.Reliability)
	}
	plots := t.TempDir()
	runOK(t, "report", out, "--plots", plots, "--plot-format", "svg", "--table", "main")
	for _, a := range []string{"reference", "oversharer", "follower"} {
		if _, err := os.Stat(filepath.Join(plots, "reliability-"+a+".svg")); err != nil {
			t.Error(err)
		}
	}
}
