package report_test

import (
	"bytes"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// exampleReport is the report of the example case, one round of the
// no-model actors.
func exampleReport(t *testing.T) report.Report {
	t.Helper()
	recs, configs := exampleRun(t, 1)
	b := report.NewBuilder(configs, actorNames, "patchoptic")
	for _, r := range recs {
		b.Add(r)
	}
	return b.Report()
}

// TestFitText narrows every table of a report to several widths: each
// fits when it can, and every cell it keeps is the wide table's figure as
// written there (its interval cut off when intervals are left out); the
// note names what was left out.
func TestFitText(t *testing.T) {
	rep := exampleReport(t)
	for _, width := range []int{200, 120, 100, 80} {
		for _, intervals := range []bool{false, true} {
			for _, wide := range rep.Tables {
				narrow, note := report.FitText(wide, width, intervals)
				got := report.TextTableWidth(narrow)
				if report.TextTableWidth(wide) <= width {
					if note != "" || got != report.TextTableWidth(wide) {
						t.Errorf("%s at %d: a table that fits was narrowed (%q)", wide.Name, width, note)
					}
					continue
				}
				if !intervals && strings.Contains(strings.Join(wide.Header, ""), "[95% CI]") && !strings.Contains(note, "the 95% intervals") {
					t.Errorf("%s at %d: the intervals left out, the note does not say so: %q", wide.Name, width, note)
				}
				if wide.Name == "main" && width >= 120 && !intervals && got > width {
					t.Errorf("main at %d (intervals %v): %d columns wide", width, intervals, got)
				}
				checkSameFigures(t, wide, narrow, intervals)
				for _, h := range wide.Header {
					name := strings.TrimSuffix(h, " [95% CI]")
					if !hasColumn(narrow, name) && !strings.Contains(note, name) {
						t.Errorf("%s at %d: column %q left out, the note does not say so: %s", wide.Name, width, name, note)
					}
				}
			}
		}
	}
}

// checkSameFigures checks that each cell of the narrow table is the wide
// table's cell of the same row and column, or its figure without the
// interval.
func checkSameFigures(t *testing.T, wide, narrow report.Table, intervals bool) {
	t.Helper()
	if len(narrow.Rows) != len(wide.Rows) {
		t.Fatalf("%s: %d rows narrowed, %d wide", wide.Name, len(narrow.Rows), len(wide.Rows))
	}
	for j, h := range narrow.Header {
		name := strings.ReplaceAll(h, "\n", " ")
		name = strings.ReplaceAll(name, "/ ", "/")
		i := -1
		for k, wh := range wide.Header {
			if wh == name || strings.TrimSuffix(wh, " [95% CI]") == name {
				i = k
			}
		}
		if i < 0 {
			t.Errorf("%s: narrow column %q is not in the wide table", wide.Name, h)
			continue
		}
		for r := range wide.Rows {
			w, n := wide.Rows[r][i], strings.ReplaceAll(narrow.Rows[r][j], "\n", " ")
			figure, _, _ := strings.Cut(w, " [")
			if n != w && (intervals || n != figure) {
				t.Errorf("%s row %d column %q: %q narrowed, %q wide", wide.Name, r, name, n, w)
			}
		}
	}
}

func hasColumn(t report.Table, name string) bool {
	for _, h := range t.Header {
		h = strings.ReplaceAll(strings.ReplaceAll(h, "\n", " "), "/ ", "/")
		if h == name || strings.TrimSuffix(h, " [95% CI]") == name {
			return true
		}
	}
	return false
}

// TestRenderWidth: text with a width narrows the main table and says so;
// without one (--wide) the tables are whole; Markdown is never narrowed.
func TestRenderWidth(t *testing.T) {
	rep := exampleReport(t)
	render := func(o report.RenderOptions) string {
		var buf bytes.Buffer
		if err := report.RenderWith(&buf, rep, o); err != nil {
			t.Fatal(err)
		}
		return buf.String()
	}
	narrow := render(report.RenderOptions{Format: "text", Width: report.TextWidth})
	wide := render(report.RenderOptions{Format: "text"})
	for _, line := range strings.Split(narrow, "\n") {
		if n := len([]rune(line)); n > report.TextWidth && strings.ContainsAny(line, "│┌└├") {
			t.Errorf("a table line of %d columns: %s", n, line)
		}
	}
	if !strings.Contains(narrow, "(narrowed to 120 columns, without the 95% intervals") || strings.Contains(wide, "narrowed") {
		t.Errorf("the narrowing note is missing, or in the wide form")
	}
	if !strings.Contains(wide, "Leak rate [95% CI]") || strings.Contains(narrow, "Leak rate [95% CI]") {
		t.Error("the wide form lacks the intervals, or the narrow form has them")
	}
	if md, mdw := render(report.RenderOptions{Format: "markdown", Width: report.TextWidth}), render(report.RenderOptions{Format: "markdown"}); md != mdw {
		t.Error("Markdown was narrowed")
	}
	if kept := render(report.RenderOptions{Format: "text", Width: report.TextWidth, Intervals: true}); !strings.Contains(kept, "[95% CI]") {
		t.Error("--intervals left the intervals out")
	}
}

// TestFitTextWraps narrows a table of long texts (as the paper table
// is): it fits where its longest words allow (not at 70), and its cells
// hold the same words.
func TestFitTextWraps(t *testing.T) {
	long := "openai:gpt-5-mini, 3 rounds, the server's temperature, 1 attempt per step, gpt-5-mini-2025-08-07"
	wide := report.Table{Name: "paper", Header: []string{"Result", "Paper", "This run", "Produced by"},
		Rows: [][]string{{"leak rate, full-state configurations", "31.5 % (14.5 per round of 46)", "100.0 % (1.0 per round)", long},
			{"semantic pass, Unconstrained → PatchOptic", "0.61 → 0.78 to 0.80", "not measured", "no live model in this run (actors: reference, oversharer, follower)"}}}
	for _, width := range []int{120, 90, 70} {
		narrow, _ := report.FitText(wide, width, false)
		if got := report.TextTableWidth(narrow); got > width && width >= 90 {
			t.Errorf("at %d: %d columns wide", width, got)
		}
		for r := range wide.Rows {
			for c := range wide.Rows[r] {
				if got := strings.ReplaceAll(narrow.Rows[r][c], "\n", " "); got != wide.Rows[r][c] {
					t.Errorf("at %d, cell %d,%d: %q, want %q", width, r, c, got, wide.Rows[r][c])
				}
			}
		}
	}
}

// TestRepeatNote: actors that answer alike in every round get a note that
// their intervals narrow without evidence; one round, or an actor whose
// runs differ between rounds, gets none.
func TestRepeatNote(t *testing.T) {
	recs, configs := exampleRun(t, 2)
	note := func(recs []*rundir.Record) string {
		b := report.NewBuilder(configs, actorNames, "patchoptic")
		for _, r := range recs {
			b.Add(r)
		}
		for _, n := range b.Report().Notes {
			if strings.Contains(n, "answered alike") {
				return n
			}
		}
		return ""
	}
	if n := note(recs); !strings.HasPrefix(n, "reference, oversharer, follower answered alike in each of 2 rounds") {
		t.Errorf("two rounds of the no-model actors: %q", n)
	}
	var one []*rundir.Record
	for _, r := range recs {
		if r.Round == 1 {
			one = append(one, r)
		}
	}
	if n := note(one); n != "" {
		t.Errorf("one round: %q", n)
	}
	// The follower answers otherwise in round 2 of one run.
	var changed []*rundir.Record
	done := false
	for _, r := range recs {
		if r.Actor == "follower" && r.Round == 2 && !done {
			c := *r
			c.Tokens.Completion++
			r, done = &c, true
		}
		changed = append(changed, r)
	}
	if n := note(changed); !strings.HasPrefix(n, "reference, oversharer answered alike") {
		t.Errorf("the follower varies: %q", n)
	}
}

// TestSplitColumns cuts a table of single-word headers that no narrowing
// fits into parts that fit, each with the first two columns, together
// holding every other column once, in order, with its cells.
func TestSplitColumns(t *testing.T) {
	wide := report.Table{Name: "kinds", Header: []string{"Configuration", "Actor"}}
	for i := range 12 {
		wide.Header = append(wide.Header, fmt.Sprintf("confidential%02d", i))
	}
	for r := range 3 {
		row := []string{"Unconstrained", fmt.Sprintf("actor-%d", r)}
		for i := range 12 {
			row = append(row, fmt.Sprint(r*100+i))
		}
		wide.Rows = append(wide.Rows, row)
	}
	parts := report.SplitColumns(wide, 120)
	if len(parts) < 2 {
		t.Fatalf("%d parts", len(parts))
	}
	var cols []string
	for _, p := range parts {
		if w := report.TextTableWidth(p); w > 120 {
			t.Errorf("a part is %d columns wide", w)
		}
		if p.Header[0] != "Configuration" || p.Header[1] != "Actor" {
			t.Errorf("a part starts with %q", p.Header[:2])
		}
		for r, row := range p.Rows {
			for c := 2; c < len(row); c++ {
				if want := fmt.Sprint(r*100 + len(cols) + c - 2); row[c] != want {
					t.Errorf("cell %d,%s: %q, want %s", r, p.Header[c], row[c], want)
				}
			}
			if row[1] != wide.Rows[r][1] {
				t.Errorf("row %d of a part is %q", r, row[1])
			}
		}
		cols = append(cols, p.Header[2:]...)
	}
	if !slices.Equal(cols, wide.Header[2:]) {
		t.Errorf("the parts hold the columns %q", cols)
	}
	if one := report.SplitColumns(wide, 1000); len(one) != 1 {
		t.Errorf("a table that fits is cut in %d", len(one))
	}
}

// TestRenderTextSplitByScaleAndAttack: a table keyed by configuration,
// actor, scale and attack that is split to fit repeats its first four
// columns, and its note says so (it panicked naming them).
func TestRenderTextSplitByScaleAndAttack(t *testing.T) {
	wide := report.Table{Name: "kinds", Header: []string{"Configuration", "Actor", "Scale", "Attack"}}
	for i := range 12 {
		wide.Header = append(wide.Header, fmt.Sprintf("confidential%02d", i))
	}
	row := []string{"Unconstrained", "follower", "200KB", "ignore_previous"}
	for i := range 12 {
		row = append(row, fmt.Sprint(i))
	}
	wide.Rows = append(wide.Rows, row)
	var b bytes.Buffer
	report.RenderText(&b, wide, report.RenderOptions{Format: "text", Width: 120})
	if !strings.Contains(b.String(), "the first four columns repeated") {
		t.Errorf("the note does not name four key columns:\n%s", b.String())
	}
}
