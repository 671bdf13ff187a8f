package main

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
)

const reportExamples = `  # Every table of a run directory, for the terminal:
  patchbench report results/run-1a2b3c4d5e

  # Markdown for a paper draft, with the paper's figures beside ours:
  patchbench report results/run-1a2b3c4d5e --format markdown --paper

  # LaTeX, CSV or JSON:
  patchbench report results/run-1a2b3c4d5e --format latex

  # PNG charts of leak rate, semantic pass and tokens per configuration:
  patchbench report results/run-1a2b3c4d5e --plots results/run-1a2b3c4d5e/plots
`

// runReport prints the tables of a run directory.
func runReport(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("report", "patchbench report DIR [--format text|markdown|csv|latex|json] [--paper] [--baseline NAME] [--plots DIR]", reportExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text, markdown, csv, latex or json")
	paper := fs.Bool("paper", false, "add a table of the paper's figures beside ours (PatchBench design §1)")
	baseline := fs.String("baseline", "patchoptic", "the configuration `name` the paired tests compare the others against")
	plots := fs.String("plots", "", "also write PNG charts (leak rate, semantic pass, tokens per configuration) into this `dir`")
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fs.usageError("give the run directory")
	}
	switch *format {
	case "text", "markdown", "csv", "latex", "json":
	default:
		return fs.usageError("--format must be text, markdown, csv, latex or json, not %q", *format)
	}
	dir := pos[0]
	m, recs, err := readRunDir(dir)
	if err != nil {
		return failf(stderr, "report", "%v", err)
	}
	var names []string
	for _, c := range m.configs() {
		names = append(names, c.Name)
	}
	if !slices.Contains(names, *baseline) {
		return fs.usageError("--baseline: no configuration %q in %s (names: %s)", *baseline, dir, strings.Join(names, ", "))
	}
	rep := runner.BuildReport(recs, m.configs(), m.Actors, *baseline)
	rep.Summary.RunsExpected = m.ExpectedRuns
	rep.Summary.Complete = settled(recs) >= m.ExpectedRuns
	if !rep.Summary.Complete {
		if n := len(recs) - settled(recs); n > 0 {
			fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %s of %d wait for answers (pending: answer the file actor's requests, listed by \"patchbench pending DIR\", then run the same command again); %d recorded with an outcome\n",
				dir, pluralOf(n, "run", "runs"), m.ExpectedRuns, settled(recs))
		} else {
			fmt.Fprintf(stderr, "patchbench report: %s is incomplete: %d of %d runs recorded (interrupted? run the same command again to finish it)\n", dir, len(recs), m.ExpectedRuns)
		}
	}
	if *paper {
		rep.Tables = append(rep.Tables, paperTable(rep.Summary))
	}
	if err := renderReport(stdout, rep, *format); err != nil {
		return failf(stderr, "report", "%v", err)
	}
	if *plots != "" {
		files, err := writePlots(*plots, rep.Summary, m.configs(), m.Actors)
		if err != nil {
			return failf(stderr, "report", "%v", err)
		}
		for _, f := range files {
			fmt.Fprintf(stderr, "wrote %s\n", f)
		}
	}
	return exitOK
}

// readRunDir reads a run directory's manifest and its records (the last
// record of each run).
func readRunDir(dir string) (*Manifest, []*runner.Record, error) {
	b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
	if err != nil {
		return nil, nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", filepath.Join(dir, runner.ManifestFile), err)
	}
	path := filepath.Join(dir, runner.RunsFile)
	recs, _, err := runner.ReadRuns(path)
	if err != nil {
		return nil, nil, err
	}
	// Every record must be one of the manifest's runs.
	inCases := map[string]bool{}
	for _, id := range m.CaseIDs {
		inCases[id] = true
	}
	for _, r := range recs {
		switch {
		case len(m.CaseIDs) > 0 && !inCases[r.Case]:
			return nil, nil, fmt.Errorf("%s: run %s: case %s is not in this run's case set", path, r.RunID, r.Case)
		case !slices.Contains(m.Configs, r.Config):
			return nil, nil, fmt.Errorf("%s: run %s: configuration %s is not in this run", path, r.RunID, r.Config)
		case !slices.Contains(m.Actors, r.Actor):
			return nil, nil, fmt.Errorf("%s: run %s: actor %s is not in this run", path, r.RunID, r.Actor)
		case r.Round > m.Rounds:
			return nil, nil, fmt.Errorf("%s: run %s: round %d of a %d-round run", path, r.RunID, r.Round, m.Rounds)
		}
	}
	return &m, latest(recs), nil
}

// configs returns the configurations a manifest recorded (name, label,
// view and gates), in their order.
func (m *Manifest) configs() []*bench.Config {
	if len(m.ConfigDetails) > 0 {
		return m.ConfigDetails
	}
	var out []*bench.Config
	for _, n := range m.Configs {
		out = append(out, &bench.Config{Name: n, Label: n})
	}
	return out
}

