package main

import (
	"encoding/json"
	"strings"
	"testing"
)

const exampleCases = "../../bench/testdata/example"

func TestValidateCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "example", args: []string{"validate", exampleCases}, golden: "validate-example"},
		{name: "broken", args: []string{"validate", "testdata/cases-broken"}, exit: 1, golden: "validate-broken"},
		{name: "flags after the directory", args: []string{"validate", exampleCases, "--configs", "../../bench/configs"}, golden: "validate-example"},
		{name: "missing directory", args: []string{"validate", "testdata/no-such-dir"}, exit: 2, stderr: []string{"no-such-dir"}},
		{name: "empty directory", args: []string{"validate", "testdata/golden"}, exit: 2, stderr: []string{"no case files"}},
		{name: "two directories", args: []string{"validate", "a", "b"}, exit: 2, stderr: []string{`unexpected argument "b"`}},
		{name: "bad configs", args: []string{"validate", exampleCases, "--configs", "testdata"}, exit: 2, stderr: []string{"testdata/"}},
		{name: "help", args: []string{"validate", "-h"}, golden: "validate-help"},
	})
}

func TestValidateEmbeddedSuite(t *testing.T) {
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"validate"}})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	if !strings.HasPrefix(stdout, "ok: 46 cases (finance 8, marketing 7, medical 8, science 7, software 8, support 8)") {
		t.Errorf("summary: %s", stdout)
	}
}

func TestCasesCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "example", args: []string{"cases", "--cases", exampleCases}, golden: "cases-example"},
		{name: "example json", args: []string{"cases", "--cases", exampleCases, "--format", "json"}, golden: "cases-example-json"},
		{name: "other domain", args: []string{"cases", "--cases", exampleCases, "--domain", "finance"}, golden: "cases-none"},
		{name: "unknown domain", args: []string{"cases", "--domain", "retail"}, exit: 2, stderr: []string{`unknown domain "retail"`}},
		{name: "bad format", args: []string{"cases", "--format", "xml"}, exit: 2, stderr: []string{"--format must be text or json"}},
		{name: "broken set", args: []string{"cases", "--cases", "testdata/cases-broken"}, exit: 2, stderr: []string{"sup-bad-yaml.yaml:2"}},
	})
	stdout, _, code := runCLI(t, cliCase{args: []string{"cases", "--format", "json"}})
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	var got struct {
		Cases []caseRow `json:"cases"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	if len(got.Cases) != 46 {
		t.Errorf("%d cases listed, want 46", len(got.Cases))
	}
}

func TestFootprintCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "example", args: []string{"footprint", "--cases", exampleCases}, golden: "footprint-example"},
		{name: "example json", args: []string{"footprint", "--cases", exampleCases, "--format", "json", "--case", "sup-example-refund"}, golden: "footprint-example-json"},
		{name: "unknown case", args: []string{"footprint", "--case", "nope"}, exit: 2, stderr: []string{`no case "nope"`}},
	})
	// The embedded suite: every certified pair commutes in both orders.
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"footprint", "--check", "--format", "json"}})
	if code != 0 {
		t.Fatalf("footprint --check: exit %d\n%s", code, stderr)
	}
	var got struct {
		Cases []struct {
			ID    string `json:"id"`
			Steps []struct {
				ID, Phase     string
				Read          map[string][]string
				Write, Source []string
			} `json:"steps"`
			Pairs []struct {
				A, B, Phase string
				Commute     bool
				Blocking    []struct {
					Kind  string
					Paths []string
				}
			} `json:"pairs"`
			Delegations []struct {
				Child, Parent string
				OK            bool
			} `json:"delegations"`
			Checks []struct{ OK bool } `json:"checks"`
		} `json:"cases"`
	}
	if err := json.Unmarshal([]byte(stdout), &got); err != nil {
		t.Fatal(err)
	}
	pairs, blocked, checks := 0, 0, 0
	for _, c := range got.Cases {
		for _, p := range c.Pairs {
			if p.Commute {
				pairs++
			} else {
				blocked++
				if len(p.Blocking) == 0 || len(p.Blocking[0].Paths) == 0 {
					t.Errorf("case %s pair %s/%s: no blocking paths", c.ID, p.A, p.B)
				}
			}
		}
		checks += len(c.Checks)
	}
	if pairs < 6 || blocked < 3 || checks != pairs {
		t.Errorf("certified pairs %d, blocked %d, checked %d", pairs, blocked, checks)
	}
	if !strings.Contains(stderr, "checked ") || !strings.Contains(stderr, ": 0 differ") {
		t.Errorf("stderr: %s", stderr)
	}
}
