package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

func TestRunCommand(t *testing.T) {
	out := t.TempDir()
	checkCLI(t, []cliCase{
		{name: "no-model run of the example", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "7"}, golden: "run-example",
			stderr: []string{"run directory: " + out + " (18 runs)"}},
		{name: "the same command resumes", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "7"}, golden: "run-example",
			stderr: []string{"(18 runs)"}},
		{name: "other settings, same directory", args: []string{"run", "--cases", exampleCases, "--out", out, "--seed", "8"}, exit: 2,
			stderr: []string{"holds a run with other settings"}},
		{name: "bad shard", args: []string{"run", "--shard", "2/2"}, exit: 2, stderr: []string{"want i/n"}},
		{name: "unknown actor", args: []string{"run", "--actor", "gpt"}, exit: 2, stderr: []string{`unknown actor "gpt"`}},
		{name: "unknown config", args: []string{"run", "--config", "nope"}, exit: 2, stderr: []string{`no configuration "nope"`}},
		{name: "no case", args: []string{"run", "--case", "nope"}, exit: 2, stderr: []string{`--case: no case "nope" in the case set`}},
		{name: "one of the cases unknown", args: []string{"run", "--case", "fin-expense-review,nope"}, exit: 2, stderr: []string{`--case: no case "nope"`}},
		{name: "no case of the domain", args: []string{"run", "--case", "fin-expense-review", "--domain", "support"}, exit: 2, stderr: []string{"no case matches"}},
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
	if n := strings.Count(string(runs), "\n"); n != 18 {
		t.Errorf("runs.jsonl has %d lines after a rerun, want 18", n)
	}
}

func TestStressCommand(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "embedded suite", args: []string{"stress"}, golden: "stress"},
		{name: "embedded suite json", args: []string{"stress", "--format", "json"}, golden: "stress-json"},
		{name: "broken caught_by", args: []string{"stress", "--cases", "testdata/cases-stress-mismatch"}, exit: 1,
			stderr: []string{"mismatch: case sup-mismatch artifact copy-card in verify-only: committed false, caught_by says true"}},
		// Every configuration decides as caught_by predicts (the schema gate
		// rejects), but scope, which caught_by names, does not catch it.
		{name: "a gate caught_by names does not catch it", args: []string{"stress", "--cases", "testdata/cases-stress-uncaught"}, exit: 1,
			stderr: []string{"mismatch: case sup-uncaught artifact bad-status: gate scope on its own accepts it, though caught_by [scope, schema] names it"}},
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
	cases = append(cases,
		cliCase{name: "latex, intervals in their own columns", args: []string{"report", out, "--format", "latex", "--ci-columns", "--table", "main,attacks"}, golden: "report-latex-ci-columns"},
		cliCase{name: "markdown, intervals in their own columns", args: []string{"report", out, "--format", "markdown", "--ci-columns", "--table", "main"}, golden: "report-markdown-ci-columns"},
		cliCase{name: "csv of the domains", args: []string{"report", out, "--format", "csv", "--table", "domains"}, golden: "report-csv-domains"},
		cliCase{name: "csv of the paired tests", args: []string{"report", out, "--format", "csv", "--table", "mcnemar"}, golden: "report-csv-mcnemar"},
		cliCase{name: "csv of the paper's figures, asked by name", args: []string{"report", out, "--format", "csv", "--table", "paper"}, golden: "report-csv-paper"},
		cliCase{name: "csv takes one table", args: []string{"report", out, "--format", "csv", "--table", "main,attacks"}, exit: 2, stderr: []string{"--format csv writes one table"}},
		cliCase{name: "a configuration's label", args: []string{"run", "--config", "View Only", "--out", filepath.Join(t.TempDir(), "label")}, exit: 2, stderr: []string{`"View Only" is the label of view-only: give --config view-only`}},
		cliCase{name: "an unknown table", args: []string{"report", out, "--table", "nope"}, exit: 2, stderr: []string{`no table "nope" (tables: main, attacks, leak-kinds, leak-mechanisms, leak-routes, illegal, rejections, domains, mcnemar, reliability, paper)`}},
		cliCase{name: "an unknown plot format", args: []string{"report", out, "--plots", t.TempDir(), "--plot-format", "jpeg"}, exit: 2, stderr: []string{"--plot-format must be png, svg or pdf"}},
	)
	checkCLI(t, cases)
}

