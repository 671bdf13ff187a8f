package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

type cliCase struct {
	name   string
	args   []string
	stdin  string
	exit   int
	golden string   // testdata/golden/NAME.stdout, compared in full
	stderr []string // substrings stderr must contain
}

func runCLI(t *testing.T, c cliCase) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	stdin = strings.NewReader(c.stdin)
	defer func() { stdin = os.Stdin }()
	code := run(context.Background(), c.args, &out, &errb)
	return out.String(), errb.String(), code
}

func checkCLI(t *testing.T, cases []cliCase) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			stdout, stderr, code := runCLI(t, c)
			if code != c.exit {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.exit, stdout, stderr)
			}
			for _, s := range c.stderr {
				if !strings.Contains(stderr, s) {
					t.Errorf("stderr does not contain %q:\n%s", s, stderr)
				}
			}
			if c.golden == "" {
				return
			}
			path := filepath.Join("testdata", "golden", c.golden+".stdout")
			if *update {
				if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(path, []byte(stdout), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run with -update to create it)", err)
			}
			if diff := cmp.Diff(string(want), stdout); diff != "" {
				t.Errorf("stdout mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

const (
	state    = "testdata/state.json"
	contract = "testdata/triage.yaml"
)

func TestView(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "triage view", args: []string{"view", "--state", state, "--contract", contract}, golden: "view-triage"},
		{name: "from stdin", args: []string{"view", "--state", "-", "--contract", contract}, stdin: `{"ticket":{"id":1},"customer":{"card":"x"}}`, golden: "view-stdin"},
		{name: "missing flags", args: []string{"view", "--state", state}, exit: 2, stderr: []string{"missing --contract"}},
		{name: "duplicate member in state", args: []string{"view", "--state", "testdata/dup-state.json", "--contract", contract}, exit: 2,
			stderr: []string{"testdata/dup-state.json", "line 3", `duplicate member name "ticket"`}},
		{name: "missing state file", args: []string{"view", "--state", "testdata/nope.json", "--contract", contract}, exit: 2, stderr: []string{"testdata/nope.json", "no such file"}},
		{name: "unknown contract key", args: []string{"view", "--state", state, "--contract", "testdata/unknown-key.yaml"}, exit: 2,
			stderr: []string{"testdata/unknown-key.yaml:4:", `unknown key "sources" (known keys: view, write, source,`}},
		{name: "bad pattern", args: []string{"view", "--state", state, "--contract", "testdata/bad-pattern.yaml"}, exit: 2,
			stderr: []string{"testdata/bad-pattern.yaml:5:", "ticket/reply"}},
		{name: "bad rule", args: []string{"view", "--state", state, "--contract", "testdata/bad-rule.yaml"}, exit: 2,
			stderr: []string{"testdata/bad-rule.yaml:8:", "invariants[1].rule"}},
		{name: "help", args: []string{"view", "-h"}, exit: 0, golden: "view-help"},
		{name: "bad scale", args: []string{"view", "--case", "mkt-crm-segment-export", "--step", "select-contacts", "--scale", "2x"}, exit: 2, stderr: []string{"--scale", `scale "2x"`}},
		{name: "scale without case", args: []string{"view", "--state", state, "--contract", contract, "--scale", "1MB"}, exit: 2, stderr: []string{"--scale needs --case"}},
		{name: "unknown flag", args: []string{"view", "--bogus"}, exit: 2, stderr: []string{"patchbench view: flag provided but not defined: -bogus", `Run "patchbench view -h"`}},
	})
}

