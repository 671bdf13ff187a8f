package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/runner"
)

const compareExamples = `  # Runs that passed before a verifier change and fail after it:
  patchbench compare results/before results/after

  # As JSON:
  patchbench compare results/before results/after --format json
`

// Regression is a run that passed in A and did not pass in B.
type Regression struct {
	RunID   string `json:"run_id"`
	StatusA string `json:"status_a"`
	StatusB string `json:"status_b"`
	LeakedB bool   `json:"leaked_b"`
}

// runCompare pairs the runs of two run directories by run id and lists
// those that passed in A and fail (or error) in B. Exit 1 if any.
func runCompare(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "patchbench compare A B [--format text|json]", compareExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	pos, code, ok := fs.parseWithArgs(args, 2)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return fs.usageError("give two run directories")
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	_, a, err := readRunDir(pos[0])
	if err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	_, b, err := readRunDir(pos[1])
	if err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	inB := map[string]*runner.Record{}
	for _, r := range b {
		inB[r.RunID] = r
	}
	paired, fixed := 0, 0
	regs := []Regression{}
	for _, r := range a {
		o, ok := inB[r.RunID]
		if !ok {
			continue
		}
		paired++
		switch {
		case r.Status == runner.StatusPassed && o.Status != runner.StatusPassed:
			regs = append(regs, Regression{RunID: r.RunID, StatusA: r.Status, StatusB: o.Status, LeakedB: o.Leaked})
		case r.Status != runner.StatusPassed && o.Status == runner.StatusPassed:
			fixed++
		}
	}
	if paired == 0 {
		return failf(stderr, "compare", "%s and %s share no run: nothing to compare", pos[0], pos[1])
	}
	// A run that passed in A and is missing from B (B stopped early) is a
	// regression too.
	for _, r := range a {
		if _, ok := inB[r.RunID]; !ok && r.Status == runner.StatusPassed {
			regs = append(regs, Regression{RunID: r.RunID, StatusA: r.Status, StatusB: "missing"})
		}
	}
	sort.Slice(regs, func(i, j int) bool { return regs[i].RunID < regs[j].RunID })
	if *format == "json" {
		out, _ := json.MarshalIndent(map[string]any{"paired": paired, "fixed": fixed, "only_a": len(a) - paired, "only_b": len(b) - paired, "regressions": regs}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
	} else {
		for _, r := range regs {
			leak := ""
			if r.LeakedB {
				leak = " (leaked)"
			}
			fmt.Fprintf(stdout, "regression: %s: %s in A, %s in B%s\n", r.RunID, r.StatusA, r.StatusB, leak)
		}
		fmt.Fprintf(stdout, "%d paired runs: %d passed in A and not in B, %d the other way; %d runs only in A, %d only in B\n",
			paired, len(regs), fixed, len(a)-paired, len(b)-paired)
	}
	if len(regs) > 0 {
		return exitNegative
	}
	return exitOK
}

const mergeExamples = `  # Merge the shards of one run into one directory:
  patchbench merge --out results/all results/shard0 results/shard1
`

// runMerge merges shard directories of one run into one directory; it
// refuses directories whose manifests disagree on anything but the shard
// and the times.
func runMerge(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", "patchbench merge --out DIR DIR...", mergeExamples, stdout, stderr)
	out := fs.String("out", "", "the merged run `dir` (must not hold runs yet)")
	pos, code, ok := fs.parseWithArgs(args, 1<<20)
	if !ok {
		return code
	}
	if *out == "" || len(pos) == 0 {
		return fs.usageError("give --out and at least one run directory")
	}
	if _, err := os.Stat(filepath.Join(*out, runner.RunsFile)); err == nil {
		return failf(stderr, "merge", "%s already holds runs; merge into a new directory", *out)
	}
	var first *Manifest
	shards := map[string]bool{}
	expected := 0
	seen := map[string]bool{}
	var all []*runner.Record
	for _, dir := range pos {
		m, recs, err := readRunDir(dir)
		if err != nil {
			return failf(stderr, "merge", "%v", err)
		}
		if shards[m.Shard] {
			if m.Shard == "" {
				return failf(stderr, "merge", "%s: two unsharded directories of one run; merge shards (run --shard i/n)", dir)
			}
			return failf(stderr, "merge", "%s: shard %s is given twice", dir, m.Shard)
		}
		shards[m.Shard] = true
		expected += m.ExpectedRuns
		k := *m
		k.Shard = ""
		if first == nil {
			first = &k
		} else if first.key() != k.key() {
			return failf(stderr, "merge", "%s holds a run with other settings than %s; only shards of one run merge", dir, pos[0])
		}
		for _, r := range recs {
			if !seen[r.RunID] {
				seen[r.RunID] = true
				all = append(all, r)
			}
		}
	}
	sink, err := runner.OpenSink(*out, -1)
	if err != nil {
		return failf(stderr, "merge", "%v", err)
	}
	for _, r := range all {
		if err := sink.Write(r); err != nil {
			sink.Close()
			return failf(stderr, "merge", "%v", err)
		}
	}
	sink.Close()
	// The shards' expected counts add up to the whole run's when every
	// shard is there.
	missing := missingShards(shards)
	first.ExpectedRuns = expected
	if err := runner.WriteJSON(*out, runner.ManifestFile, first); err != nil {
		return failf(stderr, "merge", "%v", err)
	}
	summary := runner.Summarize(all, first.configs(), first.Actors)
	summary.RunsExpected, summary.Complete = expected, missing == "" && settled(all) >= expected
	if err := runner.WriteJSON(*out, runner.SummaryFile, summary); err != nil {
		return failf(stderr, "merge", "%v", err)
	}
	if missing != "" {
		fmt.Fprintf(stderr, "patchbench merge: warning: shards %s are missing; the merged run is incomplete\n", missing)
	}
	fmt.Fprintf(stdout, "merged %s from %s into %s\n", plural(len(all), "run"), pluralOf(len(pos), "directory", "directories"), *out)
	return exitOK
}

// missingShards lists the shards of an i/n series not among those given
// ("1/3, 2/3"), or "" when none is missing or no shard was given.
func missingShards(given map[string]bool) string {
	n := 0
	for s := range given {
		if _, of, ok := strings.Cut(s, "/"); ok {
			fmt.Sscan(of, &n)
		}
	}
	if n > maxShards {
		return fmt.Sprintf("(%d shards: too many to list)", n)
	}
	var missing []string
	for i := 0; i < n; i++ {
		if !given[fmt.Sprintf("%d/%d", i, n)] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	return strings.Join(missing, ", ")
}
