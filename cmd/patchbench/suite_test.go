package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const exampleCases = "../../bench/testdata/example"

func TestValidateCommand(t *testing.T) {
	empty := t.TempDir()
	checkCLI(t, []cliCase{
		{name: "example", args: []string{"validate", exampleCases}, golden: "validate-example"},
		{name: "broken", args: []string{"validate", "testdata/cases-broken"}, exit: 1, golden: "validate-broken"},
		{name: "flags after the directory", args: []string{"validate", exampleCases, "--configs", "../../bench/configs"}, golden: "validate-example"},
		{name: "missing directory", args: []string{"validate", "testdata/no-such-dir"}, exit: 2, stderr: []string{"no-such-dir"}},
		{name: "empty directory", args: []string{"validate", empty}, exit: 2, stderr: []string{"no case files"}},
		{name: "two directories", args: []string{"validate", "a", "b"}, exit: 2, stderr: []string{`unexpected argument "b"`}},
		{name: "bad configs", args: []string{"validate", exampleCases, "--configs", "testdata"}, exit: 2, stderr: []string{"testdata/"}},
		{name: "help", args: []string{"validate", "-h"}, golden: "validate-help"},
		{name: "one file", args: []string{"validate", exampleCases + "/support/sup-example-refund.yaml"}, golden: "validate-example"},
		{name: "--cases", args: []string{"validate", "--cases", exampleCases}, golden: "validate-example"},
		{name: "--cases and a directory", args: []string{"validate", "--cases", exampleCases, "other"}, exit: 2, stderr: []string{"two case sets"}},
		{name: "not a case file", args: []string{"validate", "testdata/state.json"}, exit: 1, stderr: nil},
		{name: "empty configs", args: []string{"validate", exampleCases, "--configs", "testdata/golden"}, exit: 2, stderr: []string{"no configurations (*.yaml) in testdata/golden"}},
	})
}

func TestValidateEmbeddedSuite(t *testing.T) {
	if testing.Short() {
		t.Skip("validates the whole suite")
	}
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"validate"}})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	lines := strings.Split(strings.TrimSuffix(stdout, "\n"), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "ok: 46 cases (finance 8, marketing 7, medical 8, science 7, software 8, support 8)") {
		t.Errorf("summary: %s", last)
	}
	// Invariants that are a one-bit oracle on hidden data
	// (invariant-reads-hidden) are warnings: printed, counted
	// in the summary, and the exit status stays 0.
	warnings := 0
	for _, l := range lines[:len(lines)-1] {
		if !strings.Contains(l, ": warning (invariant-reads-hidden): ") {
			t.Errorf("not a warning: %s", l)
		}
		warnings++
	}
	for _, want := range []string{"fin-portfolio-rebalance.yaml:187: case fin-portfolio-rebalance: warning (invariant-reads-hidden): invariant \"an approval needs at least one trade\" reads /compliance_review/approved, hidden from step propose-trades",
		"/signoff/approved, hidden from step rec-ar"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no warning %q", want)
		}
	}
	if !strings.Contains(last, fmt.Sprintf("; %d warnings", warnings)) {
		t.Errorf("the summary does not count %d warnings: %s", warnings, last)
	}
}

func TestCasesCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "example", args: []string{"cases", "--cases", exampleCases}, golden: "cases-example"},
		{name: "example json", args: []string{"cases", "--cases", exampleCases, "--format", "json"}, golden: "cases-example-json"},
		{name: "positional directory", args: []string{"cases", exampleCases}, golden: "cases-example"},
		{name: "a domain the set does not have", args: []string{"cases", "--cases", exampleCases, "--domain", "finance"}, exit: 2,
			stderr: []string{`unknown domain "finance" (the case set's domains: support)`}},
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
	if !strings.Contains(stderr, "ran ") || !strings.Contains(stderr, ": 0 failed") {
		t.Errorf("stderr: %s", stderr)
	}
}

func TestCaseStepFlags(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "view of a case step", args: []string{"view", "--cases", exampleCases, "--case", "sup-example-refund"}, golden: "view-case-step"},
		{name: "verify a hidden-source copy on a case step", args: []string{"verify", "--cases", exampleCases, "--case", "sup-example-refund", "--patch", "-"},
			stdin: `[{"op":"copy","from":"/customer/card_number","path":"/ticket/reply"}]`, exit: 1, golden: "verify-case-step"},
		{name: "verify with the phase overridden", args: []string{"verify", "--cases", exampleCases, "--case", "sup-example-refund", "--phase", "done", "--patch", "-"},
			stdin: `[{"op":"replace","path":"/ticket/status","value":"resolved"}]`, exit: 1, golden: "verify-case-step-phase"},
		{name: "several steps need --step", args: []string{"view", "--case", "fin-payment-run-approval"}, exit: 2, stderr: []string{"choose one with --step (prepare-run, approve-run)"}},
		{name: "a later step", args: []string{"view", "--case", "fin-payment-run-approval", "--step", "approve-run"}, exit: 0},
		{name: "unknown step", args: []string{"view", "--case", "fin-payment-run-approval", "--step", "x"}, exit: 2, stderr: []string{`no step "x"`}},
		{name: "unknown case", args: []string{"verify", "--case", "nope", "--patch", "-"}, exit: 2, stderr: []string{`no case "nope"`}},
		{name: "--step without --case", args: []string{"view", "--step", "x", "--state", "s", "--contract", "c"}, exit: 2, stderr: []string{"--step needs --case"}},
		{name: "--case and --contract", args: []string{"view", "--case", "x", "--contract", "c"}, exit: 2, stderr: []string{"alternatives"}},
	})
}

// A goal written as an invariant (invariant-false-before-step, see
// docs/contracts-and-gates.md) is a warning of its
// own kind, counted apart in the summary; validate still succeeds.
func TestValidateWarnsOfGoalInvariants(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(exampleCases, "support", "sup-example-refund.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "    rule: post.order.total == pre.order.total\n",
		"    rule: post.order.total == pre.order.total\n  - name: the reply is written\n    rule: post.ticket.reply != ''\n", 1)
	dir := t.TempDir()
	if err := os.Mkdir(filepath.Join(dir, "support"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "support", "sup-example-refund.yaml"), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"validate", dir}})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	for _, want := range []string{
		`case sup-example-refund: warning (invariant-false-before-step): invariant "the reply is written" does not hold (invariant_violated) on the state step reply starts from in the reference run`,
		`; 1 warning (invariants false on the state a step starts from: see docs/contracts-and-gates.md, "Goals belong in the rubric")`,
	} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in\n%s", want, stdout)
		}
	}
}
