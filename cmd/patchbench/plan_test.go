package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

const plansDir = "../../docs/plans"

// TestRunPlanDefault is the plan file's done-check: docs/plans/default.yaml
// makes the same summary.json as patchbench run with no flags, byte for
// byte; the manifest records the plan's digest; the same plan again
// resumes and finds nothing to do.
func TestRunPlanDefault(t *testing.T) {
	dir := t.TempDir()
	flags, fromPlan := filepath.Join(dir, "flags"), filepath.Join(dir, "plan")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--out", flags}}); code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	plan := filepath.Join(plansDir, "default.yaml")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--plan", plan, "--out", fromPlan}}); code != 0 {
		t.Fatalf("run --plan: exit %d: %s", code, stderr)
	}
	a, err := os.ReadFile(filepath.Join(flags, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(fromPlan, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Errorf("summary.json of the plan differs from the command line's:\n%s", cmp.Diff(string(a), string(b)))
	}
	m, err := rundir.ReadManifest(fromPlan)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := os.ReadFile(plan)
	p, err := runner.ParsePlan(plan, raw)
	if err != nil {
		t.Fatal(err)
	}
	if m.PlanDigest != p.Digest() || m.Plan != plan {
		t.Errorf("manifest plan %q digest %q, want %q %q", m.Plan, m.PlanDigest, plan, p.Digest())
	}
	if len(m.PlanDigest) != 64 {
		t.Errorf("plan digest %q", m.PlanDigest)
	}
	// The same plan again resumes: nothing to do.
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--plan", plan, "--out", fromPlan}})
	if code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("the same plan again: exit %d, stderr:\n%s", code, stderr)
	}
	// And the command line resumes the plan's directory: a plan is no
	// setting of its own.
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--out", fromPlan}}); code != 0 {
		t.Errorf("run without the plan on the plan's directory: exit %d: %s", code, stderr)
	}
}

// TestPlanExamples parses every plan under docs/plans: each is a plan
// whose settings run accepts.
func TestPlanExamples(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(plansDir, "*.yaml"))
	if err != nil || len(files) < 4 {
		t.Fatalf("%d plans under %s (%v)", len(files), plansDir, err)
	}
	for _, f := range files {
		stdout, stderr, code := runCLI(t, cliCase{args: []string{"plan", f}})
		if code != 0 || !strings.Contains(stdout, "plan_digest") {
			t.Errorf("plan %s: exit %d: %s", f, code, stderr)
		}
	}
}

// TestPlanPrint: the plan a command line amounts to, read back as a plan,
// amounts to the same plan (and so to the same settings).
func TestPlanPrint(t *testing.T) {
	args := []string{"--actor", "reference", "--actor", "oversharer", "--rounds", "3", "--case", "fin-expense-review,sup-account-recovery",
		"--config", "unconstrained,patchoptic", "--temperature", "0.5", "--max-attempts", "2", "--protocol", "tools", "--max-turns", "9"}
	printed, stderr, code := runCLI(t, cliCase{args: append([]string{"plan", "--print"}, args...)})
	if code != 0 {
		t.Fatalf("plan --print: exit %d: %s", code, stderr)
	}
	path := filepath.Join(t.TempDir(), "p.yaml")
	os.WriteFile(path, []byte(printed), 0o644)
	again, stderr, code := runCLI(t, cliCase{args: []string{"plan", "--print", "--plan", path}})
	if code != 0 {
		t.Fatalf("plan --print --plan: exit %d: %s", code, stderr)
	}
	if printed != again {
		t.Errorf("the printed plan read back differs:\n%s", cmp.Diff(printed, again))
	}
	for _, want := range []string{"actors: [reference, oversharer]", "rounds: 3", "ids: [fin-expense-review, sup-account-recovery]", "names: [unconstrained, patchoptic]", "temperature: 0.5", "max_attempts: 2", "protocol: tools", "max_turns: 9"} {
		if !strings.Contains(printed, want) {
			t.Errorf("the printed plan lacks %q:\n%s", want, printed)
		}
	}
	// A plan's run matches the command line's.
	dir := t.TempDir()
	var sums [2][]byte
	for i, a := range [][]string{append([]string{"run", "--out", filepath.Join(dir, "a"), "--cases", exampleCases, "--case", "sup-example-refund"}, "--actor", "reference"),
		{"run", "--out", filepath.Join(dir, "b"), "--plan", writePlan(t, "version: 1\ncases:\n  dir: "+mustAbs(t, exampleCases)+"\n  ids: [sup-example-refund]\nactors: [reference]\n")}} {
		if _, stderr, code := runCLI(t, cliCase{args: a}); code != 0 {
			t.Fatalf("%v: exit %d: %s", a, code, stderr)
		}
		sums[i], _ = os.ReadFile(filepath.Join(dir, string('a'+rune(i)), rundir.SummaryFile))
	}
	if !bytes.Equal(sums[0], sums[1]) || len(sums[0]) == 0 {
		t.Errorf("summaries differ or are empty")
	}
	var s map[string]any
	if err := json.Unmarshal(sums[1], &s); err != nil {
		t.Error(err)
	}
}

