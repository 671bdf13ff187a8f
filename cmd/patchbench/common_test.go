package main

import (
	"encoding/json"
	"testing"
)

// TestCommonCases: report, report --format html (the browser's pages),
// compare --actors and compare over directories of different case sets
// refuse them without --common and, with it, read the runs of the cases
// all of them hold, saying on stderr what was left out.
func TestCommonCases(t *testing.T) {
	if testing.Short() {
		t.Skip("runs four directories")
	}
	a, b, c, d := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	checkCLI(t, []cliCase{
		{name: "eight cases", args: []string{"run", "--actor", "reference", "--config", "patchoptic,unconstrained", "--domain", "finance", "--out", a}, stderr: []string{"(16 runs)"}},
		{name: "five of them", args: []string{"run", "--actor", "oversharer", "--config", "patchoptic,unconstrained", "--domain", "finance", "--limit", "5", "--out", b}, stderr: []string{"(10 runs)"}},
		{name: "three of them", args: []string{"run", "--actor", "reference", "--config", "patchoptic,unconstrained", "--domain", "finance", "--limit", "3", "--out", d}, stderr: []string{"(6 runs)"}},
		{name: "another domain", args: []string{"run", "--actor", "oversharer", "--config", "patchoptic", "--domain", "medical", "--limit", "2", "--out", c}, stderr: []string{"(2 runs)"}},
	})
	left := "--common: " + a + ": 3 cases left out (fin-payroll-adjustment, fin-portfolio-rebalance, fin-quarter-close-recon), 6 runs"
	checkCLI(t, []cliCase{
		{name: "report refuses", args: []string{"report", a, b}, exit: 2, stderr: []string{"cannot be read as one comparison: case_digest, case_ids differ", "; --common reads the cases all of them hold"}},
		{name: "report --common", args: []string{"report", "--common", "--format", "json", a, b}, stderr: []string{"patchbench report: " + left}},
		{name: "report html --common", args: []string{"report", "--common", "--format", "html", a, b}, stderr: []string{"patchbench report: " + left}},
		{name: "report html refuses", args: []string{"report", "--format", "html", a, b}, exit: 2, stderr: []string{"cannot be read as one comparison", "--common reads"}},
		{name: "compare --actors refuses", args: []string{"compare", "--actors", "reference,oversharer", a, b}, exit: 2, stderr: []string{"cannot be read as one comparison", "--common reads"}},
		{name: "compare --actors --common", args: []string{"compare", "--actors", "reference,oversharer", "--common", a, b}, stderr: []string{"patchbench compare: " + left}},
		{name: "compare refuses", args: []string{"compare", a, d}, exit: 2, stderr: []string{"do not measure the same thing", "cases only in the first"}},
		{name: "compare --common", args: []string{"compare", "--common", a, d},
			stderr: []string{"patchbench compare: --common: " + a + ": 5 cases left out (fin-loan-underwriting, fin-payment-run-approval, fin-payroll-adjustment, fin-portfolio-rebalance, fin-quarter-close-recon), 10 runs"}},
		{name: "no case shared", args: []string{"report", "--common", a, c}, exit: 2, stderr: []string{"no case is in every directory"}},
	})
	stdout, _, code := runCLI(t, cliCase{args: []string{"report", "--common", "--format", "json", a, b}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	// Five cases × two configurations of each actor, all of them
	// expected: the left-out runs are neither counted nor pending.
	var rep struct {
		Summary struct {
			Recorded int  `json:"runs_recorded"`
			Expected int  `json:"runs_expected"`
			Complete bool `json:"complete"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if s := rep.Summary; s.Recorded != 20 || s.Expected != 20 || !s.Complete {
		t.Errorf("report --common: %d runs recorded, %d expected, complete %v; want 20, 20, true", s.Recorded, s.Expected, s.Complete)
	}
}
