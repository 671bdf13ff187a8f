package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runspec"
)

const plansDir = "../../docs/plans"

// TestRunPlanDefault is the plan file's done-check: docs/plans/default.yaml,
// with two of the suite's cases added, makes the same summary.json as
// patchbench run with no flags but --case for those two, byte for byte;
// the manifest records the plan's digest; the same plan again resumes
// and finds nothing to do. Two cases, not the whole default run: the
// plan and the flags resolve to one runspec.Spec (TestDefaultPlanIsPrinted
// checks the plan against plan --print, setting by setting), and a run
// is a function of its spec and its cases, so the whole suite twice
// would test the runner, not the plan.
func TestRunPlanDefault(t *testing.T) {
	// In parallel with TestBuildWithoutVCSStamp, which waits on go build
	// and the binaries it starts: no other parallel test calls runCLI (it
	// sets the package's stdin).
	t.Parallel()
	dir := t.TempDir()
	flags, fromPlan := filepath.Join(dir, "flags"), filepath.Join(dir, "plan")
	const ids = "fin-expense-review, sup-account-recovery"
	raw, err := os.ReadFile(filepath.Join(plansDir, "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	planText := string(raw) + "cases:\n  ids: [" + ids + "]\n"
	plan := writePlan(t, planText)
	caseArgs := []string{"--case", strings.ReplaceAll(ids, " ", "")}
	// The two runs write to directories of their own: they run at once
	// (run itself, not runCLI, which sets the package's stdin; run reads
	// no input).
	sides := []struct {
		args   []string
		stderr strings.Builder
		code   int
	}{{args: append([]string{"run", "--out", flags}, caseArgs...)}, {args: []string{"run", "--plan", plan, "--out", fromPlan}}}
	var wg sync.WaitGroup
	for i := range sides {
		s := &sides[i]
		wg.Go(func() { s.code = run(context.Background(), s.args, io.Discard, &s.stderr) })
	}
	wg.Wait()
	for _, s := range sides {
		if s.code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(s.args, " "), s.code, s.stderr.String())
		}
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
	p, err := runner.ParsePlan(plan, []byte(planText))
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
	if _, stderr, code := runCLI(t, cliCase{args: append([]string{"run", "--out", fromPlan}, caseArgs...)}); code != 0 {
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

// TestPlanPrintNamesPlan: a run flag refused by plan --print names the
// command given, plan, and its -h.
func TestPlanPrintNamesPlan(t *testing.T) {
	_, stderr, code := runCLI(t, cliCase{args: []string{"plan", "--print", "--rounds", "0"}})
	if code != exitUsage || !strings.HasPrefix(stderr, "patchbench plan: --rounds") || !strings.Contains(stderr, `Run "patchbench plan -h"`) || strings.Contains(stderr, "patchbench run") {
		t.Errorf("exit %d: %s", code, stderr)
	}
}

// TestDefaultPlanIsPrinted: docs/plans/default.yaml is what plan --print
// prints with no flags, comments aside: a new setting that changes the
// printed plan must change the file too.
func TestDefaultPlanIsPrinted(t *testing.T) {
	printed, stderr, code := runCLI(t, cliCase{args: []string{"plan", "--print"}})
	if code != 0 {
		t.Fatalf("plan --print: exit %d: %s", code, stderr)
	}
	file, err := os.ReadFile(filepath.Join(plansDir, "default.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	uncommented := func(s string) string {
		var keep []string
		for _, l := range strings.Split(s, "\n") {
			if !strings.HasPrefix(l, "#") {
				keep = append(keep, l)
			}
		}
		return strings.Join(keep, "\n")
	}
	if a, b := uncommented(string(file)), uncommented(printed); a != b {
		t.Errorf("docs/plans/default.yaml is not what plan --print prints (rewrite it with patchbench plan --print, keeping its comments):\n%s", cmp.Diff(a, b))
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
	withRounds := writePlan(t, "version: 1\nrounds: 2\n")
	checkCLI(t, []cliCase{
		{name: "unknown key", args: []string{"run", "--plan", unknown}, exit: 2, stderr: []string{unknown + ":4: unknown key \"idz\" (known keys: dir, domains, ids, limit, sample, sample_seed)"}},
		{name: "unknown top key", args: []string{"plan", top}, exit: 2, stderr: []string{top + ":2: unknown key \"round\"", "rounds"}},
		{name: "a flag the plan sets", args: []string{"run", "--plan", withRounds, "--rounds", "3"}, exit: 2, stderr: []string{"--rounds is set by the plan " + withRounds}},
		{name: "no such plan", args: []string{"run", "--plan", filepath.Join(t.TempDir(), "none.yaml")}, exit: 2, stderr: []string{"--plan:"}},
		{name: "plan without a file", args: []string{"plan"}, exit: 2, stderr: []string{"give a plan file"}},
	})
}

// TestPlanKeyRefusals: every key of a plan is type-checked (an integer
// key takes no 2.5, 2.0 or "2": YAML's floats were cut to integers) and
// checked as run checks its flag, and patchbench plan FILE refuses
// exactly what run --plan FILE refuses (the actors, the case and
// configuration choice, the prompt template included), each refusal
// naming the file, the line and the key.
func TestPlanKeyRefusals(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1") // local: no key needed
	t.Setenv("OPENAI_API_KEY", "")
	tmpl := filepath.Join(t.TempDir(), "p.tmpl")
	os.WriteFile(tmpl, []byte("{{define \"system\"}}s{{end}}{{define \"user\"}}u{{end}}"), 0o644)
	cases := mustAbs(t, exampleCases)
	for _, c := range []struct {
		name, text string
		exit       int
		msg        string // after the file's name; "" for a plan both accept
	}{
		{"version float", "version: 1.9\n", 2, ":1: version: want an integer, got 1.9"},
		{"version string", "version: \"1\"\n", 2, `:1: version: want an integer, got "1"`},
		{"version other", "version: 2\n", 2, ":1: version: must be 1, not 2"},
		{"version missing", "rounds: 2\n", 2, ":1: version: required (version: 1)"},
		{"version null", "version:\nrounds: 2\n", 2, ":1: version: required (version: 1)"},
		{"version zero", "version: 0\n", 2, ":1: version: must be 1, not 0"},
		{"rounds zero", "version: 1\nrounds: 0\n", 2, ":2: rounds: must be at least 1, not 0"},
		{"actors empty", "version: 1\nactors: []\n", 2, ":2: actors: an empty list; leave the key out for the default actors"},
		{"cases.ids empty", "version: 1\ncases: {ids: []}\n", 2, ":2: cases.ids: an empty list; leave the key out for every case"},
		{"cases.domains empty", "version: 1\ncases:\n  domains: []\n", 2, ":3: cases.domains: an empty list; leave the key out for every domain"},
		{"configs.names empty", "version: 1\nconfigs:\n  names: []\n", 2, ":3: configs.names: an empty list; leave the key out for every configuration"},
		{"protocol empty", "version: 1\nprotocol: \"\"\n", 2, ":2: protocol: an empty string; leave the key out for the default"},
		{"cases.dir empty", "version: 1\ncases: {dir: ''}\n", 2, ":2: cases.dir: an empty string; leave the key out for the default"},
		{"unknown top-level key", "version: 1\nactors: [reference]\nround: 2\n", 2, `:3: unknown key "round" (known keys: actors, attack, attack_file, cases, configs, disclosure, limits, prompt_template, protocol, rounds, scale, scale_seed, scoring, settings, version)`},
		{"not a mapping", "[1, 2]\n", 2, ":1: the plan: want a mapping of keys, got a list"},
		{"rounds float", "version: 1\nrounds: 2.5\n", 2, ":2: rounds: want an integer, got 2.5"},
		{"rounds 2.0", "version: 1\nrounds: 2.0\n", 2, ":2: rounds: want an integer, got 2.0"},
		{"rounds string", "version: 1\nrounds: \"2\"\n", 2, `:2: rounds: want an integer, got "2"`},
		{"rounds word", "version: 1\nrounds: many\n", 2, `:2: rounds: want an integer, got "many"`},
		{"rounds negative", "version: 1\nrounds: -1\n", 2, ":2: rounds: must be at least 1, not -1"},
		{"rounds too many", "version: 1\n\nrounds: 20000\n", 2, ":3: rounds: must be at most 10000, not 20000"},
		{"cases scalar", "version: 1\ncases: all\n", 2, `:2: cases: want a mapping of keys, got "all"`},
		{"cases.dir number", "version: 1\ncases:\n  dir: 7\n", 2, ":3: cases.dir: want a string, got 7"},
		{"cases.dir missing", "version: 1\ncases:\n  dir: /nonexistent/cases\n", 2, ":3: cases.dir: stat /nonexistent/cases"},
		{"cases.ids unknown", "version: 1\ncases:\n  dir: " + cases + "\n  ids: [nope]\n", 2, `:4: cases.ids: no case "nope" in the case set`},
		{"cases.ids scalar", "version: 1\ncases:\n  ids: sup-example-refund\n", 2, `:3: cases.ids: want a list of strings, got "sup-example-refund"`},
		{"cases.domains unknown", "version: 1\ncases:\n  domains: [nope]\n", 2, `:3: cases.domains: unknown domain "nope"`},
		{"cases.domains item", "version: 1\ncases:\n  domains:\n    - support\n    - 3\n", 2, ":5: cases.domains: want a list of strings, got 3 as item 2"},
		{"no case matches", "version: 1\ncases: {domains: [support], ids: [fin-expense-review]}\n", 2, ":2: cases.domains: no case of the domains"},
		{"configs.dir missing", "version: 1\nconfigs: {dir: /nonexistent/configs}\n", 2, ":2: configs.dir: "},
		{"configs.names unknown", "version: 1\nconfigs:\n  names: [patchoptic, nope]\n", 2, `:3: configs.names: no configuration "nope"`},
		{"actors twice", "version: 1\nactors: [reference, reference]\n", 2, ":2: actors: reference is given twice"},
		{"actors empty spec", "version: 1\nactors: [\"\"]\n", 2, `:2: actors: unknown actor ""`},
		{"actors bad item line", "version: 1\nactors:\n  - reference\n  - openai:m?temperature=abc\n", 2, `:4: actors: actor "openai:m?temperature=abc": temperature "abc"`},
		{"actors scalar", "version: 1\nactors: reference\n", 2, `:2: actors: want a list of strings, got "reference"`},
		{"actors number", "version: 1\nactors: [reference, 3]\n", 2, ":2: actors: want a list of strings, got 3 as item 2"},
		{"actors role map", "version: 1\ncases: {dir: " + cases + "}\nactors: [reviewer=reference]\n", 2, ":3: actors: reviewer=reference: no actor for the roles agent"},
		{"protocol", "version: 1\nprotocol: xml\n", 2, `:2: protocol: must be json or tools, not "xml"`},
		{"protocol number", "version: 1\nprotocol: 1\n", 2, ":2: protocol: want a string, got 1"},
		{"disclosure", "version: 1\nprotocol: tools\ndisclosure: partial\n", 2, `:3: disclosure: must be whole or progressive, not "partial"`},
		{"settings list", "version: 1\nsettings: [1]\n", 2, ":2: settings: want a mapping of keys, got a list"},
		{"temperature", "version: 1\nsettings:\n  max_retries: 2\n  temperature: 9\n", 2, ":4: settings.temperature: must be in [0, 2], not 9"},
		{"temperature word", "version: 1\nsettings: {temperature: hot}\n", 2, `:2: settings.temperature: want a number, got "hot"`},
		{"max_output_tokens", "version: 1\nsettings: {max_output_tokens: 1.5}\n", 2, ":2: settings.max_output_tokens: want an integer, got 1.5"},
		{"max_output_tokens negative", "version: 1\nsettings: {max_output_tokens: -1}\n", 2, ":2: settings.max_output_tokens: must be at least 0, not -1"},
		{"structured", "version: 1\nsettings: {structured: \"yes\"}\n", 2, `:2: settings.structured: want true or false, got "yes"`},
		{"seed", "version: 1\nsettings: {seed: 1.5}\n", 2, ":2: settings.seed: want an integer, got 1.5"},
		{"timeout", "version: 1\nsettings: {timeout: -5s}\n", 2, `:2: settings.timeout: must be a positive Go duration (90s, 2m), not "-5s"`},
		{"timeout number", "version: 1\nsettings: {timeout: 90}\n", 2, ":2: settings.timeout: want a string, got 90"},
		{"max_retries", "version: 1\nsettings: {max_retries: -1}\n", 2, ":2: settings.max_retries: must be at least 0, not -1"},
		{"rps", "version: 1\nsettings: {rps: 10000000}\n", 2, ":2: settings.rps: must be 0 (no limit) or in [0.001, 1e6], not 1e+07"},
		{"max_attempts float", "version: 1\nlimits:\n  max_attempts: 2.99\n", 2, ":3: limits.max_attempts: want an integer, got 2.99"},
		{"max_attempts zero", "version: 1\nlimits:\n  max_attempts: 0\n", 2, ":3: limits.max_attempts: must be at least 1, not 0"},
		{"max_attempts too many", "version: 1\nlimits:\n  max_attempts: 101\n", 2, ":3: limits.max_attempts: must be at most 100, not 101"},
		{"max_turns", "version: 1\nlimits:\n  max_attempts: 1\n  max_turns: 0\n", 2, ":4: limits.max_turns: must be at least 1, not 0"},
		{"max_turns too many", "version: 1\nlimits: {max_turns: 1001}\n", 2, ":2: limits.max_turns: must be in [1, 1000], not 1001"},
		{"max_tool_calls", "version: 1\nlimits: {max_tool_calls: 10001}\n", 2, ":2: limits.max_tool_calls: must be in [1, 10000], not 10001"},
		{"max_step_bytes", "version: 1\nlimits: {max_step_bytes: 10}\n", 2, ":2: limits.max_step_bytes: must be in [1024, 1073741824], not 10"},
		{"max_answer_bytes", "version: 1\nlimits: {max_answer_bytes: 10}\n", 2, ":2: limits.max_answer_bytes: must be in [1024, 16777216], not 10"},
		{"max_answer_bytes float", "version: 1\nlimits: {max_answer_bytes: 1e6}\n", 2, ":2: limits.max_answer_bytes: want an integer, got 1e6"},
		{"max_tokens_total", "version: 1\nlimits: {max_tokens_total: -1}\n", 2, ":2: limits.max_tokens_total: must be at least 0, not -1"},
		{"pass_threshold", "version: 1\nscoring: {pass_threshold: 2}\n", 2, ":2: scoring.pass_threshold: must be in [0, 1], not 2"},
		{"pass_threshold nan", "version: 1\nscoring: {pass_threshold: .nan}\n", 2, ":2: scoring.pass_threshold: must be in [0, 1], not NaN"},
		{"tokenizer", "version: 1\nscoring: {tokenizer: nope}\n", 2, `:2: scoring.tokenizer: tokenizer "nope"`},
		{"prompt_template device", "version: 1\nprompt_template: /dev/zero\n", 2, ":2: prompt_template: prompt template /dev/zero: larger than"},
		{"prompt_template missing", "version: 1\nprompt_template: /nonexistent.tmpl\n", 2, ":2: prompt_template: "},
		{"prompt_template with tools", "version: 1\nprotocol: tools\nprompt_template: " + tmpl + "\n", 2, ":3: prompt_template: is for the json protocol"},
		{"accepted", "version: 1\ncases: {dir: " + cases + "}\nactors: [reference, openai:m]\nrounds: 2\nsettings: {temperature: 1, rps: 2.5}\nlimits: {max_attempts: 2}\nprompt_template: " + tmpl + "\n", 0, ""},
		{"null is left out", "version: 1\nrounds:\nlimits: {max_attempts: null}\n", 0, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			plan := writePlan(t, c.text)
			_, stderr, code := runCLI(t, cliCase{args: []string{"plan", plan}})
			if code != c.exit || c.msg != "" && !strings.Contains(stderr, "patchbench plan: "+plan+c.msg) {
				t.Errorf("plan: exit %d, want %d with %q:\n%s", code, c.exit, plan+c.msg, stderr)
			}
			if c.exit == 0 {
				return // not run: a plan of live actors
			}
			_, stderr, code = runCLI(t, cliCase{args: []string{"run", "--plan", plan, "--out", filepath.Join(t.TempDir(), "out")}})
			if code != c.exit || !strings.Contains(stderr, "patchbench run: "+plan+c.msg) {
				t.Errorf("run --plan: exit %d, want %d with %q:\n%s", code, c.exit, plan+c.msg, stderr)
			}
		})
	}
}

// TestSpecDefaults: the settings' defaults (runspec's default tags) are
// the ones the runner and the actors fall back to when given none.
func TestSpecDefaults(t *testing.T) {
	d := runspec.Default()
	if d.MaxTurns != runner.DefaultMaxTurns || d.MaxToolCalls != runner.DefaultMaxToolCalls || d.MaxStepBytes != runner.DefaultMaxStepBytes ||
		d.MaxAnswerBytes != actors.DefaultMaxAnswerBytes || d.MaxRetries != actors.DefaultRetry.MaxRetries {
		t.Errorf("runspec.Default() = %+v", d)
	}
}

// TestPlanRelativePaths: a plan's relative cases.dir is read from the
// plan file's directory, while the plan as printed and its digest in the
// manifest keep the path as the file writes it.
func TestPlanRelativePaths(t *testing.T) {
	dir := t.TempDir()
	rel, err := filepath.Rel(dir, mustAbs(t, exampleCases))
	if err != nil {
		t.Skip(err)
	}
	plan := filepath.Join(dir, "p.yaml")
	text := "version: 1\ncases:\n  dir: " + filepath.ToSlash(rel) + "\nactors: [reference]\n"
	os.WriteFile(plan, []byte(text), 0o644)
	p, err := runner.ParsePlan(plan, []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	m := runPlanManifest(t, plan)
	if m.PlanDigest != p.Digest() || m.Cases != 1 {
		t.Errorf("manifest: plan digest %s (want %s), %d cases", m.PlanDigest, p.Digest(), m.Cases)
	}
	printed, _, code := runCLI(t, cliCase{args: []string{"plan", plan}})
	if code != 0 || !strings.Contains(printed, "dir: "+filepath.ToSlash(rel)+"\n") {
		t.Errorf("plan %s: exit %d:\n%s", plan, code, printed)
	}
}

// TestPlanCommaLists: a plan's ids, domains and configuration names are
// read as their flags read them: an item "a, b" is two, blanks trimmed.
func TestPlanCommaLists(t *testing.T) {
	plan := writePlan(t, "version: 1\ncases:\n  dir: "+mustAbs(t, exampleCases)+"\n  ids: [\" sup-example-refund \"]\nconfigs:\n  names: [\"patchoptic, unconstrained\"]\nactors: [reference]\n")
	m := runPlanManifest(t, plan)
	if !slices.Equal(m.CaseIDs, []string{"sup-example-refund"}) || len(m.Configs) != 2 {
		t.Errorf("case ids %q, configs %q", m.CaseIDs, m.Configs)
	}
}

// runPlanManifest runs a plan into a fresh directory and returns the
// manifest it wrote.
func runPlanManifest(t *testing.T, plan string) *rundir.Manifest {
	t.Helper()
	out := filepath.Join(t.TempDir(), "out")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--plan", plan, "--out", out}}); code != 0 {
		t.Fatalf("run --plan: exit %d: %s", code, stderr)
	}
	m, err := rundir.ReadManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
