package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/rundir"
)

// growingCases are the embedded cases with a grow list.
var growingCases = "mkt-crm-segment-export,fin-fraud-alert-triage,med-pharmacy-refill,sci-cryoem-booking," +
	"sci-field-sample-registry,sw-crash-triage,sup-complaint-triage"

// TestScaleSuiteAt1MB runs the growing cases grown to 1 MB, the largest
// size CI affords, as a user at scale does (tools protocol, an outline
// first): validate passes every rule on them grown; the reference, whose
// proposal grows with the state, passes without a leak or an illegal
// commit; and the bulk actor's whole-record copies leak where nothing
// checks a patch's sources and are stopped where the patch-source gate
// runs (Verify Only, PatchOptic). Three configurations: the two ends and
// Verify Only, the full state under PatchOptic's gates, where the
// patch-source gate stops the bulk actor without a projected view. The
// other three each run a subset of bench.AllGates, with all of which
// validate has just run the reference over the same grown states.
func TestScaleSuiteAt1MB(t *testing.T) {
	if testing.Short() {
		t.Skip("grows seven cases to 1 MB and runs them 42 times")
	}
	if _, stderr, code := runCLI(t, cliCase{args: []string{"validate", "--scale", "1MB"}}); code != 0 {
		t.Fatalf("validate --scale 1MB: exit %d: %s", code, stderr)
	}
	dir := filepath.Join(t.TempDir(), "out")
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--case", growingCases, "--scale", "1MB", "--protocol", "tools",
		"--disclosure", "progressive", "--actor", "reference", "--actor", "bulk", "--config", "unconstrained,verify-only,patchoptic", "--progress", "0", "--out", dir}})
	if code != 0 {
		t.Fatalf("run: exit %d: %s", code, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, rundir.RunsFile))
	if err != nil {
		t.Fatal(err)
	}
	runs, bulkLeaked := 0, map[string]int{}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var r rundir.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		runs++
		if r.Scale != "1MB" {
			t.Errorf("%s: recorded at scale %q", r.RunID, r.Scale)
		}
		switch r.Actor {
		case "reference":
			if r.Status != "passed" || r.Leaked || len(r.IllegalCommits) > 0 || !r.SemanticPass {
				t.Errorf("%s: reference %s, leaked %v, %d illegal commits, semantic pass %v", r.RunID, r.Status, r.Leaked, len(r.IllegalCommits), r.SemanticPass)
			}
		case "bulk":
			if r.Leaked {
				bulkLeaked[r.Config]++
			}
			if (r.Config == "verify-only" || r.Config == "patchoptic") && (r.Leaked || len(r.IllegalCommits) > 0) {
				t.Errorf("%s: bulk leaked %v with %d illegal commits past the patch-source gate", r.RunID, r.Leaked, len(r.IllegalCommits))
			}
		}
	}
	if runs != 42 {
		t.Errorf("%d runs, want 7 cases x 3 configurations x 2 actors", runs)
	}
	if bulkLeaked["unconstrained"] < 3 {
		t.Errorf("bulk leaked in %d growing cases under Unconstrained, want at least 3 (its whole-record copies carry hidden members)", bulkLeaked["unconstrained"])
	}
}
