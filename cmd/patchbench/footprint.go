package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/check"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runtime"
)

const footprintExamples = `  # Footprints, delegations and commutation certificates of every case:
  patchbench footprint

  # One case, as JSON:
  patchbench footprint --case fin-payment-run-approval --format json

  # Also run both orders of every certified pair and compare the final states:
  patchbench footprint --check
`

// footprintCase is one case of "patchbench footprint --format json".
type footprintCase struct {
	check.Analysis
	Checks []check.PairCheck `json:"checks,omitempty"`
}

// runFootprint prints each step's static footprint (R, W, P), each
// delegation and whether it is a restriction, and the commutation
// certificate of each pair of steps that run in one phase (paper §3.4).
// With --check it runs both orders of every certified pair and exits 1
// when the final states differ.
func runFootprint(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("footprint", "patchbench footprint [DIR|FILE] [--case ID] [--format text|json] [--check]", footprintExamples, stdout, stderr)
	caseID := fs.String("case", "", "only the case with this `id`")
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	runOrders := fs.Bool("check", false, "run both orders of every certified pair with the reference proposals; exit 1 if they differ")
	dir, err := casesArg(fs, args)
	if err != nil {
		return fs.exit(err)
	}
	cases, problems, err := loadCases(dir)
	if err != nil {
		return failf(stderr, "footprint", "%v", err)
	}
	if *caseID != "" {
		var only []*bench.Case
		for _, c := range cases {
			if c.ID == *caseID {
				only = append(only, c)
			}
		}
		if len(only) == 0 {
			if len(problems) > 0 {
				return failf(stderr, "footprint", "no case %q loaded; problems:\n%v", *caseID, problems)
			}
			return failf(stderr, "footprint", "no case %q", *caseID)
		}
		cases = only
	} else if len(problems) > 0 {
		return fs.exit(notLoaded(problems))
	}
	out := []footprintCase{}
	failed := 0
	for _, c := range cases {
		fc := footprintCase{Analysis: check.Analyze(c)}
		if *runOrders {
			if fc.Checks, err = check.CheckPairs(ctx, c, fc.Analysis); err != nil {
				return failf(stderr, "footprint", "%v", err)
			}
			for _, pc := range fc.Checks {
				if !pc.OK {
					failed++
				}
			}
		}
		out = append(out, fc)
	}
	if *format == "json" {
		b, err := json.MarshalIndent(map[string]any{"cases": out}, "", "  ")
		if err != nil {
			return failf(stderr, "footprint", "%v", err)
		}
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		for i, fc := range out {
			if i > 0 {
				fmt.Fprintln(stdout)
			}
			printFootprint(stdout, fc)
		}
	}
	if *runOrders {
		total := 0
		for _, fc := range out {
			total += len(fc.Checks)
		}
		fmt.Fprintf(stderr, "ran %s in both orders: %d failed\n", report.Plural(total, "certified pair"), failed)
		if failed > 0 {
			return exitNegative
		}
	}
	return exitOK
}

func printFootprint(w io.Writer, fc footprintCase) {
	fmt.Fprintf(w, "case %s\n", fc.ID)
	for _, s := range fc.Steps {
		fmt.Fprintf(w, "  step %s (phase %s)\n", s.ID, s.Phase)
		read := "include " + regionText(s.Read.Include)
		if !s.Read.Exclude.IsEmpty() {
			read += "; exclude " + regionText(s.Read.Exclude)
		}
		fmt.Fprintf(w, "    read:   %s\n    write:  %s\n    source: %s\n", read, regionText(s.Write), regionText(s.Source))
	}
	for _, d := range fc.Delegations {
		verdict := "a restriction"
		if !d.OK {
			verdict = "NOT a restriction"
		}
		fmt.Fprintf(w, "  delegation %s -> %s: %s\n", d.Parent, d.Child, verdict)
	}
	for _, p := range fc.Pairs {
		if p.Commute {
			fmt.Fprintf(w, "  pair %s, %s (phase %s): commute\n", p.A, p.B, p.Phase)
		} else {
			var parts []string
			for _, b := range p.Blocking {
				parts = append(parts, b.Kind+" on "+regionText(b.Paths))
			}
			fmt.Fprintf(w, "  pair %s, %s (phase %s): no certificate; blocked by %s\n", p.A, p.B, p.Phase, strings.Join(parts, "; "))
		}
		if p.Declared != nil {
			agree := "agrees"
			if p.Declared.Commute != p.Commute {
				agree = "DISAGREES"
			}
			fmt.Fprintf(w, "    declared commute: %v (%s): %s\n", p.Declared.Commute, agree, strings.Join(strings.Fields(p.Declared.Why), " "))
		}
	}
	for _, c := range fc.Checks {
		if c.OK {
			fmt.Fprintf(w, "  check %s, %s: both orders commit and agree\n", c.A, c.B)
		} else {
			fmt.Fprintf(w, "  check %s, %s: FAILED: %s\n", c.A, c.B, c.Reason)
		}
	}
}

func regionText(r runtime.Region) string {
	if r.IsEmpty() {
		return "(none)"
	}
	return strings.Join(r.Strings(), ", ")
}
