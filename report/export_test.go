package report

import (
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
)

// The tests hold their few records in memory; the package streams them
// (Builder.Add, Summarizer.Add), so these two live here.

// BuildReport is the report of records held in memory (Builder), for the tests.
func BuildReport(recs []*rundir.Record, configs []*bench.Config, actorNames []string, baseline string) Report {
	b := NewBuilder(configs, actorNames, baseline)
	for _, r := range recs {
		b.Add(r)
	}
	return b.Report()
}

// Summarize is the summary of records held in memory (Summarizer), for the tests.
func Summarize(recs []*rundir.Record, configs []*bench.Config, actorNames []string) Summary {
	s := NewSummarizer(configs, actorNames)
	for _, r := range recs {
		s.Add(r)
	}
	return s.Summary()
}
