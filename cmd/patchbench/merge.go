package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const mergeExamples = `  # Merge the shards of one run into one directory:
  patchbench merge --out results/all results/shard0 results/shard1

  # Shard 2/3 was lost: merge the two others, a run without its runs:
  patchbench merge --allow-missing --out results/most results/shard0 results/shard1
`

// runMerge merges shard directories of one run into one directory with
// its summary (rundir.MergeThen: the directory appears whole, or not at
// all); it refuses directories whose manifests disagree on anything but
// the shard and the times, and shards of series of different sizes.
func runMerge(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("merge", "patchbench merge --out DIR [--allow-missing] DIR...", mergeExamples, stdout, stderr)
	out := fs.String("out", "", "the merged run `dir` (must not exist, or be empty; it appears whole when the merge ends)")
	allowMissing := fs.Bool("allow-missing", false, "merge the shards given when some of their series are missing (refused otherwise): the merged run lacks their runs, and report says so")
	pos, err := fs.parseWithArgs(args, 1<<20)
	if err != nil {
		return fs.exit(err)
	}
	if *out == "" || len(pos) == 0 {
		return fs.usageError("give --out and at least one run directory")
	}
	merged, err := rundir.MergeWith(ctx, *out, pos, rundir.MergeOptions{AllowMissing: *allowMissing, Finish: writeSummary})
	if ctx.Err() != nil {
		return failf(stderr, "merge", "interrupted; nothing was merged into %s, and the same command can be run again", *out)
	}
	if err != nil {
		return failf(stderr, "merge", "%v", err)
	}
	if merged.Missing != "" {
		fmt.Fprintf(stderr, "patchbench merge: warning: shards %s are missing; the merged run is incomplete\n", merged.Missing)
	}
	fmt.Fprintf(stdout, "merged %s from %s into %s\n", report.Plural(merged.Runs, "run"), report.PluralOf(len(pos), "directory", "directories"), *out)
	return exitOK
}

// writeSummary writes the summary.json of the directory being merged, dir, from its
// records as they are read back: complete when no shard is missing and
// every expected run has an outcome.
func writeSummary(dir string, merged *rundir.Merged) error {
	m := merged.Manifest
	s := report.NewSummarizer(m.Configurations(), m.Actors)
	if err := rundir.Latest(filepath.Join(dir, rundir.RunsFile), func(r *rundir.Record) error { s.Add(r); return nil }); err != nil {
		return err
	}
	summary := s.Summary()
	summary.RunsExpected, summary.RunsExpectedUnknown = m.ExpectedRuns, m.ExpectedRunsUnknown
	summary.Complete = merged.Missing == "" && !m.ExpectedRunsUnknown && merged.Outcomes >= m.ExpectedRuns
	return rundir.WriteJSON(dir, rundir.SummaryFile, summary)
}
