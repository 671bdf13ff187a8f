package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runner"
)

const stressExamples = `  # Every artifact of the embedded suite against every configuration:
  patchbench stress

  # As JSON, for another case set:
  patchbench stress --cases my-cases --format json
`

// runStress runs the no-model stress test and prints accepted/total per
// category and configuration, and the paper's hidden-source set. Exit 1
// when an artifact is not caught as its caught_by says: a configuration's
// decision differs from it, a gate it does not name rejects it, or a gate
// it names does not catch it on its own.
func runStress(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("stress", "patchbench stress [--format text|json] [--cases DIR] [--configs DIR]", stressExamples, stdout, stderr)
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	casesDir := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	configsDir := fs.String("configs", "", "the configurations `dir` (default: the embedded six)")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	configs, err := loadConfigs(*configsDir)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	cases, err := loadAllCases(*casesDir)
	if err != nil {
		return fs.exit(err)
	}
	res, err := runner.Stress(ctx, cases, configs)
	if err != nil {
		return failf(stderr, "stress", "%v", err)
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(res, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		report.WriteStress(stdout, res, configs)
	}
	if len(res.Mismatches) > 0 {
		for _, m := range res.Mismatches {
			sep := ": "
			if m.Config != "" {
				sep = " "
			}
			fmt.Fprintf(stderr, "mismatch: case %s artifact %s%s%s\n", m.Case, m.Artifact, sep, m.Reason)
		}
		return exitNegative
	}
	return exitOK
}