// TestViewScaled: view --scale shows the step's view of the grown state:
// the generated records, with the members the view hides hidden in them
// too, the same text on every call.
func TestViewScaled(t *testing.T) {
	args := []string{"view", "--case", "mkt-crm-segment-export", "--step", "select-contacts", "--scale", "200KB"}
	out, stderr, code := runCLI(t, cliCase{args: args})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	small, _, _ := runCLI(t, cliCase{args: args[:5]})
	if len(out) < 150_000 || strings.Count(out, `"customer_id"`) < 10*strings.Count(small, `"customer_id"`) {
		t.Errorf("the view at 200KB has %d bytes, %d contacts (%d at 1x)", len(out), strings.Count(out, `"customer_id"`), strings.Count(small, `"customer_id"`))
	}
	if strings.Contains(out, `"mobile"`) || strings.Contains(out, `"date_of_birth"`) {
		t.Error("the grown view shows a member the step's view hides")
	}
	if again, _, _ := runCLI(t, cliCase{args: args}); again != out {
		t.Error("two views of one grown case differ")
	}
}

func TestVerify(t *testing.T) {
	base := []string{"verify", "--state", state, "--contract", contract, "--phase", "triage"}
	with := func(extra ...string) []string { return append(append([]string{}, base...), extra...) }
	checkCLI(t, []cliCase{
		{name: "good text", args: with("--patch", "testdata/good.json"), golden: "verify-good"},
		{name: "good json", args: with("--patch", "testdata/good.json", "--format", "json"), golden: "verify-good-json"},
		{name: "hidden source", args: with("--patch", "testdata/hidden-source.json"), exit: 1, golden: "verify-hidden-source"},
		{name: "hidden source json", args: with("--patch", "testdata/hidden-source.json", "--format", "json"), exit: 1, golden: "verify-hidden-source-json"},
		{name: "hidden source unconstrained", args: with("--patch", "testdata/hidden-source.json", "--gates", "none"), golden: "verify-hidden-source-none"},
		{name: "hidden source acl", args: with("--patch", "testdata/hidden-source.json", "--gates", "acl,phase"), golden: "verify-hidden-source-acl"},
		{name: "write outside", args: with("--patch", "testdata/outside.json"), exit: 1, golden: "verify-outside"},
		{name: "malformed", args: with("--patch", "testdata/malformed.json"), exit: 1, golden: "verify-malformed"},
		{name: "duplicate members reach the decoder", args: with("--patch", "testdata/dup-patch.json"), exit: 1, golden: "verify-dup-patch"},
		{name: "wrong phase", args: []string{"verify", "--state", state, "--contract", contract, "--phase", "publish", "--patch", "testdata/good.json"}, exit: 1, golden: "verify-wrong-phase"},
		{name: "patch from stdin", args: with("--patch", "-", "--gates", "scope"), stdin: `[{"op":"replace","path":"/ticket/status","value":"closed"}]`, golden: "verify-stdin"},
		{name: "phase required", args: []string{"verify", "--state", state, "--contract", contract, "--patch", "testdata/good.json"}, exit: 2, stderr: []string{"--phase is required", "triage"}},
		{name: "bad gates", args: with("--patch", "testdata/good.json", "--gates", "scope,commit"), exit: 2, stderr: []string{`unknown gate "commit"`}},
		{name: "bad format", args: with("--patch", "testdata/good.json", "--format", "yaml"), exit: 2, stderr: []string{`--format "yaml"`}},
		{name: "missing patch", args: with("--patch", "testdata/nope.json"), exit: 2, stderr: []string{"testdata/nope.json"}},
		{name: "both stdin", args: []string{"verify", "--state", "-", "--contract", contract, "--patch", "-"}, exit: 2, stderr: []string{"cannot both be standard input"}},
		{name: "stray argument", args: with("--patch", "testdata/good.json", "extra"), exit: 2, stderr: []string{`unexpected argument "extra"`}},
		{name: "help", args: []string{"help", "verify"}, exit: 0, golden: "verify-help"},
		{name: "explain", args: with("--patch", "testdata/schema-fail.json", "--explain"), exit: 1, golden: "verify-explain",
			stderr: []string{`detail (schema, output_schema_violation): at "/ticket/reply": minLength: got 5, want 10`}},
	})
}

