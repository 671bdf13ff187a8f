package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
)

const casesExamples = `  # Every case of the embedded suite:
  patchbench cases

  # One domain, as JSON:
  patchbench cases --domain medical --format json

  # A case set on disk:
  patchbench cases my-cases
`

// caseRow is one row of "patchbench cases".
type caseRow struct {
	ID         string `json:"id"`
	Domain     string `json:"domain"`
	Title      string `json:"title"`
	Steps      int    `json:"steps"`
	Secrets    int    `json:"secrets"`
	Artifacts  int    `json:"artifacts"`
	Injection  bool   `json:"injection"`
	Delegation bool   `json:"delegation"`
}

// runCases lists the cases of a case set, one row per case.
func runCases(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("cases", "patchbench cases [DIR|FILE] [--domain D] [--format text|json]", casesExamples, stdout, stderr)
	domain := fs.String("domain", "", "only the cases of this `domain` (the embedded suite's: "+strings.Join(bench.SuiteDomains, ", ")+")")
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	dir, err := casesArg(fs, args)
	if err != nil {
		return fs.exit(err)
	}
	cases, err := loadAllCases(dir)
	if err != nil {
		return fs.exit(err)
	}
	if ds := bench.DomainsOf(cases); *domain != "" && !slices.Contains(ds, *domain) {
		return fs.usageError("unknown domain %q (the case set's domains: %s)", *domain, strings.Join(ds, ", "))
	}
	rows := []caseRow{}
	for _, c := range cases {
		if *domain != "" && c.Domain != *domain {
			continue
		}
		r := caseRow{ID: c.ID, Domain: c.Domain, Title: c.Title, Steps: len(c.Steps), Secrets: len(c.Secrets),
			Artifacts: len(c.Artifacts), Injection: len(c.Injections) > 0}
		for _, s := range c.Steps {
			r.Delegation = r.Delegation || s.Parent != ""
		}
		rows = append(rows, r)
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(map[string]any{"cases": rows}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	var table [][]string
	for _, r := range rows {
		table = append(table, []string{r.ID, r.Domain, r.Title, strconv.Itoa(r.Steps), strconv.Itoa(r.Secrets),
			strconv.Itoa(r.Artifacts), report.YesNo(r.Injection), report.YesNo(r.Delegation)})
	}
	report.WriteColumns(stdout, []string{"ID", "DOMAIN", "TITLE", "STEPS", "SECRETS", "ARTIFACTS", "INJECTION", "DELEGATION"}, table)
	fmt.Fprintln(stdout, report.Plural(len(rows), "case"))
	return exitOK
}
