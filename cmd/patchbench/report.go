package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const reportExamples = `  # Every table of a run directory, for the terminal (a table wider than
  # 120 columns narrowed; --wide for every column and interval):
  patchbench report results/run-1a2b3c4d5e

  # Two models run on different days, as one comparison:
  patchbench report results/gpt-5-mini results/mistral

  # Markdown for a paper draft, with every figure of the paper beside ours:
  patchbench report results/run-1a2b3c4d5e --format markdown --paper

  # The paper's Mistral 7B rows from a stand-in panel answered through files:
  patchbench report results/panel --paper --paper-map mistral-7b=files:panel

  # LaTeX tables (booktabs, caption, label), intervals in their own columns:
  patchbench report results/run-1a2b3c4d5e --format latex --ci-columns

  # CSV for pandas, one table at a time (main, attacks, leak-kinds,
  # leak-mechanisms, illegal, rejections, domains, mcnemar, reliability, paper):
  patchbench report results/run-1a2b3c4d5e --format csv --table attacks

  # Every table as CSV files in a folder, with the tidy long.csv (one row per
  # configuration x actor x metric; --format json for the same as JSON):
  patchbench report results/run-1a2b3c4d5e --format csv --all tables

  # pass^k and pass@k over rounds (all of k rounds of a case succeed, or
  # at least one), k = 1 .. the rounds run:
  patchbench report results/run-1a2b3c4d5e --table reliability

  # Leaked runs by the mechanism of the pull each leak answered
  # (context, policy, injection; leak-kinds: by secret kind):
  patchbench report results/run-1a2b3c4d5e --table leak-mechanisms

  # The overview and every run page as one self-contained HTML file (a few
  # megabytes; secrets withheld unless --reveal):
  patchbench report results/run-1a2b3c4d5e --format html > report.html

  # Figures for a paper (PNG, SVG or PDF; one-column or two-column):
  patchbench report results/run-1a2b3c4d5e --plots figures --plot-format pdf --plot-size two-column
`

// textWidth is the width text tables are narrowed to on w: 0 when wide
// (the tables whole), else report.TextWidth, or the terminal's width when
// w is a terminal narrower than that.
func textWidth(w io.Writer, wide bool) int {
	if wide {
		return 0
	}
	if ok, cols := terminal(w); ok && cols < report.TextWidth {
		return cols
	}
	return report.TextWidth
}

// baseNames are the files' names without their directory.
func baseNames(files []string) []string {
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = filepath.Base(f)
	}
	return out
}

// reportFormats are report's formats: report.Formats and html.
var reportFormats = append(slices.Clone(report.Formats), "html")

// commonUsage is the help of report's, browse's and compare's --common.
const commonUsage = "read directories of different case sets over the cases all of them hold; standard error says what is left out of each"

// readSet reads the directories at paths as one comparison
// (rundir.ReadSet); with common, over the cases all of them hold
// (rundir.ReadSetCommon), saying on stderr, as cmd, what it left out of
// each directory.
func readSet(paths []string, common bool, cmd string, stderr io.Writer) (*rundir.Set, error) {
	if !common {
		set, err := rundir.ReadSet(paths)
		return set, commonHint(err)
	}
	set, lost, err := rundir.ReadSetCommon(paths)
	if err != nil {
		return nil, err
	}
	sayLeftOut(stderr, cmd, lost)
	return set, nil
}

// commonHint adds to a refusal of directories whose case ids differ
// that --common reads the cases they share; other errors pass as they
// are.
func commonHint(err error) error {
	var se *rundir.SettingsError
	if errors.As(err, &se) && slices.Contains(se.Settings, "case_ids") {
		return fmt.Errorf("%w; --common reads the cases all of them hold", err)
	}
	return err
}

// sayLeftOut writes on stderr, as cmd, what --common left out of each
// directory.
func sayLeftOut(stderr io.Writer, cmd string, lost []rundir.LeftOut) {
	for _, l := range lost {
		fmt.Fprintf(stderr, "patchbench %s: --common: %s\n", cmd, l)
	}
}

