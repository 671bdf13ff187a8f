package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

// manifestCases reads the case ids and the subset settings a run
// directory's manifest records.
func manifestCases(t *testing.T, dir string) (ids []string, limit, sample int, seed int64) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		CaseIDs    []string `json:"case_ids"`
		Limit      int      `json:"limit"`
		Sample     int      `json:"sample"`
		SampleSeed int64    `json:"sample_seed"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m.CaseIDs, m.Limit, m.Sample, m.SampleSeed
}

// TestRunLimit: --limit N runs the first N cases in the suite's order,
// the manifest records N, and a resume with another N is refused.
func TestRunLimit(t *testing.T) {
	out := t.TempDir()
	args := []string{"run", "--actor", "reference", "--config", "patchoptic", "--out", out}
	checkCLI(t, []cliCase{
		{name: "first three", args: append(slices.Clone(args), "--limit", "3"), stderr: []string{"(3 runs)"}},
		{name: "resume with another limit", args: append(slices.Clone(args), "--limit", "4"), exit: 2, stderr: []string{"holds a run with other settings"}},
		{name: "over the selection", args: []string{"run", "--domain", "finance", "--limit", "9"}, exit: 2, stderr: []string{"--limit: 9 cases asked for, but only 8 are selected"}},
		{name: "negative", args: []string{"run", "--limit", "-1"}, exit: 2, stderr: []string{"--limit must be at least 1 (or 0: every case), not -1"}},
		{name: "both", args: []string{"run", "--limit", "2", "--sample", "2"}, exit: 2, stderr: []string{"--sample and --limit both choose"}},
	})
	plan := writePlan(t, "version: 1\nactors: [reference]\nconfigs:\n  names: [patchoptic]\ncases:\n  sample: 2\n  sample_seed: 3\n")
	fromPlan := t.TempDir()
	checkCLI(t, []cliCase{{name: "a plan's cases.sample", args: []string{"run", "--plan", plan, "--out", fromPlan}, stderr: []string{"(2 runs)"}}})
	if _, _, sample, seed := manifestCases(t, fromPlan); sample != 2 || seed != 3 {
		t.Errorf("the plan's run records sample %d sample_seed %d, want 2 and 3", sample, seed)
	}
	ids, limit, _, _ := manifestCases(t, out)
	if want := []string{"fin-expense-review", "fin-fraud-alert-triage", "fin-invoice-dispute"}; !slices.Equal(ids, want) || limit != 3 {
		t.Errorf("case_ids %v limit %d, want %v and 3", ids, limit, want)
	}
}

// TestRunSample: --sample N draws N cases stratified by domain, the same
// for the same seed and others for another, recorded in the manifest.
func TestRunSample(t *testing.T) {
	base := []string{"run", "--actor", "reference", "--config", "patchoptic"}
	a, b, c := t.TempDir(), t.TempDir(), t.TempDir()
	checkCLI(t, []cliCase{
		{name: "six of seed 3", args: append(slices.Clone(base), "--sample", "6", "--sample-seed", "3", "--out", a), stderr: []string{"(6 runs)", "--sample 6 (--sample-seed 3) drew "}},
		{name: "six of seed 3 again", args: append(slices.Clone(base), "--sample", "6", "--sample-seed", "3", "--out", b), stderr: []string{"(6 runs)"}},
		{name: "six of seed 4", args: append(slices.Clone(base), "--sample", "6", "--sample-seed", "4", "--out", c), stderr: []string{"(6 runs)"}},
		{name: "resume with another seed", args: append(slices.Clone(base), "--sample", "6", "--sample-seed", "5", "--out", a), exit: 2, stderr: []string{"holds a run with other settings"}},
		{name: "zero seed", args: []string{"run", "--sample", "2", "--sample-seed", "0"}, exit: 2, stderr: []string{"--sample-seed must be at least 1"}},
		{name: "over the selection", args: []string{"run", "--domain", "finance,medical", "--sample", "17"}, exit: 2, stderr: []string{"--sample: 17 cases asked for, but only 16 are selected"}},
	})
	idsA, _, sample, seed := manifestCases(t, a)
	idsB, _, _, _ := manifestCases(t, b)
	idsC, _, _, _ := manifestCases(t, c)
	if sample != 6 || seed != 3 {
		t.Errorf("manifest sample %d sample_seed %d, want 6 and 3", sample, seed)
	}
	if !slices.Equal(idsA, idsB) {
		t.Errorf("the same seed drew %v, then %v", idsA, idsB)
	}
	if slices.Equal(idsA, idsC) {
		t.Errorf("seeds 3 and 4 drew the same cases %v", idsA)
	}
	cases, err := loadAllCases("")
	if err != nil {
		t.Fatal(err)
	}
	domainOf := map[string]string{}
	for _, c := range cases {
		domainOf[c.ID] = c.Domain
	}
	per := map[string]int{}
	for _, id := range idsA {
		per[domainOf[id]]++
	}
	for _, d := range bench.DomainsOf(cases) {
		if per[d] != 1 {
			t.Errorf("six of the six domains' cases: %d of %s, want 1 (%v)", per[d], d, idsA)
		}
	}
}

// TestSampleCasesStratified: sampleCases allots n to the domains by
// their case counts with the largest remainder, keeps the suite's order,
// and draws each domain's cases whatever the other domains hold.
func TestSampleCasesStratified(t *testing.T) {
	var cases []*bench.Case
	add := func(domain string, n int) {
		for i := range n {
			cases = append(cases, &bench.Case{ID: fmt.Sprintf("%s-%02d", domain, i), Domain: domain})
		}
	}
	add("a", 6) // 6/10 of 5 = 3
	add("b", 3) // 1.5: the remainder 0.5 wins over c's
	add("c", 1) // 0.5: a tie with b, which sorts first
	count := func(got []*bench.Case) map[string]int {
		m := map[string]int{}
		for _, c := range got {
			m[c.Domain]++
		}
		return m
	}
	got := sampleCases(cases, 5, 1)
	if m := count(got); m["a"] != 3 || m["b"] != 2 || m["c"] != 0 {
		t.Errorf("5 of 6+3+1: %v, want a 3, b 2, c 0", m)
	}
	if !slices.IsSortedFunc(got, func(x, y *bench.Case) int { return cmpString(x.ID, y.ID) }) {
		t.Errorf("not in the suite's order: %v", got)
	}
	if m := count(sampleCases(cases, 10, 1)); m["a"] != 6 || m["b"] != 3 || m["c"] != 1 {
		t.Errorf("all 10: %v", m)
	}
	// A domain's draw is the same without the other domains.
	onlyA := sampleCases(cases[:6], 3, 1)
	var fromAll []*bench.Case
	for _, c := range got {
		if c.Domain == "a" {
			fromAll = append(fromAll, c)
		}
	}
	if !slices.Equal(onlyA, fromAll) {
		t.Errorf("domain a drew %v alone and %v with the others", onlyA, fromAll)
	}
}

func cmpString(a, b string) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// TestSampleSeedWithoutSample: --sample-seed without --sample, or a plan
// with cases.sample_seed and no cases.sample, is refused naming the flag
// or the plan key, as the seed would be recorded though it draws nothing.
func TestSampleSeedWithoutSample(t *testing.T) {
	seedOnly := writePlan(t, "version: 1\nactors: [reference]\nconfigs:\n  names: [patchoptic]\ncases:\n  sample_seed: 4\n")
	checkCLI(t, []cliCase{
		{name: "flag", args: []string{"run", "--actor", "reference", "--sample-seed", "4", "--out", t.TempDir()}, exit: 2,
			stderr: []string{"--sample-seed goes with --sample"}},
		{name: "plan run", args: []string{"run", "--plan", seedOnly, "--out", t.TempDir()}, exit: 2,
			stderr: []string{seedOnly + ":6: cases.sample_seed: goes with cases.sample"}},
		{name: "plan check", args: []string{"plan", seedOnly}, exit: 2,
			stderr: []string{"cases.sample_seed: goes with cases.sample"}},
		{name: "plan and the flag", args: []string{"run", "--plan", seedOnly, "--sample", "2", "--out", t.TempDir()}, stderr: []string{"(2 runs)"}},
	})
}

// TestSubsetRefusalNames: a refusal of --sample with --limit names both
// flags on the command line and both plan keys in a plan; the note of
// the cases drawn names the command that drew them and, for a plan, its
// keys.
func TestSubsetRefusalNames(t *testing.T) {
	both := writePlan(t, "version: 1\nactors: [reference]\nconfigs:\n  names: [patchoptic]\ncases:\n  sample: 3\n  limit: 2\n")
	sample := writePlan(t, "version: 1\nactors: [reference]\nconfigs:\n  names: [patchoptic]\ncases:\n  sample: 3\n")
	checkCLI(t, []cliCase{
		{name: "flags", args: []string{"run", "--limit", "2", "--sample", "2"}, exit: 2, stderr: []string{"--sample and --limit both choose"}},
		{name: "plan keys", args: []string{"run", "--plan", both, "--out", t.TempDir()}, exit: 2,
			stderr: []string{"cases.sample: and cases.limit both choose"}},
		{name: "plan keys, plan", args: []string{"plan", both}, exit: 2, stderr: []string{"cases.sample: and cases.limit both choose"}},
		{name: "plan's sample and --limit", args: []string{"run", "--plan", sample, "--limit", "2", "--out", t.TempDir()}, exit: 2,
			stderr: []string{"cases.sample: and --limit both choose"}},
		{name: "plan draws", args: []string{"plan", sample}, stderr: []string{"patchbench plan: cases.sample 3 (cases.sample_seed 1) draws "}},
	})
}
