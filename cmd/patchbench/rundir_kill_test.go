package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestRepairedWithoutManifestSaysExpectedUnknown: what a merge killed
// before its manifest left (half the records, no manifest, no backup),
// repaired, reads; repair says the runs expected are unknown, and every
// table of report, in every format, says so, as does summary.json, which
// is not complete. (The rebuilt manifest said expected_runs 0, and report
// never mentioned the runs missing.)
func TestRepairedWithoutManifestSaysExpectedUnknown(t *testing.T) {
	tmp := t.TempDir()
	full, dir := filepath.Join(tmp, "full"), filepath.Join(tmp, "killed")
	runOK(t, "run", "--cases", exampleCases, "--actor", "reference", "--config", "patchoptic,unconstrained", "--rounds", "4", "--out", full)
	b, err := os.ReadFile(filepath.Join(full, "runs.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	os.MkdirAll(dir, 0o755)
	os.WriteFile(filepath.Join(dir, "runs.jsonl"), []byte(strings.Join(lines[:3], "")), 0o644)

	stdout := runOK(t, "repair", dir)
	if !strings.Contains(stdout, "runs expected: unknown") {
		t.Errorf("repair does not say the runs expected are unknown:\n%s", stdout)
	}
	var summary struct {
		Complete bool `json:"complete"`
		Unknown  bool `json:"runs_expected_unknown"`
	}
	sb, _ := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err := json.Unmarshal(sb, &summary); err != nil || summary.Complete || !summary.Unknown {
		t.Errorf("summary.json: %s %v", sb, err)
	}
	for _, format := range []string{"text", "markdown", "latex", "json"} {
		stdout, stderr, code := runCLI(t, cliCase{args: []string{"report", dir, "--format", format}})
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", format, code, stderr)
		}
		if !strings.Contains(stderr, "runs expected: unknown for "+dir) {
			t.Errorf("%s: stderr says nothing of the runs expected:\n%s", format, stderr)
		}
		titles := strings.Count(stdout, "(runs expected: unknown)")
		var tables int
		switch format {
		case "text":
			tables = strings.Count(stdout, "┌")
		case "markdown":
			tables = strings.Count(stdout, "### ")
		case "latex":
			tables = strings.Count(stdout, `\caption{`)
		case "json":
			var rep struct {
				Tables  []struct{ Title string }
				Summary struct {
					Unknown bool `json:"runs_expected_unknown"`
				}
			}
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil || !rep.Summary.Unknown {
				t.Errorf("json: %v, summary not marked", err)
			}
			tables = len(rep.Tables)
		}
		if tables < 2 || titles != tables {
			t.Errorf("%s: %d of %d tables say the runs expected are unknown:\n%s", format, titles, tables, stdout)
		}
	}
	// CSV holds the figures alone: standard error says it.
	_, stderr, code := runCLI(t, cliCase{args: []string{"report", dir, "--format", "csv"}})
	if code != 0 || !strings.Contains(stderr, "runs expected: unknown") {
		t.Errorf("csv: exit %d: %s", code, stderr)
	}
}
