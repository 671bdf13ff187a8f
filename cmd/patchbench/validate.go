package main

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/check"
	"github.com/patchbench/patchbench/report"
)

const validateExamples = `  # Check the suite embedded in the binary:
  patchbench validate

  # Check a case set on disk (bench/cases/<domain>/<id>.yaml), or one domain of it:
  patchbench validate bench/cases
  patchbench validate bench/cases/finance

  # One case file:
  patchbench validate my-cases/science/sci-my-case.yaml

  # Check it against other configurations (the directory replaces the six;
  # copy bench/configs and add yours to check seven):
  patchbench validate my-cases --configs my-configs

  # Check the cases that grow (their grow list) with their states grown to 10 MB:
  patchbench validate --scale 10MB
`

// runValidate checks a case set: the JSON Schema and strict loader, then
// the semantic rules of docs/cases.md, including a reference run of each
// case and every artifact against every configuration. Problems go to
// stdout, one per line (file:line: case ID: message), and exit 1; warnings
// (check.Warnings) follow them, marked "warning (code)", and never change
// the exit status.
func runValidate(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("validate", "patchbench validate [DIR|FILE] [--configs DIR] [--scale SIZE]", validateExamples, stdout, stderr)
	configsDir := fs.String("configs", "", "the configurations `dir`; it replaces the embedded bench/configs (default: embedded)")
	scaleText := fs.String("scale", "", "also check the cases that grow with their states grown to this `size` (1MB, 10MB, ...; default: a check at "+check.DefaultCheckScale.String()+")")
	scaleSeed := fs.Int64("scale-seed", bench.DefaultScaleSeed, "the `seed` the grown states are generated from, at least 1")
	dir, err := casesArg(fs, args)
	if err != nil {
		return fs.exit(err)
	}
	configs, err := loadConfigs(*configsDir)
	if err != nil {
		return failf(stderr, "validate", "%v", err)
	}
	if *scaleSeed < 1 {
		return fs.exit(flagCausef("scale-seed", "must be at least 1, not %d", *scaleSeed))
	}
	scale := check.DefaultCheckScale
	if *scaleText != "" {
		if scale, err = bench.ParseScale(*scaleText); err != nil {
			return fs.exit(flagCausef("scale", "%v", err))
		}
	}
	cases, problems, err := loadCases(dir)
	if err != nil {
		return failf(stderr, "validate", "%v", err)
	}
	if len(cases) == 0 && len(problems) == 0 {
		return failf(stderr, "validate", "no case files (*.yaml, *.yml, *.json) under %s", displayDir(dir))
	}
	more, err := check.Validate(ctx, cases, configs)
	if err != nil {
		return failf(stderr, "validate", "%v", err)
	}
	problems = append(problems, more...)
	if !scale.IsBase() {
		grown, err := check.ValidateGrown(ctx, cases, configs, scale, uint64(*scaleSeed))
		if err != nil {
			return failf(stderr, "validate", "%v", err)
		}
		problems = append(problems, grown...)
	}
	warnings, err := check.Warnings(ctx, cases, configs)
	if err != nil {
		return failf(stderr, "validate", "%v", err)
	}
	for _, p := range problems {
		fmt.Fprintln(stdout, p.String())
	}
	for _, w := range warnings {
		fmt.Fprintln(stdout, w.String())
	}
	also := warningSummary(warnings)
	if len(problems) > 0 {
		fmt.Fprintf(stdout, "%s in %s%s\n", report.Plural(len(problems), "problem"), displayDir(dir), also)
		return exitNegative
	}
	fmt.Fprintln(stdout, suiteSummary(cases, configs)+grownSummary(cases, scale)+also)
	return exitOK
}

// warningSummary is the part of validate's last line that counts the
// warnings by kind, with where the docs explain each; "" for none.
func warningSummary(warnings bench.Problems) string {
	if len(warnings) == 0 {
		return ""
	}
	kinds := []struct {
		code, what string
		n          int
	}{
		{code: bench.WarningInvariantReadsHidden, what: `invariants that read data hidden from a step: see docs/contracts-and-gates.md, "Invariants and hidden data"`},
		{code: bench.WarningInvariantFalseBefore, what: `invariants false on the state a step starts from: see docs/contracts-and-gates.md, "Goals belong in the rubric"`},
	}
	for _, w := range warnings {
		for i := range kinds {
			if w.Code == kinds[i].code {
				kinds[i].n++
			}
		}
	}
	var parts []string
	for _, k := range kinds {
		switch {
		case k.n == len(warnings):
			parts = append(parts, k.what)
		case k.n > 0:
			parts = append(parts, fmt.Sprintf("%d on %s", k.n, k.what))
		}
	}
	return fmt.Sprintf("; %s (%s)", report.Plural(len(warnings), "warning"), strings.Join(parts, "; "))
}

// suiteSummary is validate's one-line summary of a clean case set.
func suiteSummary(cases []*bench.Case, configs []*bench.Config) string {
	perDomain := map[string]int{}
	steps, secrets, artifacts := 0, 0, 0
	for _, c := range cases {
		perDomain[c.Domain]++
		steps += len(c.Steps)
		secrets += len(c.Secrets)
		artifacts += len(c.Artifacts)
	}
	var parts []string
	for _, d := range bench.DomainsOf(cases) {
		if n := perDomain[d]; n > 0 {
			parts = append(parts, fmt.Sprintf("%s %d", d, n))
		}
	}
	return fmt.Sprintf("ok: %s (%s), %s, %s, %s checked in %s",
		report.Plural(len(cases), "case"), strings.Join(parts, ", "), report.Plural(steps, "step"), report.Plural(secrets, "secret"),
		report.Plural(artifacts, "artifact"), report.Plural(len(configs), "configuration"))
}

// grownSummary is the part of validate's last line that says which cases
// were checked grown, and at what scale; "" when none grows.
func grownSummary(cases []*bench.Case, s bench.Scale) string {
	n := 0
	for _, c := range cases {
		if len(c.Grow) > 0 {
			n++
		}
	}
	if n == 0 || s.IsBase() {
		return ""
	}
	return fmt.Sprintf("; %s checked grown to %s", report.Plural(n, "case"), s)
}
