package main

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const reportExamples = `  # Every table of a run directory, for the terminal:
  patchbench report results/run-1a2b3c4d5e

  # Markdown for a paper draft, with the paper's figures beside ours:
  patchbench report results/run-1a2b3c4d5e --format markdown --paper

  # LaTeX, CSV or JSON:
  patchbench report results/run-1a2b3c4d5e --format latex

  # PNG charts of leak rate, semantic pass and tokens per configuration:
  patchbench report results/run-1a2b3c4d5e --plots results/run-1a2b3c4d5e/plots
`

// runReport prints the tables of a run directory, recomputed from its
// records as they are read.
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", "patchbench report DIR [--format text|markdown|csv|latex|json] [--paper] [--baseline NAME] [--plots DIR]", reportExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text, markdown, csv, latex or json")
	paper := fs.Bool("paper", false, "add a table of the paper's figures beside ours (PatchBench design §1)")
	baseline := fs.String("baseline", "patchoptic", "the configuration `name` the paired tests compare the others against")
	plots := fs.String("plots", "", "also write PNG charts (leak rate, semantic pass, tokens per configuration) into this `dir`")
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fs.usageError("give the run directory")
	}
	if !slices.Contains(report.Formats, *format) {
		return fs.usageError("--format must be text, markdown, csv, latex or json, not %q", *format)
	}
	d, err := rundir.Read(pos[0])
	if err != nil {
		return failf(stderr, "report", "%v", err)
	}
	configs := d.Manifest.Configurations()
	var names []string
	for _, c := range configs {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, *baseline) {
		return fs.usageError("--baseline: no configuration %q in %s (names: %s)", *baseline, d.Path, strings.Join(names, ", "))
	}
	b := report.NewBuilder(configs, d.Manifest.Actors, *baseline)
	if err := d.Each(func(r *rundir.Record) error { b.Add(r); return nil }); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	rep := b.Report()
	rep.Summary.RunsExpected = d.Manifest.ExpectedRuns
	rep.Summary.Complete = b.Summarizer().Settled() >= d.Manifest.ExpectedRuns
	if !rep.Summary.Complete {
		warnIncomplete(d, b.Summarizer(), stderr)
	}
	if *paper {
		rep.Tables = append(rep.Tables, report.PaperTable(rep.Summary))
	}
	if err := report.Render(stdout, rep, *format); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	if *plots != "" {
		files, err := report.WritePlots(*plots, rep.Summary, configs, d.Manifest.Actors)
		if err != nil {
			return failf(stderr, "report", "%v", err)
		}
		for _, f := range files {
			fmt.Fprintf(stderr, "wrote %s\n", f)
		}
	}
	return exitOK
}

// warnIncomplete says why a run directory holds fewer settled runs than
// its settings call for: runs that wait for answers, or an interruption.
func warnIncomplete(d *rundir.Dir, s *report.Summarizer, stderr io.Writer) {
	m := d.Manifest
	if n := s.Recorded() - s.Settled(); n > 0 {
		fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %s of %d wait for answers (pending: answer the file actor's requests, listed by \"patchbench pending DIR\", then run the same command again); %d recorded with an outcome\n",
			d.Path, report.PluralOf(n, "run", "runs"), m.ExpectedRuns, s.Settled())
		return
	}
	fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %d of %d runs recorded (interrupted? run the same command again to finish it)\n", d.Path, s.Recorded(), m.ExpectedRuns)
}
