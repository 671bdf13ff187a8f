package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/benchload"
)

// TestRunAndEqual: the runtime's run on a small state commits every step
// and reports its figures; equal tells the final state from the state
// before the steps.
func TestRunAndEqual(t *testing.T) {
	dir := t.TempDir()
	if err := writeContract(dir); err != nil {
		t.Fatal(err)
	}
	state := filepath.Join(dir, "state-small.json")
	if err := os.WriteFile(state, benchload.State(20<<10), 0o644); err != nil {
		t.Fatal(err)
	}
	final := filepath.Join(dir, "final.json")
	var out, errb bytes.Buffer
	if code := run([]string{"run", "-dir", dir, "-size", "small", "-steps", "3", "-out", final}, &out, &errb); code != 0 {
		t.Fatalf("run: exit %d: %s", code, errb.String())
	}
	var f figures
	if err := json.Unmarshal(out.Bytes(), &f); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if f.Stack != "runtime" || f.Steps != 3 || f.ParseNS <= 0 || f.FirstNS <= 0 || f.StepNS <= 0 || f.MaxRSSKiB <= 0 || f.FinalBytes <= f.TextBytes {
		t.Errorf("figures %+v", f)
	}
	if code := run([]string{"equal", final, final}, &out, &errb); code != 0 {
		t.Errorf("equal of a file with itself: exit %d", code)
	}
	if code := run([]string{"equal", final, state}, &out, &errb); code != 1 {
		t.Errorf("equal of the final state and the first: exit %d, want 1", code)
	}
	respaced := filepath.Join(dir, "respaced.json")
	text, _ := os.ReadFile(final)
	text = bytes.Replace(text, []byte(`"total":1234.5`), []byte(`"total" : 12345e-1`), 1)
	if err := os.WriteFile(respaced, text, 0o644); err != nil {
		t.Fatal(err)
	}
	if code := run([]string{"equal", final, respaced}, &out, &errb); code != 0 {
		t.Errorf("equal of the same value spelled otherwise: exit %d", code)
	}
}

// TestTable: the table holds medians over the rounds, ratios to the
// runtime, and the targets.
func TestTable(t *testing.T) {
	lines := []figures{
		{Stack: "runtime", Size: "6MB", TextBytes: 6e6, ParseNS: 40e6, FirstNS: 30e6, StepNS: 100e3, MaxRSSKiB: 100 << 10},
		{Stack: "runtime", Size: "6MB", TextBytes: 6e6, ParseNS: 60e6, FirstNS: 10e6, StepNS: 90e3, MaxRSSKiB: 100 << 10},
		{Stack: "runtime", Size: "6MB", TextBytes: 6e6, ParseNS: 50e6, FirstNS: 20e6, StepNS: 200e3, MaxRSSKiB: 100 << 10},
		{Stack: "node", Size: "6MB", TextBytes: 6e6, ParseNS: 100e6, FirstNS: 80e6, StepNS: 80e6, MaxRSSKiB: 300 << 10},
		{Stack: "runtime-base", Size: "6MB", TextBytes: 6e6, ParseNS: 300e6, FirstNS: 70e6, StepNS: 100e3, MaxRSSKiB: 180 << 10},
	}
	var in bytes.Buffer
	for _, l := range lines {
		b, _ := json.Marshal(l)
		in.Write(append(b, '\n'))
	}
	name := filepath.Join(t.TempDir(), "figures.jsonl")
	if err := os.WriteFile(name, in.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := table(name, &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| at 6MB | runtime before | PatchBench runtime | Node rfc6902 + ajv |",
		"| one step on a committed state (median) | 100 µs (×1.00) | 100 µs | 80.0 ms (×800) |",
		"| first step on a freshly parsed state | 70.0 ms (×3.50) | 20.0 ms | 80.0 ms (×4.00) |",
		"| parsing the state | 300.0 ms (×6.00) | 50.0 ms | 100.0 ms (×2.00) |",
		"| peak RSS | 180 MiB (×1.80) | 100 MiB | 300 MiB (×3.00) |",
		"first step at 6 MB: 20.0 ms, the fastest peer's (Node rfc6902 + ajv) 80.0 ms: ×0.25 (target ≤ 0.5): met",
		"parsing 6 MB: 300.0 ms before, 50.0 ms after: 6.00× faster (target ≥ 3): met",
	} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("no line %q in\n%s", want, out.String())
		}
	}
}