// runReport prints the tables of one or more run directories, read as
// one comparison and recomputed from their records as they are read.
func runReport(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", "patchbench report DIR... [--format text|markdown|csv|latex|json|html] [--table NAME]... [--all DIR] [--wide] [--common] [--intervals] [--ci-columns] [--paper] [--paper-map ROW=ACTOR]... [--reveal] [--baseline NAME] [--plots DIR] [--plot-format png|svg|pdf] [--plot-size one-column|two-column]", reportExamples, stdout, stderr)
	format := fs.choice("format", "text", "output `format`: text, markdown, csv, latex, json or html", reportFormats...)
	var tables stringList
	fs.Var(&tables, "table", "only the tables with these `names` (repeatable or comma list; csv takes one, main by default)")
	wide := fs.Bool("wide", false, "text: every table whole, however wide (by default a text table is narrowed to 120 columns, or the terminal's width when narrower)")
	common := fs.Bool("common", false, commonUsage)
	intervals := fs.Bool("intervals", false, "text: keep the 95% intervals when a table is narrowed")
	ciColumns := fs.Bool("ci-columns", false, "put each 95% interval in a column of its own (text, markdown, latex)")
	paper := fs.Bool("paper", false, "add every figure of the paper beside ours, with the model, rounds and settings that produced ours; a row of a model from a run of that model only")
	var paperMap stringList
	fs.Var(&paperMap, "paper-map", "with --paper, fill a paper model's rows from this actor's runs: `row=actor` (row gpt-5-mini or mistral-7b; repeatable or comma list), in place of the runs found to be of that model")
	baseline := fs.String("baseline", "", "the configuration (`name` or label) the paired tests compare the others against (default patchoptic, when present; without it they are skipped)")
	plots := fs.String("plots", "", "also write the charts (leak rate, illegal commits, semantic pass, tokens per configuration; semantic pass^k against k per actor) into this `dir`")
	plotFormat := fs.choice("plot-format", "png", "the charts' `format`: png, svg or pdf", report.PlotFormats...)
	plotSize := fs.choice("plot-size", "one-column", "the charts' `size`: one-column (3.5 in wide) or two-column (7 in)", "one-column", "two-column")
	all := fs.String("all", "", "with --format csv or json, write every table into this `dir`: one file per table (NAME.csv or NAME.json) and the tidy long.csv or long.json (table, config, label, actor, group, metric, value, lo, hi)")
	reveal := fs.Bool("reveal", false, "with --format html, put the hidden values and the secrets in the file (its run pages show them, marked); without it the file holds none")
	casesDir := fs.String("cases", "", "with --format html or --paper, the case set `dir` of the runs, when the manifest's cannot be loaded from here")
	pos, err := fs.parseDirs(args)
	if err != nil {
		return fs.exit(err)
	}
	if *format == "html" {
		if len(tables) > 0 || *ciColumns || *paper || *plots != "" {
			return fs.usageError("--format html writes the browser's pages; --table, --ci-columns, --paper and --plots go with the other formats")
		}
		return fs.exit(reportHTML(pos, *casesDir, *baseline, *reveal, *common, stdout, stderr))
	}
	if *reveal {
		return fs.usageError("--reveal goes with --format html")
	}
	set, err := readSet(pos, *common, "report", stderr)
	if err != nil {
		return failf(stderr, "report", "%v", err)
	}
	base, err := chooseBaseline(set.Configs, *baseline, strings.Join(pos, ", "))
	if err != nil {
		return fs.exit(err)
	}
	b := report.NewBuilder(set.Configs, set.Actors, base)
	if err := set.EachHead(func(_ int, r *rundir.Record) error { b.Add(r); return nil }); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	rep := b.Report()
	rep.Summary.RunsExpected = set.ExpectedRuns()
	rep.Summary.Complete = b.Summarizer().Settled() >= rep.Summary.RunsExpected
	unknown, partial, notGiven := set.UnknownExpected(), set.MissingShards(), set.ShardsNotGiven()
	if len(partial) > 0 {
		fmt.Fprintf(stderr, "patchbench report: %s\n", report.MissingShardsNote(partial))
	}
	if len(notGiven) > 0 {
		fmt.Fprintf(stderr, "patchbench report: %s\n", report.ShardsNotGivenNote(notGiven))
	}
	switch {
	case len(unknown) > 0:
		fmt.Fprintf(stderr, "patchbench report: %s\n", report.UnknownExpectedNote(unknown))
	case len(notGiven) > 0:
		// Not complete (MarkMissingShards, below); the runs of the shards
		// not given are not expected, so there is nothing to warn of.
	case !rep.Summary.Complete:
		warnIncomplete(strings.Join(pos, ", "), rep.Summary.RunsExpected, b.Summarizer(), stderr)
	}
	if slices.Contains(tables, "paper") || len(paperMap) > 0 {
		*paper = true // the paper table, asked for by name or by a map
	}
	if *paper {
		mapped, err := parsePaperMap(paperMap, set.Actors)
		if err != nil {
			return fs.usageError("--paper-map: %v", err)
		}
		rep.Tables = append(rep.Tables, paperTable(ctx, set, b, rep.Summary, *casesDir, mapped, stderr))
	}
	// Every table says so, whichever are chosen and however written.
	report.MarkUnknownExpected(&rep, unknown)
	report.MarkMissingShards(&rep, partial, notGiven)
	if *all != "" && *format != "csv" && *format != "json" {
		return fs.usageError("--all writes csv or json files; give --format csv or --format json")
	}
	if len(tables) == 0 && *format == "csv" && *all == "" {
		tables = stringList{"main"}
	}
	if len(tables) > 0 {
		if rep, err = report.SelectTables(rep, tables); err != nil {
			return fs.usageError("--table: %v", err)
		}
	}
	if *all != "" {
		files, err := report.WriteAll(*all, rep, *format)
		if err != nil {
			return failf(stderr, "report", "%v", err)
		}
		fmt.Fprintf(stderr, "patchbench report: wrote %d files into %s: %s\n", len(files), *all, strings.Join(baseNames(files), ", "))
		return exitOK
	}
	if *format == "csv" && len(rep.Tables) != 1 {
		return fs.usageError("--format csv writes one table; give one --table")
	}
	if err := report.RenderWith(stdout, rep, report.RenderOptions{Format: *format, CIColumns: *ciColumns, Width: textWidth(stdout, *wide), Intervals: *intervals}); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	if *plots != "" {
		files, err := report.WritePlots(*plots, rep.Summary, set.Configs, set.Actors, report.PlotOptions{Format: *plotFormat, Size: *plotSize})
		if err != nil {
			return failf(stderr, "report", "%v", err)
		}
		more, err := report.WriteReliabilityPlots(*plots, rep.Reliability, set.Configs, set.Actors, report.PlotOptions{Format: *plotFormat, Size: *plotSize})
		if err != nil {
			return failf(stderr, "report", "%v", err)
		}
		for _, f := range append(files, more...) {
			fmt.Fprintf(stderr, "wrote %s\n", f)
		}
	}
	return exitOK
}

