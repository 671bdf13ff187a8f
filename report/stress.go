package report

import (
	"fmt"
	"io"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

// StressTable is the no-model stress test's table (docs/regression.md):
// accepted/total per artifact category (bench.Categories) and
// configuration (labelled, in the order of configs), then the paper's
// hidden-source set.
func StressTable(res *scoring.StressResult, configs []*bench.Config) Table {
	t := Table{Name: "stress", Title: "No-model stress test: artifacts accepted/total", Header: []string{"Category"}}
	for _, c := range configs {
		t.Header = append(t.Header, c.Label)
	}
	byKey := map[[2]string]scoring.StressCell{}
	for _, c := range res.Cells {
		byKey[[2]string{c.Config, c.Category}] = c
	}
	for _, cat := range bench.Categories {
		row := []string{cat}
		for _, c := range configs {
			cell := byKey[[2]string{c.Name, cat}]
			row = append(row, fmt.Sprintf("%d/%d", cell.Accepted, cell.Total))
		}
		t.Rows = append(t.Rows, row)
	}
	row := []string{"paper hidden-source set"}
	for _, p := range res.PaperSet {
		row = append(row, fmt.Sprintf("%d/%d", p.Accepted, p.Total))
	}
	t.Rows = append(t.Rows, row)
	return t
}

// WriteStress writes the stress test's table for the terminal, with the
// line that says what its cells count.
func WriteStress(w io.Writer, res *scoring.StressResult, configs []*bench.Config) {
	RenderTable(w, StressTable(res, configs), false)
	fmt.Fprintln(w, "accepted/total: artifacts each configuration committed")
}