func TestShardsMergeAndCompare(t *testing.T) {
	tmp := t.TempDir()
	full, s0, s1, merged := filepath.Join(tmp, "full"), filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1"), filepath.Join(tmp, "merged")
	for _, c := range [][]string{
		{"run", "--cases", exampleCases, "--out", full},
		{"run", "--cases", exampleCases, "--out", s0, "--shard", "0/2"},
		{"run", "--cases", exampleCases, "--out", s1, "--shard", "1/2"},
		{"run", "--cases", exampleCases, "--out", filepath.Join(tmp, "seed9"), "--shard", "1/2", "--seed", "9"},
	} {
		if _, stderr, code := runCLI(t, cliCase{args: c}); code != 0 {
			t.Fatalf("%v: exit %d: %s", c, code, stderr)
		}
	}
	checkCLI(t, []cliCase{
		{name: "merge the shards", args: []string{"merge", "--out", merged, s0, s1}},
		{name: "merge into a directory with runs", args: []string{"merge", "--out", merged, s0}, exit: 2, stderr: []string{"already holds runs"}},
		{name: "merge runs of other settings", args: []string{"merge", "--out", filepath.Join(tmp, "x"), s0, filepath.Join(tmp, "seed9")}, exit: 2,
			stderr: []string{"holds a run with other settings"}},
		{name: "no regression between the full run and the merged shards", args: []string{"compare", full, merged}, golden: "compare-same"},
		{name: "compare needs two directories", args: []string{"compare", full}, exit: 2, stderr: []string{"give two run directories"}},
	})
	a, _ := os.ReadFile(filepath.Join(full, "summary.json"))
	b, _ := os.ReadFile(filepath.Join(merged, "summary.json"))
	if diff := cmp.Diff(string(a), string(b)); diff != "" {
		t.Errorf("merged shards summarise differently (-full +merged):\n%s", diff)
	}
	// A regression: one passing run fails in B.
	broken := filepath.Join(tmp, "broken")
	os.MkdirAll(broken, 0o755)
	m, _ := os.ReadFile(filepath.Join(full, "manifest.json"))
	os.WriteFile(filepath.Join(broken, "manifest.json"), m, 0o644)
	runs, _ := os.ReadFile(filepath.Join(full, "runs.jsonl"))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(runs)), "\n") {
		if strings.Contains(l, `"run_id":"sup-example-refund/patchoptic/reference/1"`) {
			l = strings.Replace(l, `"status":"passed"`, `"status":"failed"`, 1)
			l = strings.Replace(strings.Replace(l, `"semantic_pass":true`, `"semantic_pass":false`, 1), `"legal_pass":true`, `"legal_pass":false`, 1)
		}
		lines = append(lines, l)
	}
	os.WriteFile(filepath.Join(broken, "runs.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	checkCLI(t, []cliCase{
		{name: "a regression", args: []string{"compare", full, broken}, exit: 1, golden: "compare-regression"},
		// reference is an exact actor: its one run of one case is a change
		// of 1.0; judged as a sampled actor, one pair is no evidence (p = 1).
		{name: "a sampled actor's one run is no regression", args: []string{"compare", full, broken, "--exact", ""}},
	})
}

func TestRunAndReportEdges(t *testing.T) {
	tmp := t.TempDir()
	out, s0 := filepath.Join(tmp, "out"), filepath.Join(tmp, "s0")
	notRun := filepath.Join(tmp, "notrun")
	os.MkdirAll(notRun, 0o755)
	os.WriteFile(filepath.Join(notRun, "notes.txt"), []byte("mine"), 0o644)
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out}}); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", s0, "--shard", "0/2"}}); code != 0 {
		t.Fatal(stderr)
	}
	// An interrupted run: keep the first five records only.
	cut := filepath.Join(tmp, "cut")
	os.MkdirAll(cut, 0o755)
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	os.WriteFile(filepath.Join(cut, "manifest.json"), m, 0o644)
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	lines := strings.SplitAfter(string(runs), "\n")
	os.WriteFile(filepath.Join(cut, "runs.jsonl"), []byte(strings.Join(lines[:5], "")), 0o644)
	checkCLI(t, []cliCase{
		{name: "unknown baseline", args: []string{"report", out, "--baseline", "nope"}, exit: 2,
			stderr: []string{`no configuration "nope"`, "names: unconstrained, schema-only"}},
		{name: "incomplete directory", args: []string{"report", cut}, stderr: []string{"is incomplete: 5 of 18 runs recorded"}},
		{name: "a directory that is not a run's", args: []string{"run", "--cases", exampleCases, "--out", notRun}, exit: 2,
			stderr: []string{"is not empty and holds no manifest.json"}},
		{name: "unknown tokenizer", args: []string{"run", "--cases", exampleCases, "--tokenizer", "bogus", "--out", filepath.Join(tmp, "tok")}, exit: 2,
			stderr: []string{"known: o200k_base, cl100k_base"}},
		{name: "settings named", args: []string{"run", "--cases", exampleCases, "--out", out, "--rounds", "2"}, exit: 2,
			stderr: []string{"(rounds differ)"}},
		{name: "a missing shard", args: []string{"merge", "--out", filepath.Join(tmp, "m"), s0}, exit: 2,
			stderr: []string{"shards 1/2 of the series are missing (0/2 given)", "--allow-missing"}},
		{name: "a missing shard, allowed", args: []string{"merge", "--allow-missing", "--out", filepath.Join(tmp, "m"), s0}, stderr: []string{"shards 1/2 are missing"}},
		{name: "a merge without a shard", args: []string{"report", filepath.Join(tmp, "m")}, stderr: []string{"shards missing: " + filepath.Join(tmp, "m") + " (without 1/2) was merged without them"}},
		{name: "unknown domain", args: []string{"run", "--domain", "Finance"}, exit: 2, stderr: []string{"domains: finance, marketing"}},
	})
	if _, err := os.Stat(filepath.Join(tmp, "tok")); err == nil {
		t.Error("a refused tokenizer left a run directory behind")
	}
}

