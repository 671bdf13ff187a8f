package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/scoring"
)

const stressExamples = `  # Every artifact of the embedded suite against every configuration:
  patchbench stress

  # As JSON, for another case set:
  patchbench stress --cases my-cases --format json
`

// runStress runs the no-model stress test and prints accepted/total per
// category and configuration, and the paper's hidden-source set. Exit 1
// when a decision differs from an artifact's caught_by.
func runStress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stress", "patchbench stress [--format text|json] [--cases DIR] [--configs DIR]", stressExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	casesDir := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	configsDir := fs.String("configs", "", "the configurations `dir` (default: the embedded six)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	configs, err := loadConfigs(*configsDir)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	cases, problems, err := loadCases(*casesDir)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	if len(problems) > 0 {
		return failf(stderr, "stress", "the case set does not load:\n%v\nRun \"patchbench validate\" for every problem.", problems)
	}
	res, err := runner.Stress(ctx, cases, configs)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printStress(stdout, res, configs)
	}
	if len(res.Mismatches) > 0 {
		for _, m := range res.Mismatches {
			fmt.Fprintf(stderr, "mismatch: case %s artifact %s in %s: committed %v, caught_by says %v\n", m.Case, m.Artifact, m.Config, m.Committed, m.Expected)
		}
		return exitNegative
	}
	return exitOK
}

func printStress(w io.Writer, res *scoring.StressResult, configs []*bench.Config) {
	t := tablewriter.NewTable(w, tablewriter.WithHeaderAutoFormat(tw.Off))
	header := []any{"Category"}
	for _, c := range configs {
		header = append(header, c.Label)
	}
	t.Header(header...)
	byKey := map[[2]string]scoring.StressCell{}
	for _, c := range res.Cells {
		byKey[[2]string{c.Config, c.Category}] = c
	}
	for _, cat := range bench.Categories {
		row := []any{cat}
		for _, c := range configs {
			cell := byKey[[2]string{c.Name, cat}]
			row = append(row, fmt.Sprintf("%d/%d", cell.Accepted, cell.Total))
		}
		t.Append(row...)
	}
	row := []any{"paper hidden-source set"}
	for _, p := range res.PaperSet {
		row = append(row, fmt.Sprintf("%d/%d", p.Accepted, p.Total))
	}
	t.Append(row...)
	t.Render()
	fmt.Fprintln(w, "accepted/total: artifacts each configuration committed")
}
