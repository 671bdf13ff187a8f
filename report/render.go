package report

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/olekukonko/tablewriter"
	"github.com/olekukonko/tablewriter/renderer"
	"github.com/olekukonko/tablewriter/tw"
)

// Formats are the formats Render writes.
var Formats = []string{"text", "markdown", "csv", "latex", "json"}

// Render writes a report in one of Formats: text (each table under its
// title, boxed by tablewriter), markdown (each under a ### heading), csv
// (one table column naming each row's table, after a header row per
// table), latex (one booktabs tabular per table) or json (the report:
// summary, tables and paired tests, indented). An unknown format writes
// nothing.
func Render(w io.Writer, rep Report, format string) error {
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
			RenderTable(w, t, false)
		case "markdown":
			fmt.Fprintf(w, "### %s\n\n", t.Title)
			RenderTable(w, t, true)
		case "latex":
			RenderLaTeX(w, t)
		}
	}
	return nil
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

var latexEscaper = strings.NewReplacer(`\`, `\textbackslash{}`, "&", `\&`, "%", `\%`, "$", `\$`, "#", `\#`, "_", `\_`, "{", `\{`, "}", `\}`, "~", `\textasciitilde{}`, "^", `\textasciicircum{}`)

// RenderLaTeX writes a table as a LaTeX tabular with booktabs rules, its
// title as a comment; a column whose every cell starts with a digit or a
// sign is right-aligned.
func RenderLaTeX(w io.Writer, t Table) {
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