// TestReportShardsOfASeries: report over shards given without the others
// of their series says the data is not complete (titles, a note on
// standard error, the JSON summary), as over a merge without them; report
// and compare refuse shards of series of different sizes, naming the
// directory, as merge does.
func TestReportShardsOfASeries(t *testing.T) {
	tmp := t.TempDir()
	dirs := map[string]string{}
	for _, sh := range []string{"0/2", "1/2", "0/3"} {
		d := filepath.Join(tmp, "s"+strings.ReplaceAll(sh, "/", "of"))
		if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--actor", "reference", "--out", d, "--shard", sh}}); code != 0 {
			t.Fatal(stderr)
		}
		dirs[sh] = d
	}
	note := "shards missing: " + dirs["0/2"] + " (shards of a series of 2, without 1/2)"
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"report", dirs["0/2"]}})
	if code != 0 || !strings.Contains(stdout, "PatchBench (shards missing)") || !strings.Contains(stderr, note) || strings.Contains(stderr, "is incomplete") {
		t.Errorf("one shard of two: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, cliCase{args: []string{"report", "--format", "json", dirs["0/2"]}})
	var rep struct {
		Summary struct {
			Complete      bool     `json:"complete"`
			ShardsMissing []string `json:"shards_missing"`
		} `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != 0 || rep.Summary.Complete || len(rep.Summary.ShardsMissing) != 1 {
		t.Errorf("one shard of two, JSON: exit %d, %+v, %v", code, rep.Summary, err)
	}
	stdout, stderr, code = runCLI(t, cliCase{args: []string{"report", dirs["0/2"], dirs["1/2"]}})
	if code != 0 || strings.Contains(stdout, "shards missing") || strings.Contains(stderr, "shards missing") {
		t.Errorf("the whole series: exit %d\n%s%s", code, stdout, stderr)
	}
	mixed := dirs["0/3"] + ": shard 0/3 is of a series of 3; the others of 2"
	checkCLI(t, []cliCase{
		{name: "report of mixed series", args: []string{"report", dirs["0/2"], dirs["0/3"], dirs["1/2"]}, exit: 2, stderr: []string{mixed}},
		{name: "compare of mixed series", args: []string{"compare", dirs["0/2"], dirs["0/2"] + "," + dirs["0/3"] + "," + dirs["1/2"]}, exit: 2, stderr: []string{mixed}},
	})
}

func TestRunDirectoryIntegrity(t *testing.T) {
	tmp := t.TempDir()
	cases := filepath.Join(tmp, "cases", "support")
	os.MkdirAll(cases, 0o755)
	example, _ := os.ReadFile(exampleCases + "/support/sup-example-refund.yaml")
	file := filepath.Join(cases, "sup-example-refund.yaml")
	os.WriteFile(file, example, 0o644)
	out := filepath.Join(tmp, "out")
	args := []string{"run", "--cases", filepath.Join(tmp, "cases"), "--out", out}
	if _, stderr, code := runCLI(t, cliCase{args: args}); code != 0 {
		t.Fatal(stderr)
	}
	// A complete last record without its newline is kept, and the next
	// record starts on a line of its own.
	runsPath := filepath.Join(out, "runs.jsonl")
	runs, _ := os.ReadFile(runsPath)
	lines := strings.SplitAfter(strings.TrimSuffix(string(runs), "\n"), "\n")
	os.WriteFile(runsPath, []byte(strings.Join(lines[:len(lines)-1], "")+strings.TrimSuffix(lines[len(lines)-1], "\n")), 0o644)
	if _, stderr, code := runCLI(t, cliCase{args: args}); code != 0 || !strings.Contains(stderr, "(18 runs)") {
		t.Fatalf("resume after an unterminated last record: exit %d: %s", code, stderr)
	}
	runs, _ = os.ReadFile(runsPath)
	if n := strings.Count(string(runs), "\n"); n != 18 || !strings.HasSuffix(string(runs), "\n") {
		t.Errorf("runs.jsonl has %d lines", n)
	}
	// An edited rubric is another case set: no resume into the old runs.
	os.WriteFile(file, []byte(strings.Replace(string(example), `contains_all: ["refund", "42.50"]`, `contains_all: ["refund"]`, 1)), 0o644)
	checkCLI(t, []cliCase{
		{name: "edited case", args: args, exit: 2, stderr: []string{"case_digest differ"}},
		{name: "actor twice", args: []string{"run", "--actor", "reference", "--actor", "reference"}, exit: 2, stderr: []string{"--actor reference is given twice"}},
		{name: "huge shard count", args: []string{"run", "--shard", "0/4294967296"}, exit: 2, stderr: []string{"want i/n"}},
		{name: "huge rounds", args: []string{"run", "--rounds", "1000000000"}, exit: 2, stderr: []string{"--rounds must be at most 10000, not 1000000000"}},
	})
	// A line that is not a run record is an error with its file and line.
	bad := filepath.Join(tmp, "bad")
	os.MkdirAll(bad, 0o755)
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	os.WriteFile(filepath.Join(bad, "manifest.json"), m, 0o644)
	os.WriteFile(filepath.Join(bad, "runs.jsonl"), []byte(lines[0]+"{\"hello\":\"world\"}\n"), 0o644)
	other := filepath.Join(tmp, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "manifest.json"), m, 0o644)
	os.WriteFile(filepath.Join(other, "runs.jsonl"), []byte(strings.ReplaceAll(lines[0], "sup-example-refund", "sup-elsewhere")), 0o644)
	// B stopped after one run: the runs missing from B are regressions.
	short := filepath.Join(tmp, "short")
	os.MkdirAll(short, 0o755)
	os.WriteFile(filepath.Join(short, "manifest.json"), m, 0o644)
	os.WriteFile(filepath.Join(short, "runs.jsonl"), []byte(lines[0]), 0o644)
	checkCLI(t, []cliCase{
		{name: "not a record", args: []string{"report", bad}, exit: 2, stderr: []string{"runs.jsonl:2: not a run record"}},
		{name: "a case of another set", args: []string{"report", other}, exit: 2, stderr: []string{"case sup-elsewhere is not in this run's case set"}},
		{name: "runs missing from B", args: []string{"compare", out, short}, exit: 1},
		{name: "nothing shared", args: []string{"compare", out, other + "-none"}, exit: 2},
		{name: "the same directory twice", args: []string{"merge", "--out", filepath.Join(tmp, "m"), out, out}, exit: 2, stderr: []string{"two unsharded directories"}},
	})
	stdout, _, _ := runCLI(t, cliCase{args: []string{"compare", out, short}})
	if !strings.Contains(stdout, "INCOMPLETE: 17 runs of A missing from B") {
		t.Errorf("compare: %s", stdout)
	}
}

func TestRunActorFlags(t *testing.T) {
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("OPENAI_BASE_URL", "")
	tmp := t.TempDir()
	checkCLI(t, []cliCase{
		{name: "a role map", args: []string{"run", "--cases", exampleCases, "--out", filepath.Join(tmp, "roles"), "--actor", "agent=oversharer", "--config", "patchoptic"},
			stderr: []string{"(1 run)"}},
		{name: "a role with no actor", args: []string{"run", "--cases", exampleCases, "--actor", "reviewer=reference"}, exit: 2,
			stderr: []string{"no actor for the roles agent"}},
		{name: "a misspelled role", args: []string{"run", "--cases", exampleCases, "--actor", "agnet=oversharer,reference"}, exit: 2,
			stderr: []string{"agnet is not a role of any case (the roles: agent)"}},
		{name: "a token budget", args: []string{"run", "--cases", exampleCases, "--out", filepath.Join(tmp, "budget"), "--max-tokens-total", "600"},
			exit: exitIncomplete, stderr: []string{"the token budget (--max-tokens-total 600) is spent"}},
		{name: "cache flags at odds", args: []string{"run", "--no-cache", "--cache-only"}, exit: 2, stderr: []string{"opposites"}},
		{name: "a live actor needs its key", args: []string{"run", "--actor", "openai:gpt-5-mini", "--no-cache"}, exit: 2, stderr: []string{"OPENAI_API_KEY is not set"}},
	})
	m, _ := os.ReadFile(filepath.Join(tmp, "budget", "manifest.json"))
	if !strings.Contains(string(m), `"token_budget_spent": true`) {
		t.Errorf("manifest: %s", m)
	}
	stdout, _, _ := runCLI(t, cliCase{args: []string{"report", filepath.Join(tmp, "roles")}})
	if !strings.Contains(stdout, "agent=oversharer") {
		t.Errorf("the role map is not the actor's name in the report:\n%s", stdout)
	}
}

// TestRunExecActor runs the example case with an exec actor, a shell
// script that declines in prose: every run is recorded as failed (a
// malformed proposal is a rejection), and the manifest names the actor.
func TestRunExecActor(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.sh")
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"text\": \"I would rather not.\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "run")
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--actor", "exec:sh " + agent, "--out", out}})
	if code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if n := strings.Count(string(runs), `"status":"failed"`); n != 6 {
		t.Errorf("%d failed runs, want 6:\n%s", n, runs)
	}
	manifest, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if !strings.Contains(string(manifest), `"exec:sh `+agent+`"`) {
		t.Errorf("the manifest does not name the actor:\n%s", manifest)
	}
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--actor", "exec:no-such-agent-patchbench"}}); code != 2 || !strings.Contains(stderr, "no-such-agent-patchbench") {
		t.Errorf("a missing program: exit %d\n%s", code, stderr)
	}
}

// TestRunPromptTemplate checks --prompt-template: its hash is the
// manifest's prompt_version, part of the settings (the same content under
// another name resumes; other content is refused), and a bad template is
// bad usage naming the file and line.
func TestRunPromptTemplate(t *testing.T) {
	dir := t.TempDir()
	tmpl := filepath.Join(dir, "terse.tmpl")
	text := "{{define \"version\"}}terse/1{{end}}{{define \"system\"}}You are the {{.Role}}.{{end}}\n{{define \"user\"}}{{.Instruction}}\n{{.View}}{{end}}"
	os.WriteFile(tmpl, []byte(text), 0o644)
	out := filepath.Join(dir, "run")
	run := func(tmpl string) (string, int) {
		_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--actor", "reference", "--out", out, "--prompt-template", tmpl}})
		return stderr, code
	}
	if stderr, code := run(tmpl); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	m, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(m.PromptVersion, "terse/1+") || m.PromptVersion == runner.PromptVersion || m.PromptTemplate != tmpl {
		t.Errorf("prompt_version %q, prompt_template %q", m.PromptVersion, m.PromptTemplate)
	}
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if !strings.Contains(string(runs), `"content":"You are the agent."`) {
		t.Error("the runs were not prompted with the template")
	}
	moved := filepath.Join(dir, "moved.tmpl")
	os.WriteFile(moved, []byte(text), 0o644)
	if stderr, code := run(moved); code != 0 {
		t.Errorf("the same template under another name does not resume: exit %d: %s", code, stderr)
	}
	os.WriteFile(moved, []byte(text+" "), 0o644)
	if stderr, code := run(moved); code != 2 || !strings.Contains(stderr, "prompt_version differ") {
		t.Errorf("an edited template resumes: exit %d: %s", code, stderr)
	}
	bad := filepath.Join(dir, "bad.tmpl")
	os.WriteFile(bad, []byte("{{define \"system\"}}x{{end}}\n{{define \"user\"}}{{.Casee}}{{end}}"), 0o644)
	if stderr, code := run(bad); code != 2 || !strings.Contains(stderr, "bad.tmpl:2") || !strings.Contains(stderr, "Casee") {
		t.Errorf("a bad template: exit %d: %s", code, stderr)
	}
	if stderr, code := run(filepath.Join(dir, "missing.tmpl")); code != 2 || !strings.Contains(stderr, "missing.tmpl") {
		t.Errorf("a missing template: exit %d: %s", code, stderr)
	}
}
