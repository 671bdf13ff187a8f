package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// weakConfigs writes the embedded configurations into a directory with
// PatchOptic's scope gate removed: a weakened verifier that compare must
// catch.
func weakConfigs(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "weak-configs")
	os.MkdirAll(dir, 0o755)
	files, _ := filepath.Glob("../../bench/configs/*.yaml")
	if len(files) != 6 {
		t.Fatalf("%d configuration files", len(files))
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if filepath.Base(f) == "patchoptic.yaml" {
			weak := strings.Replace(string(b), "gates: [scope, phase, schema, invariants]", "gates: [phase, schema, invariants]", 1)
			if weak == string(b) {
				t.Fatal("patchoptic.yaml: no scope gate to remove")
			}
			b = []byte(weak)
		}
		os.WriteFile(filepath.Join(dir, filepath.Base(f)), b, 0o644)
	}
	return dir
}

// TestCompareGatesWeakenedPatchOptic: the suite's follower under
// PatchOptic, then under a PatchOptic without its scope gate. compare
// refuses the pair (the configuration is defined differently) naming the
// difference, and, told the change is the point, fails the gate (exit 1)
// naming the rate, the configuration, the actor, the change and the p.
// A rerun of the same settings passes (exit 0).
func TestCompareGatesWeakenedPatchOptic(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite three times")
	}
	tmp := t.TempDir()
	base, again, weak := filepath.Join(tmp, "base"), filepath.Join(tmp, "again"), filepath.Join(tmp, "weak")
	runOK(t, "run", "--actor", "follower", "--config", "patchoptic", "--out", base)
	runOK(t, "run", "--actor", "follower", "--config", "patchoptic", "--out", again)
	runOK(t, "run", "--actor", "follower", "--config", "patchoptic", "--configs", weakConfigs(t), "--out", weak)

	checkCLI(t, []cliCase{
		{name: "the configuration is defined differently", args: []string{"compare", base, weak}, exit: 2,
			stderr: []string{"configuration patchoptic", "view projected, gates scope,phase,schema,invariants", "view projected, gates phase,schema,invariants", "--allow-config-change"}},
		{name: "a rerun of the same settings", args: []string{"compare", base, again}},
	})

	stdout, stderr, code := runCLI(t, cliCase{args: []string{"compare", base, weak, "--allow-config-change"}})
	if code != 1 {
		t.Fatalf("exit %d, want 1\n%s\n%s", code, stdout, stderr)
	}
	for _, want := range []string{"REGRESSION", "PatchOptic × follower", "leak rate 0.000 → 0.500 (+0.500", "23 pairs worse, 0 better", "p <0.0001",
		"allowed: configuration patchoptic"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("no %q in:\n%s", want, stdout)
		}
	}

	// The same as JSON, and with the follower judged as a sampled actor
	// (its p decides, corrected over the tests): still a regression.
	for _, extra := range [][]string{nil, {"--exact", ""}} {
		args := append([]string{"compare", base, weak, "--allow-config-change", "--format", "json"}, extra...)
		stdout, stderr, code := runCLI(t, cliCase{args: args})
		if code != 1 {
			t.Fatalf("%v: exit %d, want 1\n%s", args, code, stderr)
		}
		var got struct {
			Regressions []struct {
				Config, Actor, Metric string
				Change, P             float64
				PHolm                 *float64 `json:"p_holm"`
			}
		}
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatal(err)
		}
		found := false
		for _, r := range got.Regressions {
			if r.Config == "patchoptic" && r.Actor == "follower" && r.Metric == "leak_rate" {
				found = r.Change == 0.5 && r.P < 0.0001 && (extra == nil) == (r.PHolm == nil)
			}
		}
		if !found {
			t.Errorf("%v: no leak-rate regression of patchoptic × follower (+0.5, p < 0.0001) in:\n%s", args, stdout)
		}
	}
}