// chooseBaseline picks the paired tests' baseline among the
// configurations present: the one named by its name or its label (an
// error listing the names when there is none), or patchoptic when present,
// or none (the report then says the paired tests are skipped).
func chooseBaseline(configs []*bench.Config, name, dirs string) (string, error) {
	var names []string
	for _, c := range configs {
		if name != "" && (c.Name == name || c.Label == name) {
			return c.Name, nil
		}
		names = append(names, c.Name)
	}
	switch {
	case name != "":
		return "", usagef("--baseline: no configuration %q in %s (names: %s)", name, dirs, strings.Join(names, ", "))
	case slices.Contains(names, "patchoptic"):
		return "patchoptic", nil
	}
	return "", nil
}

// warnIncomplete says why run directories hold fewer settled runs than
// their settings call for: runs that wait for answers, or an
// interruption.
func warnIncomplete(dirs string, expected int, s *report.Summarizer, stderr io.Writer) {
	if n := s.Recorded() - s.Settled(); n > 0 {
		fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %s of %d wait for answers (pending: answer the file actor's requests, listed by \"patchbench pending DIR\", then run the same command again); %d recorded with an outcome\n",
			dirs, report.PluralOf(n, "run", "runs"), expected, s.Settled())
		return
	}
	fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %d of %d runs recorded (interrupted? run the same command again to finish it)\n", dirs, s.Recorded(), expected)
}
