package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats are the formats Render writes.
var Formats = []string{"text", "markdown", "csv", "latex", "json"}

// RenderOptions choose what Render writes.
type RenderOptions struct {
	// Format is one of Formats.
	Format string
	// CIColumns puts each 95 % interval in a column of its own, beside
	// its figure, instead of "x [lo, hi]" in one cell (text, Markdown,
	// LaTeX; CSV always has lo and hi columns).
	CIColumns bool
}

// Render writes a report in one of Formats: text (each table under its
// title, boxed by tablewriter), markdown (each under a ### heading), csv
// (exactly one table, Data's columns: one value per cell, numbers as
// numbers, an empty cell for a missing value; SelectTables chooses it),
// latex (one booktabs table environment per table, with its caption and
// label) or json (the report: summary, tables, paired tests and notes,
// indented); then the report's notes. An unknown format writes nothing.
func Render(w io.Writer, rep Report, format string) error {
	return RenderWith(w, rep, RenderOptions{Format: format})
}

// RenderWith is Render with options.
func RenderWith(w io.Writer, rep Report, o RenderOptions) error {
	switch o.Format {
	case "json":
		b, err := json.MarshalIndent(rep, "", "  ")
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return err
	case "csv":
		if len(rep.Tables) != 1 {
			return fmt.Errorf("CSV holds one table; choose it (%s)", strings.Join(tableNames(rep), ", "))
		}
		return WriteCSV(w, rep.Tables[0])
	}
	for i, t := range rep.Tables {
		if o.CIColumns {
			t = SplitIntervals(t)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		switch o.Format {
		case "text":
			fmt.Fprintln(w, t.Title)
			RenderTable(w, t, false)
		case "markdown":
			fmt.Fprintf(w, "### %s\n\n", t.Title)
			RenderTable(w, t, true)
		case "latex":
			RenderLaTeX(w, t)
		}
	}
	for _, n := range rep.Notes {
		switch o.Format {
		case "latex":
			fmt.Fprintf(w, "%% %s\n", n)
		case "text", "markdown":
			fmt.Fprintf(w, "\n%s\n", n)
		}
	}
	return nil
}

// tableNames lists the names of a report's tables.
func tableNames(rep Report) []string {
	var out []string
	for _, t := range rep.Tables {
		out = append(out, t.Name)
	}
	return out
}

// SelectTables keeps the tables of the report named in names, in the
// order of names; an unknown name is an error that lists the tables.
func SelectTables(rep Report, names []string) (Report, error) {
	var keep []Table
	for _, n := range names {
		found := false
		for _, t := range rep.Tables {
			if t.Name == n {
				keep, found = append(keep, t), true
			}
		}
		if !found {
			return rep, fmt.Errorf("no table %q (tables: %s)", n, strings.Join(tableNames(rep), ", "))
		}
	}
	rep.Tables = keep
	return rep, nil
}

// WriteCSV writes a table's Data as CSV: a header of column names, then
// one value per cell: numbers as numbers (up to 10 significant digits),
// an empty cell for a missing value. A table without Data is written as
// printed.
func WriteCSV(w io.Writer, t Table) error {
	cw := csv.NewWriter(w)
	if t.Data == nil {
		cw.Write(t.Header)
		for _, r := range t.Rows {
			cw.Write(r)
		}
	} else {
		cw.Write(t.Data.Columns)
		for _, r := range t.Data.Rows {
			row := make([]string, len(r))
			for i, v := range r {
				row[i] = csvValue(v)
			}
			cw.Write(row)
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvValue writes one Data cell.
func csvValue(v any) string {
	switch x := v.(type) {
	case nil:
		return ""
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return ""
		}
		return strconv.FormatFloat(x, 'g', 10, 64)
	case int:
		return strconv.Itoa(x)
	case string:
		return x
	default:
		return fmt.Sprint(x)
	}
}

// ciHeader marks a column whose cells are a figure with its interval.
const ciHeader = " [95% CI]"

// SplitIntervals puts each interval of a table in a column of its own:
// a column headed "X [95% CI]" whose cells read "x [lo, hi]" becomes "X"
// with the figures and "95% CI" with the intervals.
func SplitIntervals(t Table) Table {
	out := Table{Name: t.Name, Title: t.Title, Data: t.Data}
	split := make([]bool, len(t.Header))
	for i, h := range t.Header {
		if strings.HasSuffix(h, ciHeader) {
			split[i] = true
			out.Header = append(out.Header, strings.TrimSuffix(h, ciHeader), "95% CI")
		} else {
			out.Header = append(out.Header, h)
		}
	}
	for _, r := range t.Rows {
		var row []string
		for i, c := range r {
			if i >= len(split) || !split[i] {
				row = append(row, c)
				continue
			}
			if v, ci, ok := strings.Cut(c, " ["); ok {
				row = append(row, v, "["+ci)
			} else {
				row = append(row, c, c)
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// RenderTable renders a table's header and rows (not its title) with
// tablewriter v1: boxed for the terminal, or as a Markdown table.
func RenderTable(w io.Writer, t Table, markdown bool) {
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

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`,
	// The OT1 text font sets <, > and | as other glyphs (¡, ¿, an em
	// dash), and a straight double quote as a closing one.
	"<", `$<$`, ">", `$>$`, "|", `\textbar{}`, `"`, `\textquotedbl{}`,
	// Symbols a text font lacks are set in math mode.
	"→", `$\rightarrow$`, "←", `$\leftarrow$`, "≥", `$\geq$`, "≤", `$\leq$`, "×", `$\times$`, "±", `$\pm$`, "−", `$-$`, "Δ", `$\Delta$`,
	"≈", `$\approx$`, "⟂", `$\perp$`, "…", `\ldots{}`, "§", `\S{}`, "·", `$\cdot$`)

// signedNumber is a minus or plus sign that starts a number, at the start
// of a cell or after a space or an opening bracket.
var signedNumber = regexp.MustCompile(`(^|[\s(\[])([-+])([0-9])`)

// LaTeXCell escapes one cell for LaTeX: the special characters escaped,
// arrows and relations in math mode, a sign before a number as a
// math-mode minus or plus ($-$4.4\%), a cell that is only "-" (nothing
// measured) as an en dash.
func LaTeXCell(c string) string {
	if c == "-" {
		return "--"
	}
	c = signedNumber.ReplaceAllString(c, "${1}\x00${2}\x00${3}")
	c = latexEscaper.Replace(c)
	return strings.NewReplacer("\x00-\x00", "$-$", "\x00+\x00", "$+$").Replace(c)
}

// LaTeXPackages are the packages RenderLaTeX's output needs in the
// document's preamble: booktabs for the rules, graphicx for the box that
// shrinks a table wider than the text to its width, tabularx for the
// tables whose text columns wrap. \textquotedbl is part of the LaTeX
// kernel since 2020.
var LaTeXPackages = []string{"booktabs", "graphicx", "tabularx"}

// LaTeX layout: a table wider than latexColumnChars (its widest cell of
// each column added up) spans both columns of a two-column paper, as does
// one of more than eight columns; a text column whose widest cell is
// longer than latexWrapChars wraps.
const (
	latexColumnChars = 90
	latexWrapChars   = 30
)

// RenderLaTeX writes a table as a LaTeX table environment with its title as
// the caption and tab:patchbench-NAME as the label: table* (both columns
// of a two-column paper) when it is wide (LaTeX layout above), else table.
// A column whose every cell is a number, an interval or "-" is
// right-aligned. A table with a long text column is a booktabs tabularx
// as wide as the text, its long columns wrapping, ragged right; any other
// is a booktabs tabular, scaled down to the text width when wider
// (\resizebox), left as it is when narrower. Cells are escaped by
// LaTeXCell. It needs LaTeXPackages.
func RenderLaTeX(w io.Writer, t Table) {
	esc := func(cells []string) string {
		out := make([]string, len(cells))
		for i, c := range cells {
			out[i] = LaTeXCell(c)
		}
		return strings.Join(out, " & ")
	}
	align, wraps, total := "", false, 0
	for i, h := range t.Header {
		numeric, widest := len(t.Rows) > 0, utf8.RuneCountInString(h)
		for _, r := range t.Rows {
			if i >= len(r) || !numericCell(r[i]) {
				numeric = false
			}
			if i < len(r) {
				widest = max(widest, utf8.RuneCountInString(r[i]))
			}
		}
		total += widest + 2
		switch {
		case numeric:
			align += "r"
		case widest > latexWrapChars:
			align += `>{\raggedright\arraybackslash}X`
			wraps = true
		default:
			align += "l"
		}
	}
	env := "table"
	if len(t.Header) > 8 || total > latexColumnChars {
		env = "table*"
	}
	fmt.Fprintf(w, "%% %s (needs \\usepackage{%s})\n\\begin{%s}[tbp]\n\\centering\n\\small\n\\caption{%s}\n\\label{tab:patchbench-%s}\n",
		t.Name, strings.Join(LaTeXPackages, ","), env, LaTeXCell(t.Title), labelName(t.Name))
	begin, end := fmt.Sprintf("\\begin{tabular}{%s}", align), "\\end{tabular}}"
	if wraps {
		begin, end = fmt.Sprintf("\\begin{tabularx}{\\linewidth}{%s}", align), "\\end{tabularx}"
	} else {
		fmt.Fprintf(w, "\\resizebox{\\ifdim\\width>\\linewidth\\linewidth\\else\\width\\fi}{!}{%%\n")
	}
	fmt.Fprintf(w, "%s\n\\toprule\n%s \\\\\n\\midrule\n", begin, esc(t.Header))
	for _, r := range t.Rows {
		fmt.Fprintf(w, "%s \\\\\n", esc(r))
	}
	fmt.Fprintf(w, "\\bottomrule\n%s\n\\end{%s}\n", end, env)
}

// numericCell reports whether a cell reads as a figure: a number (with a
// sign, a percent, a bound such as "<0.0001"), an interval, or "-".
func numericCell(c string) bool {
	if c == "-" {
		return true
	}
	return c != "" && strings.ContainsAny(c[:1], "0123456789-+[<")
}

// PValue writes a p-value with four significant digits, or "<0.0001"
// below that, never in e notation (which a LaTeX or CSV reader would
// misread).
func PValue(p float64) string {
	if p < 0.0001 {
		return "<0.0001"
	}
	return strconv.FormatFloat(p, 'g', 4, 64)
}

// labelName makes a table name safe in a LaTeX label.
func labelName(n string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' {
			return r
		}
		return '-'
	}, n)
}

// WriteColumns writes rows under a header as aligned columns, two spaces
// apart, with no trailing spaces: the plain listings of the command line
// (cases, runs, pending requests, a decision's gates).
func WriteColumns(w io.Writer, header []string, rows [][]string) {
	var buf bytes.Buffer
	tw := tabwriter.NewWriter(&buf, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(header, "\t"))
	for _, r := range rows {
		fmt.Fprintln(tw, strings.Join(r, "\t"))
	}
	tw.Flush()
	for _, line := range strings.SplitAfter(buf.String(), "\n") {
		if line == "" {
			continue
		}
		fmt.Fprintln(w, strings.TrimRight(line, " \n"))
	}
}

// Plural writes n and a noun, with an s unless n is 1: "1 run", "3 runs".
func Plural(n int, noun string) string {
	return PluralOf(n, noun, noun+"s")
}

// PluralOf writes n and the noun's singular or plural form.
func PluralOf(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
