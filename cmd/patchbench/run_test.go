package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestRunCommand(t *testing.T) {
	out := t.TempDir()
	checkCLI(t, []cliCase{
		{name: "no-model run of the example", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "7"}, golden: "run-example",
			stderr: []string{"run directory: " + out + " (12 runs)"}},
		{name: "the same command resumes", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "7"}, golden: "run-example",
			stderr: []string{"(12 runs)"}},
		{name: "other settings, same directory", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "8"}, exit: 2,
			stderr: []string{"holds a run with other settings"}},
		{name: "bad shard", args: []string{"run", "--shard", "2/2"}, exit: 2, stderr: []string{"want i/n"}},
		{name: "unknown actor", args: []string{"run", "--actor", "gpt"}, exit: 2, stderr: []string{`unknown actor "gpt"`}},
		{name: "unknown config", args: []string{"run", "--config", "nope"}, exit: 2, stderr: []string{`no configuration "nope"`}},
		{name: "no case", args: []string{"run", "--case", "nope"}, exit: 2, stderr: []string{"no case matches"}},
		{name: "help", args: []string{"run", "-h"}, golden: "run-help"},
	})
	got, err := os.ReadFile(filepath.Join(out, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", "golden", "run-example-summary.json")
	if *update {
		os.WriteFile(path, got, 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("summary.json mismatch (-want +got):\n%s", diff)
	}
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if n := strings.Count(string(runs), "\n"); n != 12 {
		t.Errorf("runs.jsonl has %d lines after a rerun, want 12", n)
	}
}

func TestStressCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "embedded suite", args: []string{"stress"}, golden: "stress"},
		{name: "embedded suite json", args: []string{"stress", "--format", "json"}, golden: "stress-json"},
		{name: "broken caught_by", args: []string{"stress", "--cases", "testdata/cases-stress-mismatch"}, exit: 1,
			stderr: []string{"mismatch: case sup-mismatch artifact copy-card in verify-only: committed false, caught_by says true"}},
	})
}

func TestReportCommand(t *testing.T) {
	out := t.TempDir()
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out, "--rounds", "2"}}); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	cases := []cliCase{
		{name: "not a run directory", args: []string{"report", "testdata"}, exit: 2, stderr: []string{"testdata is not a run directory"}},
		{name: "no directory", args: []string{"report"}, exit: 2, stderr: []string{"give the run directory"}},
		{name: "bad format", args: []string{"report", out, "--format", "pdf"}, exit: 2, stderr: []string{"--format must be"}},
	}
	for _, f := range []string{"text", "markdown", "csv", "latex", "json"} {
		cases = append(cases, cliCase{name: f, args: []string{"report", out, "--format", f, "--paper"}, golden: "report-" + f})
	}
	checkCLI(t, cases)
}
