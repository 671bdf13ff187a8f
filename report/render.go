package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"regexp"
	"slices"
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
	// Width, when positive, is the most columns (characters) a text
	// table may take: a wider one is narrowed by FitText, and a line
	// under it says what was left out. 0 writes every table whole (the
	// wide form, --wide). Markdown, CSV, LaTeX and JSON are never
	// narrowed.
	Width int
	// Intervals keeps the 95 % intervals of a text table that is
	// narrowed.
	Intervals bool
}

// TextWidth is the width text tables fit by default (patchbench report
// and run without --wide).
const TextWidth = 120

// RenderWith writes a report in one of Formats (o.Format): text (each table under its
// title, boxed by tablewriter), markdown (each under a ### heading), csv
// (exactly one table, Data's columns: one value per cell, numbers as
// numbers, an empty cell for a missing value; SelectTables chooses it),
// latex (one booktabs table environment per table, with its caption and
// label) or json (the report: summary, tables, paired tests and notes,
// indented); then the report's notes. An unknown format writes nothing.
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
			RenderText(w, t, o)
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
	// The paper's table is built only when asked for (--paper, or
	// --table paper): name it too.
	if !slices.Contains(out, "paper") {
		out = append(out, "paper")
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

// RenderText renders a table's header and rows (not its title) boxed for
// the terminal, narrowed to o.Width when it is positive (FitText), with a
// line under it that says what the narrowing left out.
func RenderText(w io.Writer, t Table, o RenderOptions) {
	note := ""
	parts := []Table{t}
	if o.Width > 0 {
		t, note = FitText(t, o.Width, o.Intervals)
		parts = SplitColumns(t, o.Width)
		if len(parts) > 1 {
			split := fmt.Sprintf("(split in %d parts to fit %d columns, the first %s columns repeated; patchbench report --wide shows it whole)", len(parts), o.Width, []string{"two", "three", "four"}[splitKeys(t)-2])
			if note == "" {
				note = split
			} else {
				note += "\n" + split
			}
		}
	}
	for _, p := range parts {
		RenderTable(w, p, false)
	}
	if note != "" {
		fmt.Fprintln(w, note)
	}
}

// SplitColumns cuts a table still wider than width (after FitText) into
// parts that fit, side by side in the order of its columns, each with the
// table's first two columns (the configuration and the actor, say) in
// front, or three when the third is the Scale column. A table that fits,
// or of one column more than those or fewer, is one part; a column too
// wide for any part gets a part of its own.
func SplitColumns(t Table, width int) []Table {
	keys := splitKeys(t)
	if len(t.Header) <= keys+1 || TextTableWidth(t) <= width {
		return []Table{t}
	}
	part := func(cols []int) Table {
		p := Table{Name: t.Name, Title: t.Title, Data: t.Data}
		for _, c := range cols {
			p.Header = append(p.Header, t.Header[c])
		}
		for _, r := range t.Rows {
			row := make([]string, 0, len(cols))
			for _, c := range cols {
				if c < len(r) {
					row = append(row, r[c])
				} else {
					row = append(row, "")
				}
			}
			p.Rows = append(p.Rows, row)
		}
		return p
	}
	var out []Table
	front := make([]int, keys)
	for i := range front {
		front[i] = i
	}
	cols := slices.Clone(front)
	for c := keys; c < len(t.Header); c++ {
		try := append(slices.Clone(cols), c)
		if len(cols) > keys && TextTableWidth(part(try)) > width {
			out = append(out, part(cols))
			try = append(slices.Clone(front), c)
		}
		cols = try
	}
	return append(out, part(cols))
}

// splitKeys is how many columns SplitColumns repeats in front of each
// part: two, and one more for each of the Scale (withScale) and Attack
// (withAttack) columns that follow them.
func splitKeys(t Table) int {
	n := 2
	for _, key := range []string{"Scale", "Attack"} {
		if len(t.Header) > n && t.Header[n] == key {
			n++
		}
	}
	return n
}

// FitText narrows a table whose text rendering is wider than width
// characters, in steps, until it fits: it leaves out the 95 % intervals
// (unless intervals is set), then breaks the headers of several words
// into two lines, then leaves out the table's Optional columns, in their
// order, then breaks long texts into lines (the widest column first).
// Every figure it keeps is the wide table's, as written there. It
// returns the table and a sentence naming what was left out ("" when the
// table fit as it was); a table that cannot be narrowed enough is
// returned as narrow as it gets.
func FitText(t Table, width int, intervals bool) (Table, string) {
	if TextTableWidth(t) <= width {
		return t, ""
	}
	var left []string
	if !intervals && hasIntervals(t) {
		t = dropIntervals(t)
		left = append(left, "the 95% intervals")
	}
	if TextTableWidth(t) > width {
		t = wrapHeaders(t)
	}
	var cols []string
	for _, name := range t.Optional {
		if TextTableWidth(t) <= width {
			break
		}
		if i := columnIndex(t, name); i >= 0 {
			t = dropColumn(t, i)
			cols = append(cols, name)
		}
	}
	t = wrapCells(t, width)
	switch len(cols) {
	case 0:
	case 1:
		left = append(left, "the column "+cols[0])
	default:
		left = append(left, "the columns "+strings.Join(cols, ", "))
	}
	if len(left) == 0 {
		return t, ""
	}
	return t, fmt.Sprintf("(narrowed to %d columns, without %s: patchbench report --wide shows them)", width, strings.Join(left, " and "))
}

// TextTableWidth is the width of a table's text rendering, in
// characters (runes: the box drawing and the figures are one column
// each).
func TextTableWidth(t Table) int {
	var buf bytes.Buffer
	RenderTable(&buf, t, false)
	n := 0
	for _, line := range strings.Split(buf.String(), "\n") {
		n = max(n, utf8.RuneCountInString(line))
	}
	return n
}

func hasIntervals(t Table) bool {
	for _, h := range t.Header {
		if strings.HasSuffix(h, ciHeader) {
			return true
		}
	}
	return false
}

// dropIntervals leaves out the interval of each "X [95% CI]" column: its
// header becomes X and its cells "x [lo, hi]" become x.
func dropIntervals(t Table) Table {
	out := Table{Name: t.Name, Title: t.Title, Data: t.Data, Optional: t.Optional, Header: slices.Clone(t.Header)}
	ci := make([]bool, len(t.Header))
	for i, h := range t.Header {
		if strings.HasSuffix(h, ciHeader) {
			ci[i], out.Header[i] = true, strings.TrimSuffix(h, ciHeader)
		}
	}
	for _, r := range t.Rows {
		row := slices.Clone(r)
		for i, c := range row {
			if i < len(ci) && ci[i] {
				row[i], _, _ = strings.Cut(c, " [")
			}
		}
		out.Rows = append(out.Rows, row)
	}
	return out
}

// wrapHeaders breaks each header of several words into two lines, at the
// space (dropped) or after the slash (kept) that makes the longer line
// shortest.
func wrapHeaders(t Table) Table {
	t.Header = slices.Clone(t.Header)
	for i, h := range t.Header {
		best, cut := utf8.RuneCountInString(h), ""
		for k := 0; k < len(h); k++ {
			first, rest := "", ""
			switch h[k] {
			case ' ':
				first, rest = h[:k], h[k+1:]
			case '/':
				first, rest = h[:k+1], h[k+1:]
			default:
				continue
			}
			if first == "" || rest == "" {
				continue
			}
			if w := max(utf8.RuneCountInString(first), utf8.RuneCountInString(rest)); w < best {
				best, cut = w, first+"\n"+rest
			}
		}
		if cut != "" {
			t.Header[i] = cut
		}
	}
	return t
}

// wrapCells breaks the texts of the widest column into lines, at spaces,
// while the table is wider than width: each time down to the width of
// the next widest column (so that the long columns end alike) or what
// the excess asks, never under 12 characters; the words stay as they
// were.
func wrapCells(t Table, width int) Table {
	orig := t.Rows
	for range 200 {
		excess := TextTableWidth(t) - width
		if excess <= 0 {
			return t
		}
		col, widest, second := -1, 0, 0
		for i := range t.Header {
			switch w := columnWidth(t, i); {
			case w > widest:
				col, widest, second = i, w, widest
			case w > second:
				second = w
			}
		}
		target := max(widest-excess, min(second, widest-1), 12)
		if col < 0 || target >= widest {
			return t
		}
		rows := make([][]string, len(t.Rows))
		changed := false
		for k, r := range t.Rows {
			rows[k] = r
			if col < len(r) {
				if w := wrapText(orig[k][col], target); w != r[col] {
					rows[k] = slices.Clone(r)
					rows[k][col], changed = w, true
				}
			}
		}
		if !changed {
			return t
		}
		t.Rows = rows
	}
	return t
}

// columnWidth is the widest line of a column's cells.
func columnWidth(t Table, i int) int {
	n := 0
	for _, r := range t.Rows {
		if i < len(r) {
			for _, line := range strings.Split(r[i], "\n") {
				n = max(n, utf8.RuneCountInString(line))
			}
		}
	}
	return n
}

// wrapText breaks s into lines of at most width characters at spaces (a
// word longer than width stays whole on its line).
func wrapText(s string, width int) string {
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line := ""
		for _, word := range strings.Fields(para) {
			switch {
			case line == "":
				line = word
			case utf8.RuneCountInString(line)+1+utf8.RuneCountInString(word) <= width:
				line += " " + word
			default:
				out = append(out, line)
				line = word
			}
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// columnIndex finds a column by its header (as written in the wide form,
// without its interval or line break).
func columnIndex(t Table, name string) int {
	for i, h := range t.Header {
		h = strings.TrimSuffix(strings.ReplaceAll(h, "\n", " "), ciHeader)
		if h == name {
			return i
		}
	}
	return -1
}

func dropColumn(t Table, i int) Table {
	t.Header = slices.Delete(slices.Clone(t.Header), i, i+1)
	rows := make([][]string, len(t.Rows))
	for k, r := range t.Rows {
		if i < len(r) {
			r = slices.Delete(slices.Clone(r), i, i+1)
		}
		rows[k] = r
	}
	t.Rows = rows
	return t
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
