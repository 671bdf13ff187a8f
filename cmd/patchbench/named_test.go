package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestActorDisplayName: an actor given as SPEC#name=NAME is recorded,
// shown and paired under NAME (report, compare --actors, the browser's
// pages), while the manifest keeps its spec whole; a resume that gives
// the name another spec is refused.
func TestActorDisplayName(t *testing.T) {
	dir := t.TempDir()
	agent := filepath.Join(dir, "a", "rather", "long", "path", "to", "agent.sh")
	if err := os.MkdirAll(filepath.Dir(agent), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(agent, []byte("#!/bin/sh\ncat >/dev/null\necho '{\"text\": \"I would rather not.\"}'\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	spec := "exec:sh " + agent
	out := filepath.Join(dir, "run")
	run := []string{"run", "--cases", exampleCases, "--config", "patchoptic", "--actor", "reference", "--actor", spec + "#name=my-agent", "--out", out}
	if stdout, stderr, code := runCLI(t, cliCase{args: run}); code != 0 {
		t.Fatalf("exit %d\n%s%s", code, stdout, stderr)
	}
	b, err := os.ReadFile(filepath.Join(out, "manifest.json"))
	if err != nil {
		t.Fatal(err)
	}
	var m struct {
		Actors     []string          `json:"actors"`
		ActorSpecs map[string]string `json:"actor_specs"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if strings.Join(m.Actors, ",") != "reference,my-agent" || len(m.ActorSpecs) != 1 || m.ActorSpecs["my-agent"] != spec {
		t.Errorf("manifest: actors %q, actor_specs %q", m.Actors, m.ActorSpecs)
	}
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if !strings.Contains(string(runs), `/my-agent/1"`) || strings.Contains(string(runs), agent) {
		t.Errorf("the runs are not recorded under the name:\n%.600s", runs)
	}
	stdout, _, code := runCLI(t, cliCase{args: []string{"report", out}})
	if code != 0 || !strings.Contains(stdout, "│ my-agent ") || strings.Contains(stdout, agent) {
		t.Errorf("report: exit %d, the name not in the table, or the spec in it:\n%s", code, stdout)
	}
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"compare", "--actors", "reference,my-agent", out}})
	if code != 0 || !strings.Contains(stdout, "my-agent (B) against reference (A)") {
		t.Errorf("compare --actors: exit %d\n%s%s", code, stdout, stderr)
	}
	stdout, _, code = runCLI(t, cliCase{args: []string{"report", "--format", "html", out}})
	if code != 0 || !strings.Contains(stdout, "my-agent (exec:sh ") {
		t.Errorf("report --format html: exit %d, the overview does not name the actor with its spec", code)
	}
	// The same name for another program is another setting.
	other := []string{"run", "--cases", exampleCases, "--config", "patchoptic", "--actor", "reference", "--actor", "exec:sh " + agent + " x#name=my-agent", "--out", out}
	if _, stderr, code := runCLI(t, cliCase{args: other}); code == 0 || !strings.Contains(stderr, "actor_specs") {
		t.Errorf("a resume naming another spec my-agent: exit %d\n%s", code, stderr)
	}
	checkCLI(t, []cliCase{
		{name: "one name twice", args: []string{"run", "--actor", "reference", "--actor", "oversharer#name=reference", "--out", filepath.Join(dir, "dup")}, exit: 2, stderr: []string{"another actor is named reference"}},
		{name: "a bad name", args: []string{"run", "--actor", "oversharer#name=my agent", "--out", filepath.Join(dir, "bad")}, exit: 2, stderr: []string{"may hold only letters"}},
		{name: "names swapped", args: []string{"run", "--actor", "reference#name=follower", "--actor", "follower#name=reference", "--out", filepath.Join(dir, "swap")}, exit: 2,
			stderr: []string{`the name "follower" is the spec of another actor of the run`}},
		{name: "a no-model actor's name", args: []string{"run", "--actor", "oversharer#name=bulk", "--out", filepath.Join(dir, "bulk")}, exit: 2,
			stderr: []string{`the name "bulk" is the no-model actor bulk's`}},
		{name: "a name twice", args: []string{"run", "--actor", "reference#name=x#name=y", "--out", filepath.Join(dir, "twice")}, exit: 2,
			stderr: []string{"the name mark #name= is given twice"}},
	})
}
