package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const compareExamples = `  # Runs that passed before a verifier change and fail after it, and the
  # rates of both with their paired tests:
  patchbench compare results/before results/after

  # Only the runs both directories hold (B ran one round, or PatchOptic only):
  patchbench compare results/before results/after-patchoptic --shared-only

  # Several directories on a side (a comma list), read as one as report reads them:
  patchbench compare results/gpt,results/mistral results/gpt-new,results/mistral-new

  # The rates for pandas, or as JSON:
  patchbench compare results/before results/after --format csv
  patchbench compare results/before results/after --format json
`

// compareFormats are compare's formats.
var compareFormats = []string{"text", "markdown", "csv", "latex", "json"}

// runCompare pairs the runs of two sides (A before, B after) by their key
// (case, configuration, actor, round), lists those that passed in A and do
// not in B, and compares every rate with its paired test. Exit 1 if a run
// regressed, 2 if the sides share no run.
func runCompare(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "patchbench compare A B [--shared-only] [--format text|markdown|csv|latex|json]", compareExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text, markdown, csv (the rates), latex or json")
	sharedOnly := fs.Bool("shared-only", false, "compare only the runs both sides hold: a run missing from B is no regression, and rates are over the pairs")
	pos, code, ok := fs.parseWithArgs(args, 2)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return fs.usageError("give two run directories (each side may be a comma list of directories)")
	}
	if !slices.Contains(compareFormats, *format) {
		return fs.usageError("--format must be text, markdown, csv, latex or json, not %q", *format)
	}
	cmp, err := compareSides(sideDirs(pos[0]), sideDirs(pos[1]), *sharedOnly)
	if err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	if cmp.Paired == 0 {
		return failf(stderr, "compare", "%s and %s share no run: nothing to compare", pos[0], pos[1])
	}
	if err := writeComparison(stdout, cmp, *format); err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	if len(cmp.Regressions) > 0 {
		return exitNegative
	}
	return exitOK
}

// sideDirs are the directories of one side: the argument when it names a
// directory, else its comma-separated parts.
func sideDirs(arg string) []string {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return []string{arg}
	}
	var out []string
	for _, p := range strings.Split(arg, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// compareSides reads each side as one comparison (rundir.ReadSet), refuses
// sides whose case sets or prompt templates differ (rundir.CheckSettings),
// and pairs the runs of A with those of B, streaming both.
func compareSides(dirsA, dirsB []string, sharedOnly bool) (report.Comparison, error) {
	a, err := rundir.ReadSet(dirsA)
	if err != nil {
		return report.Comparison{}, err
	}
	b, err := rundir.ReadSet(dirsB)
	if err != nil {
		return report.Comparison{}, err
	}
	if err := rundir.CheckSettings([]string{a.Paths[0], b.Paths[0]}, []*rundir.Manifest{a.Manifests[0], b.Manifests[0]}); err != nil {
		return report.Comparison{}, err
	}
	configs, actorNames := report.CompareNames(a.Configs, b.Configs, a.Actors, b.Actors)
	c := report.NewComparer(configs, actorNames)
	for side, set := range []*rundir.Set{a, b} {
		if err := set.EachHead(func(_ int, r *rundir.Record) error { c.Add(side, r); return nil }); err != nil {
			return report.Comparison{}, err
		}
	}
	return c.Compare(sharedOnly), nil
}

// writeComparison writes a comparison: JSON as it is; CSV and LaTeX the
// rates' table; text and Markdown the regressions, the table and a line
// of counts.
func writeComparison(w io.Writer, cmp report.Comparison, format string) error {
	t := report.DeltaTable(cmp)
	switch format {
	case "json":
		b, err := json.MarshalIndent(cmp, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "csv":
		return report.WriteCSV(w, t)
	case "latex":
		report.RenderLaTeX(w, t)
		return nil
	}
	for _, r := range cmp.Regressions {
		leak := ""
		if r.LeakedB {
			leak = " (leaked)"
		}
		if format == "markdown" {
			fmt.Fprintf(w, "- regression: `%s`: %s in A, %s in B%s\n", r.RunID, r.StatusA, r.StatusB, leak)
		} else {
			fmt.Fprintf(w, "regression: %s: %s in A, %s in B%s\n", r.RunID, r.StatusA, r.StatusB, leak)
		}
	}
	if len(cmp.Regressions) > 0 {
		fmt.Fprintln(w)
	}
	if format == "markdown" {
		fmt.Fprintf(w, "### %s\n\n", t.Title)
	} else {
		fmt.Fprintln(w, t.Title)
	}
	report.RenderTable(w, t, format == "markdown")
	line := fmt.Sprintf("%d paired runs: %d passed in A and not in B, %d the other way; %d runs only in A, %d only in B",
		cmp.Paired, len(cmp.Regressions), cmp.Fixed, cmp.OnlyA, cmp.OnlyB)
	if cmp.SharedOnly && cmp.OnlyA+cmp.OnlyB > 0 {
		line += " (left out: --shared-only)"
	}
	_, err := fmt.Fprintf(w, "\n%s\n", line)
	return err
}