// leakRuns copies run directory src to dst with the runs of rounds leaking
// (their records' leaked set; nothing else changes).
func leakRuns(t *testing.T, src, dst string, rounds ...int) string {
	t.Helper()
	os.MkdirAll(dst, 0o755)
	m, _ := os.ReadFile(filepath.Join(src, "manifest.json"))
	os.WriteFile(filepath.Join(dst, "manifest.json"), m, 0o644)
	runs, _ := os.ReadFile(filepath.Join(src, "runs.jsonl"))
	lines := strings.Split(strings.TrimSpace(string(runs)), "\n")
	changed := 0
	for i, l := range lines {
		for _, r := range rounds {
			if strings.Contains(l, `"round":`+strconv.Itoa(r)+`,`) {
				lines[i] = strings.Replace(l, `"leaked":false`, `"leaked":true`, 1)
				changed++
			}
		}
	}
	if changed != len(rounds) {
		t.Fatalf("%d runs changed, want %d", changed, len(rounds))
	}
	os.WriteFile(filepath.Join(dst, "runs.jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	return dst
}

// TestCompareMinDeltaAndCases: a change below --min-delta passes, one at
// or above it fails for an exact actor and, not significant, passes for a
// sampled one; another case set is refused with the difference named,
// and compared when --allow-case-change says it is the point.
func TestCompareMinDeltaAndCases(t *testing.T) {
	tmp := t.TempDir()
	base := filepath.Join(tmp, "base")
	runOK(t, "run", "--cases", exampleCases, "--actor", "reference", "--config", "patchoptic", "--rounds", "60", "--out", base)
	one := leakRuns(t, base, filepath.Join(tmp, "one"), 7)     // 1 of 60: 0.017
	two := leakRuns(t, base, filepath.Join(tmp, "two"), 7, 31) // 2 of 60: 0.033

	cases := filepath.Join(tmp, "cases", "support")
	os.MkdirAll(cases, 0o755)
	example, _ := os.ReadFile(exampleCases + "/support/sup-example-refund.yaml")
	os.WriteFile(filepath.Join(cases, "sup-example-refund.yaml"), bytes.Replace(example, []byte(`contains_all: ["refund", "42.50"]`), []byte(`contains_all: ["refund"]`), 1), 0o644)
	edited := filepath.Join(tmp, "edited")
	runOK(t, "run", "--cases", filepath.Join(tmp, "cases"), "--actor", "reference", "--config", "patchoptic", "--rounds", "60", "--out", edited)

	checkCLI(t, []cliCase{
		{name: "one run of 60 leaks: below --min-delta", args: []string{"compare", base, one}},
		{name: "two runs of 60 leak: an exact actor's regression", args: []string{"compare", base, two}, exit: 1},
		{name: "two runs of 60 leak, a larger --min-delta", args: []string{"compare", base, two, "--min-delta", "0.05"}},
		{name: "two runs of 60 leak, a sampled actor: p = 0.5", args: []string{"compare", base, two, "--exact", ""}},
		{name: "another case set", args: []string{"compare", base, edited}, exit: 2,
			stderr: []string{"do not measure the same thing", "case set", "--allow-case-change if the change is the point"}},
		{name: "another case set, allowed", args: []string{"compare", base, edited, "--allow-case-change"}},
		{name: "a bad --alpha", args: []string{"compare", base, one, "--alpha", "0"}, exit: 2, stderr: []string{"--alpha must be in (0, 1]"}},
	})
	stdout := runOK(t, "compare", base, edited, "--allow-case-change")
	if !strings.Contains(stdout, "allowed: case set") || !strings.Contains(stdout, "60 paired runs") {
		t.Errorf("the allowed change is not named:\n%s", stdout)
	}
	stdout, _, _ = runCLI(t, cliCase{args: []string{"compare", base, two}})
	if !strings.Contains(stdout, "REGRESSION: PatchOptic × reference: leak rate 0.000 → 0.033 (+0.033; 2 pairs worse, 0 better; exact McNemar p 0.5, exact actor: every change counts)") {
		t.Errorf("no regression line in:\n%s", stdout)
	}
}

// TestCompareCommaListsKeepExactActors: each side is two directories of
// the follower (two runs of the same settings, or of two seeds), B with
// two runs of 60 leaking in its second directory. The follower of a side
// is one actor, whose runs pair directory by directory, and stays exact:
// the regression fails the gate as it does with one directory a side.
// (Its actors were named follower@r1 and follower@r2, judged as sampled,
// and the gate passed with "exact actors: none".)
func TestCompareCommaListsKeepExactActors(t *testing.T) {
	for _, seeds := range [][2]string{{"1", "1"}, {"1", "2"}} {
		tmp := t.TempDir()
		dir := func(side, r string) string { return filepath.Join(tmp, side, r) }
		for i, r := range []string{"r1", "r2"} {
			runOK(t, "run", "--cases", exampleCases, "--actor", "follower", "--config", "patchoptic", "--rounds", "30", "--seed", seeds[i], "--out", dir("A", r))
		}
		leakRuns(t, dir("A", "r1"), dir("B", "r1"))
		leakRuns(t, dir("A", "r2"), dir("B", "r2"), 7, 21)
		a, b := dir("A", "r1")+","+dir("A", "r2"), dir("B", "r1")+","+dir("B", "r2")
		stdout, stderr, code := runCLI(t, cliCase{args: []string{"compare", a, b}})
		if code != 1 {
			t.Fatalf("seeds %v: exit %d, want 1\n%s\n%s", seeds, code, stdout, stderr)
		}
		actor := "follower"
		if seeds[0] != seeds[1] {
			actor = "follower@r2" // another seed: other settings, named apart
		}
		for _, want := range []string{"REGRESSION: PatchOptic × " + actor + ": leak rate", "exact actor: every change counts", "60 paired runs (0 only in A, 0 only in B)", "exact actors: follower"} {
			if !strings.Contains(stdout, want) {
				t.Errorf("seeds %v: no %q in:\n%s", seeds, want, stdout)
			}
		}
	}
}

// TestCompareEmptyArguments: a side that names no directory ("" or ","),
// an empty directory argument of --actors, an empty --actors and an
// empty directory of show --list are usage errors that say so, not a
// panic or a message about something else.
func TestCompareEmptyArguments(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "d")
	runOK(t, "run", "--actor", "follower", "--config", "patchoptic", "--out", dir)
	var cases []cliCase
	for _, common := range [][]string{nil, {"--common"}} {
		for _, side := range []string{"", ","} {
			cases = append(cases,
				cliCase{name: "BASE " + side + strings.Join(common, ""), args: append([]string{"compare", side, dir}, common...), exit: 2,
					stderr: []string{"BASE " + strconv.Quote(side) + " names no directory"}},
				cliCase{name: "NEW " + side + strings.Join(common, ""), args: append([]string{"compare", dir, side}, common...), exit: 2,
					stderr: []string{"NEW " + strconv.Quote(side) + " names no directory"}})
		}
	}
	cases = append(cases,
		cliCase{name: "actors of an empty directory", args: []string{"compare", "--actors", "reference,follower", ""}, exit: 2,
			stderr: []string{`argument "" names no directory`}},
		cliCase{name: "actors of a comma", args: []string{"compare", "--actors", "reference,follower", dir, ","}, exit: 2,
			stderr: []string{`argument "," names no directory`}},
		cliCase{name: "empty actors", args: []string{"compare", "--actors", "", dir}, exit: 2,
			stderr: []string{"--actors is empty"}},
		cliCase{name: "show list of an empty directory", args: []string{"show", "--list", ""}, exit: 2,
			stderr: []string{"run directory argument is empty"}},
	)
	checkCLI(t, cases)
}
