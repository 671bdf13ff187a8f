package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const repairExamples = `  # A run directory every command refuses (a damaged line of runs.jsonl,
  # a manifest.json cut short): keep every intact record, then go on:
  patchbench repair results/run-0123456789
  patchbench report results/run-0123456789
`

// runRepair makes a damaged run directory readable again (rundir.Repair):
// it names every line it sets aside with its line and byte offset, says
// what it did to the manifest, and writes summary.json again from the
// records kept.
func runRepair(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("repair", "patchbench repair DIR", repairExamples, stdout, stderr)
	pos, err := fs.parseWithArgs(args, 1)
	if err != nil {
		return fs.exit(err)
	}
	if len(pos) != 1 {
		return fs.usageError("give the run directory")
	}
	dir := pos[0]
	res, err := rundir.Repair(ctx, dir)
	if ctx.Err() != nil {
		return failf(stderr, "repair", "interrupted; %s and %s are as they were, and the same command can be run again", rundir.RunsFile, rundir.DroppedFile)
	}
	if err != nil {
		return failf(stderr, "repair", "%v", err)
	}
	runs := filepath.Join(dir, rundir.RunsFile)
	for _, d := range res.Dropped {
		fmt.Fprintf(stdout, "%s:%d: dropped (byte offset %d, %s): %s\n", runs, d.Line, d.Offset, report.Plural(d.Bytes, "byte"), report.Printable(d.Reason))
	}
	var me *rundir.ManifestError
	switch {
	case errors.As(res.ManifestError, &me) && me.Member != "":
		fmt.Fprintf(stdout, "%s:%d: damaged: %q %v (byte offset %d)\n", me.Path, me.Line, me.Member, me.Err, me.Offset)
	case errors.As(res.ManifestError, &me):
		fmt.Fprintf(stdout, "%s:%d: damaged: %v (byte offset %d)\n", me.Path, me.Line, me.Err, me.Offset)
	case errors.Is(res.ManifestError, os.ErrNotExist):
		fmt.Fprintf(stdout, "%s: missing: %v\n", filepath.Join(dir, rundir.ManifestFile), res.ManifestError)
	case res.ManifestError != nil:
		fmt.Fprintf(stdout, "%v\n", res.ManifestError)
	}
	switch res.Manifest {
	case "restored":
		fmt.Fprintf(stdout, "%s: restored from its backup %s\n", filepath.Join(dir, rundir.ManifestFile), rundir.ManifestBackupFile)
	case "rebuilt":
		fmt.Fprintf(stdout, "%s: rebuilt from what could be read of it and from the records (%s taken from the records)\n",
			filepath.Join(dir, rundir.ManifestFile), orNone(res.Rebuilt))
		if len(res.Lost) > 0 {
			fmt.Fprintf(stdout, "settings lost: %s; every command reads the directory, but a run will not resume it\n", strings.Join(res.Lost, ", "))
		}
		if d, err := rundir.ReadManifest(dir); err == nil && d.ExpectedRunsUnknown {
			fmt.Fprintf(stdout, "runs expected: unknown (the records show the runs done, not those missing); report says so in every table\n")
		}
	}
	if res.Finished {
		fmt.Fprintf(stdout, "finished a repair that a killed process had written but not put in place\n")
	}
	if len(res.Removed) > 0 {
		fmt.Fprintf(stdout, "removed temporary files a killed process left: %s\n", strings.Join(res.Removed, ", "))
	}
	if !res.Changed() {
		fmt.Fprintf(stdout, "%s needs no repair: %s intact\n", dir, report.Plural(res.Kept, "record"))
		return exitOK
	}
	if err := writeDirSummary(dir); err != nil {
		return failf(stderr, "repair", "%v", err)
	}
	fmt.Fprintf(stdout, "repaired %s: kept %s", dir, report.Plural(res.Kept, "record"))
	if len(res.Dropped) > 0 {
		fmt.Fprintf(stdout, ", set %s aside in %s", report.Plural(len(res.Dropped), "line"), filepath.Join(dir, rundir.DroppedFile))
	}
	fmt.Fprintf(stdout, "; summary.json written again\n")
	return exitOK
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	return strings.Join(xs, ", ")
}

// writeDirSummary writes a run directory's summary.json from its records,
// as run does: complete when every expected run has an outcome.
func writeDirSummary(dir string) error {
	d, err := rundir.Read(dir)
	if err != nil {
		return err
	}
	m := d.Manifest
	s := report.NewSummarizer(m.Configurations(), m.Actors)
	outcomes := 0
	if err := d.Each(func(r *rundir.Record) error {
		s.Add(r)
		if r.HasOutcome() {
			outcomes++
		}
		return nil
	}); err != nil {
		return err
	}
	summary := s.Summary()
	summary.RunsExpected, summary.RunsExpectedUnknown = m.ExpectedRuns, m.ExpectedRunsUnknown
	summary.Complete = m.ExpectedRuns > 0 && !m.ExpectedRunsUnknown && outcomes >= m.ExpectedRuns
	return rundir.WriteJSON(dir, rundir.SummaryFile, summary)
}