func TestVerifyOut(t *testing.T) {
	out := filepath.Join(t.TempDir(), "after.json")
	_, stderr, code := runCLI(t, cliCase{args: []string{"verify", "--state", state, "--contract", contract, "--phase", "triage", "--patch", "testdata/good.json", "--out", out}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"status":"pending"`, `12345678901234567890`, `19.90`} {
		if !bytes.Contains(b, []byte(want)) {
			t.Errorf("state after does not contain %s: %s", want, b)
		}
	}
}

func TestUsage(t *testing.T) {
	checkCLI(t, []cliCase{
		{name: "no command", args: nil, exit: 2, stderr: []string{"Commands:", "verify", "view"}},
		{name: "unknown command", args: []string{"frobnicate"}, exit: 2, stderr: []string{`unknown command "frobnicate"`}},
		{name: "help", args: []string{"help"}, exit: 0, golden: "help"},
	})
}

// endless is an io.Reader that never ends, like /dev/zero.
type endless struct{}

func (endless) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = '['
	}
	return len(p), nil
}

// TestBoundedInput: a proposal or state that never ends is cut at the
// contract's limit, not read until memory runs out.
func TestBoundedInput(t *testing.T) {
	if testing.Short() {
		t.Skip("reads inputs past their bounds")
	}
	for _, c := range []struct {
		args []string
		exit int
		want string
	}{
		{[]string{"verify", "--state", state, "--contract", contract, "--phase", "triage", "--patch", "-"}, 1, "limit_exceeded"},
		{[]string{"view", "--state", "-", "--contract", contract}, 2, "larger than the contract's max_document_bytes"},
	} {
		var out, errb bytes.Buffer
		stdin = endless{}
		code := run(context.Background(), c.args, &out, &errb)
		stdin = os.Stdin
		if code != c.exit || !strings.Contains(out.String()+errb.String(), c.want) {
			t.Errorf("%v: exit %d\n%s%s", c.args, code, out.String(), errb.String())
		}
	}
}

// TestRunScaled: run --scale grows the growing case before its runs (a
// case that does not grow is recorded as it is, at no scale): the
// reference still passes on the grown state in the projected
// configuration, every record and the manifest name the scale, the runs
// saw the grown view (their prompts' tokens), and a bad size is refused
// naming --scale.
func TestRunScaled(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--case", "mkt-crm-segment-export,mkt-influencer-contract", "--config", "patchoptic", "--actor", "reference", "--scale", "200kb", "--out", dir}
	if _, stderr, code := runCLI(t, cliCase{args: args}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	var rec, plain rundir.Record
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 2 || json.Unmarshal([]byte(lines[0]), &rec) != nil || json.Unmarshal([]byte(lines[1]), &plain) != nil {
		t.Fatalf("runs.jsonl: %.200s", b)
	}
	if rec.Case != "mkt-crm-segment-export" {
		rec, plain = plain, rec
	}
	if plain.Scale != "" {
		t.Errorf("a case that does not grow is recorded at scale %q", plain.Scale)
	}
	if rec.Scale != "200KB" || rec.Status != rundir.StatusPassed || rec.Tokens.Prompt < 20_000 || len(rec.FinalState) < 200_000 {
		t.Errorf("record: scale %q, status %s, prompt tokens %d, final state %d bytes", rec.Scale, rec.Status, rec.Tokens.Prompt, len(rec.FinalState))
	}
	m, err := rundir.ReadManifest(dir)
	if err != nil || m.Scale != "200KB" {
		t.Errorf("manifest scale %q, %v", m.Scale, err)
	}
	checkCLI(t, []cliCase{{name: "bad scale", args: []string{"run", "--case", "mkt-crm-segment-export", "--scale", "2x", "--out", filepath.Join(t.TempDir(), "x")}, exit: 2,
		stderr: []string{"--scale", `scale "2x"`}}})
}

// TestBulkShortcut: the bulk actor's whole-record copies leak the hidden
// members of the contacts they copy where nothing checks a patch's
// sources, and are rejected where the patch-source gate runs.
func TestBulkShortcut(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	args := []string{"run", "--case", "mkt-crm-segment-export", "--config", "unconstrained,patchoptic", "--actor", "bulk", "--out", dir}
	if _, stderr, code := runCLI(t, cliCase{args: args}); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r rundir.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		first := r.Steps[0]
		switch r.Config {
		case "unconstrained":
			if !r.Leaked || len(r.IllegalCommits) == 0 || !first.Committed {
				t.Errorf("unconstrained: leaked %v, illegal commits %d, committed %v", r.Leaked, len(r.IllegalCommits), first.Committed)
			}
		case "patchoptic":
			source := slices.ContainsFunc(first.Decisions, func(d runtime.GateResult) bool { return !d.Passed && d.Code == runtime.CodeSourceOutside })
			if r.Leaked || first.Committed || !source {
				t.Errorf("patchoptic: leaked %v, committed %v, decisions %+v", r.Leaked, first.Committed, first.Decisions)
			}
		}
	}
}

// TestRunScalesCrossed: run --scale 1x,200KB crosses the scales with the
// configurations, actors and rounds in one directory: the growing case
// runs at each scale (its grown run's id ends in @200KB, its record
// names the scale), the case that does not grow runs once, at 1x; the
// manifest records the scales. The same scales again, as repeated flags
// in another order or as a plan's list, resume with nothing to do;
// other scales are refused, naming the directory's.
func TestRunScalesCrossed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	base := []string{"run", "--case", "mkt-crm-segment-export,fin-expense-review", "--config", "patchoptic", "--actor", "reference", "--out", dir}
	_, stderr, code := runCLI(t, cliCase{args: append(slices.Clone(base), "--scale", "1x,200kb")})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "3 runs at the scales 1x, 200KB") {
		t.Errorf("stderr does not name the scales: %s", stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	scales := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r rundir.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		scales[r.RunID] = r.Scale
	}
	want := map[string]string{"mkt-crm-segment-export/patchoptic/reference/1": "", "mkt-crm-segment-export/patchoptic/reference/1@200KB": "200KB",
		"fin-expense-review/patchoptic/reference/1": ""}
	if !maps.Equal(scales, want) {
		t.Errorf("runs (id: scale) %v; want %v", scales, want)
	}
	m, err := rundir.ReadManifest(dir)
	if err != nil || m.Scale != "1x,200KB" || m.ExpectedRuns != 3 {
		t.Errorf("manifest scale %q, expected runs %d, %v; want 1x,200KB and 3", m.Scale, m.ExpectedRuns, err)
	}
	// The same scales: repeated flags in another order, then a plan.
	_, stderr, code = runCLI(t, cliCase{args: append(slices.Clone(base), "--scale", "200KB", "--scale", "1x")})
	if code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("resume at the same scales: exit %d: %s", code, stderr)
	}
	plan := filepath.Join(t.TempDir(), "plan.yaml")
	if err := os.WriteFile(plan, []byte("version: 1\ncases:\n  ids: [mkt-crm-segment-export, fin-expense-review]\nconfigs:\n  names: [patchoptic]\nactors: [reference]\nscale: [200KB, 1x]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = runCLI(t, cliCase{args: []string{"run", "--plan", plan, "--out", dir}})
	if code != 0 || !strings.Contains(stderr, "nothing to do") {
		t.Errorf("resume from a plan's list of scales: exit %d: %s", code, stderr)
	}
	// Other scales are refused.
	checkCLI(t, []cliCase{
		{name: "other scales", args: append(slices.Clone(base), "--scale", "1x,1MB"), exit: 2,
			stderr: []string{"holds runs at the scales 1x,200KB, not 1x,1MB", "--scale 1x,200KB"}},
		{name: "a scale twice", args: append(slices.Clone(base[:len(base)-1]), filepath.Join(t.TempDir(), "x"), "--scale", "1MB,1000KB"), exit: 2,
			stderr: []string{"--scale", "scale 1MB is given twice"}},
	})
}
