// Package report turns a run directory's records into what people read
// (docs/reports.md): the summary (Summarizer, summary.json's Row and
// Summary), every table (MainTable, AttackTable, IllegalTable,
// RejectionsTable, the per-domain table and the paired McNemar tests, built
// by a Builder from records added one at a time; StressTable for the
// no-model stress test; PaperTable, the paper's figures, which PaperFigures
// holds as data), every format (Render: text and Markdown through
// tablewriter v1, CSV with one value per cell from each table's Data,
// LaTeX table environments, JSON; WriteColumns for plain listings), the
// comparison of two sides of runs for patchbench compare (Comparer,
// DeltaTable), the plots (WritePlots, gonum/plot: PNG, SVG, PDF) and one
// run's trace (WriteTrace).
//
// Like vegeta's reporters, it never holds a directory's records: a
// Summarizer or a Builder takes each with Add as rundir streams them, and
// keeps counts and one number per run.
package report