func renderReport(w io.Writer, rep runner.Report, format string) error {
	switch format {
	case "json":
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "csv":
		cw := csv.NewWriter(w)
		for _, t := range rep.Tables {
			cw.Write(append([]string{"table"}, t.Header...))
			for _, r := range t.Rows {
				cw.Write(append([]string{t.Name}, r...))
			}
		}
		cw.Flush()
		return cw.Error()
	}
	for i, t := range rep.Tables {
		if i > 0 {
			fmt.Fprintln(w)
		}
		switch format {
		case "text":
			fmt.Fprintln(w, t.Title)
			renderTable(w, t, false)
		case "markdown":
			fmt.Fprintf(w, "### %s\n\n", t.Title)
			renderTable(w, t, true)
		case "latex":
			renderLatex(w, t)
		}
	}
	return nil
}

// renderTable renders a table with tablewriter, boxed for the terminal or
// as Markdown.
func renderTable(w io.Writer, t runner.Table, markdown bool) {
	opts := []tablewriter.Option{tablewriter.WithHeaderAutoFormat(tw.Off)}
	if markdown {
		opts = append(opts, tablewriter.WithRenderer(renderer.NewMarkdown()))
	}
	tb := tablewriter.NewTable(w, opts...)
	header := make([]any, len(t.Header))
	for i, h := range t.Header {
		header[i] = h
	}
	tb.Header(header...)
	for _, r := range t.Rows {
		row := make([]any, len(r))
		for i, c := range r {
			row[i] = c
		}
		tb.Append(row...)
	}
	tb.Render()
}

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

// renderLatex writes a table as a LaTeX tabular (booktabs rules).
func renderLatex(w io.Writer, t runner.Table) {
	esc := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = latexEscaper.Replace(c)
		}
		return strings.Join(out, " & ")
	}
	align := ""
	for i := range t.Header {
		numeric := len(t.Rows) > 0
		for _, r := range t.Rows {
			if i >= len(r) || r[i] == "" || !strings.ContainsAny(r[i][:1], "0123456789-+") {
				numeric = false
			}
		}
		if numeric {
			align += "r"
		} else {
			align += "l"
		}
	}
	fmt.Fprintf(w, "%% %s\n\\begin{tabular}{%s}\n\\toprule\n%s \\\\\n\\midrule\n", t.Title, align, esc(t.Header))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "%s \\\\\n", esc(r))
	}
	fmt.Fprint(w, "\\bottomrule\n\\end{tabular}\n")
}

// paperTable puts the paper's figures (PatchBench design §1) beside the
// same figures of this run. Rows that need configurations or actors the
// run does not have say so.
func paperTable(s runner.Summary) runner.Table {
	t := runner.Table{Name: "paper", Title: "The paper's figures beside this run's",
		Header: []string{"Result", "Paper (GPT-5-mini)", "This run", "Actor"}}
	actors := map[string]bool{}
	for _, r := range s.Rows {
		actors[r.Actor] = true
	}
	for a := range actors {
		var fullLeak, fullN, projTok, fullTok []float64
		var poLeak, unconPass, poPass, poContent *float64
		for _, r := range s.Rows {
			if r.Actor != a || r.Measured() == 0 {
				continue
			}
			r := r
			if r.View == bench.ViewFull {
				fullLeak = append(fullLeak, r.LeakedPerRound)
				fullN = append(fullN, r.LeakRate)
				fullTok = append(fullTok, r.TokensMean)
			} else {
				projTok = append(projTok, r.TokensMean)
			}
			switch r.Config {
			case "patchoptic":
				poLeak, poPass, poContent = &r.LeakRate, &r.SemanticPass, r.ContentScoreAccepted
			case "unconstrained":
				unconPass = &r.SemanticPass
			}
		}
		add := func(result, paperFig, ours string) { t.Rows = append(t.Rows, []string{result, paperFig, ours, a}) }
		if len(fullN) > 0 {
			add("leak rate, full-state configurations", "31.5 % (14.5 per round of 46)", fmt.Sprintf("%.1f %% (%.1f per round)", 100*mean(fullN), mean(fullLeak)))
		}
		if poLeak != nil {
			add("leak rate, PatchOptic", "0.2 % (0.1 per round)", fmt.Sprintf("%.1f %%", 100**poLeak))
		}
		if len(projTok) > 0 && len(fullTok) > 0 && mean(fullTok) > 0 {
			add("tokens per run, projected vs full-state", "11 to 13 % fewer", fmt.Sprintf("%.1f %% fewer", 100*(1-mean(projTok)/mean(fullTok))))
		}
		if poContent != nil {
			add("content score of accepted outputs", "about 0.927", fmt.Sprintf("%.3f", *poContent))
		}
		if unconPass != nil && poPass != nil {
			add("semantic pass, Unconstrained → PatchOptic", "0.61 → 0.78 to 0.80", fmt.Sprintf("%.2f → %.2f", *unconPass, *poPass))
		}
	}
	sortRows(t.Rows)
	return t
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

func sortRows(rows [][]string) {
	for i := 1; i < len(rows); i++ {
		for j := i; j > 0 && rows[j][3] < rows[j-1][3]; j-- {
			rows[j], rows[j-1] = rows[j-1], rows[j]
		}
	}
}