func writePlan(t *testing.T, text string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mustAbs(t *testing.T, p string) string {
	t.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

// TestPlanErrors: a plan's mistakes are usage errors naming the file and
// the line.
func TestPlanErrors(t *testing.T) {
	unknown := writePlan(t, "version: 1\ncases:\n  domains: [finance]\n  idz: [x]\n")
	top := writePlan(t, "version: 1\nround: 3\n")
	version := writePlan(t, "rounds: 2\n")
	typ := writePlan(t, "version: 1\nrounds: many\n")
	bad := writePlan(t, "version: 1\nrounds: -1\n")
	badNested := writePlan(t, "version: 1\nsettings:\n  max_retries: 2\n  temperature: 9\n")
	badLimit := writePlan(t, "version: 1\nlimits:\n  max_attempts: 1\n  max_turns: 0\n")
	badTimeout := writePlan(t, "version: 1\nsettings: {timeout: -5s}\n")
	withRounds := writePlan(t, "version: 1\nrounds: 2\n")
	checkCLI(t, []cliCase{
		{name: "unknown key", args: []string{"run", "--plan", unknown}, exit: 2, stderr: []string{unknown + ":4: unknown key \"idz\" (known keys: dir, domains, ids)"}},
		{name: "unknown top key", args: []string{"plan", top}, exit: 2, stderr: []string{top + ":2: unknown key \"round\"", "rounds"}},
		{name: "no version", args: []string{"run", "--plan", version}, exit: 2, stderr: []string{version + ":1: version must be 1, not 0"}},
		{name: "wrong type", args: []string{"run", "--plan", typ}, exit: 2, stderr: []string{typ + ":2: rounds: cannot unmarshal"}},
		{name: "bad value", args: []string{"plan", bad}, exit: 2, stderr: []string{bad + ":2: rounds must be at least 1, not -1"}},
		{name: "bad value in run", args: []string{"run", "--plan", bad}, exit: 2, stderr: []string{bad + ":2: rounds must be at least 1, not -1"}},
		{name: "bad nested value", args: []string{"plan", badNested}, exit: 2, stderr: []string{badNested + ":4: settings.temperature must be in [0, 2], not 9"}},
		{name: "bad limit", args: []string{"plan", badLimit}, exit: 2, stderr: []string{badLimit + ":4: limits.max_turns must be at least 1, not 0"}},
		{name: "bad timeout", args: []string{"plan", badTimeout}, exit: 2, stderr: []string{badTimeout + ":2: settings.timeout must be a positive Go duration"}},
		{name: "a flag the plan sets", args: []string{"run", "--plan", withRounds, "--rounds", "3"}, exit: 2, stderr: []string{"--rounds is set by the plan " + withRounds}},
		{name: "no such plan", args: []string{"run", "--plan", filepath.Join(t.TempDir(), "none.yaml")}, exit: 2, stderr: []string{"--plan:"}},
		{name: "plan without a file", args: []string{"plan"}, exit: 2, stderr: []string{"give a plan file"}},
	})
}
