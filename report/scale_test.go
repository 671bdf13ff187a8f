package report

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// TestScaleInTitle: the main table says the runs' scale: nothing at 1x,
// the scale when every run has one, and the scales, smallest first,
// when the runs are at several.
func TestScaleInTitle(t *testing.T) {
	cfgs := []*bench.Config{{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}}
	rec := func(round int, scale string) *rundir.Record {
		return &rundir.Record{RunID: "c/patchoptic/a/" + string(rune('0'+round)), Case: "c", Config: "patchoptic", Actor: "a", Round: round, Scale: scale, Status: rundir.StatusPassed}
	}
	for _, tt := range []struct {
		scales []string
		title  string
		want   []string
	}{
		{[]string{"", ""}, "PatchBench", nil},
		{[]string{"10MB", "10MB"}, "PatchBench at scale 10MB", []string{"10MB"}},
		{[]string{"", "1MB"}, "PatchBench at the scales 1x, 1MB (a row per scale)", []string{"1x", "1MB"}},
	} {
		s := NewSummarizer(cfgs, []string{"a"})
		for i, sc := range tt.scales {
			s.Add(rec(i+1, sc))
		}
		sum := s.Summary()
		if got := MainTable(sum).Title; got != tt.title || !slices.Equal(sum.Scales, tt.want) {
			t.Errorf("scales %q: title %q, summary scales %q; want %q, %q", tt.scales, got, sum.Scales, tt.title, tt.want)
		}
	}
}

// TestScaleColumnAndGrouping: runs at two scales in one directory make a
// row per configuration, actor and scale (1x first), with their own
// tokens per run, leaks by route and bytes read per step, and every
// table of the report gains a Scale column after Actor (and a scale
// data column after actor); runs at one scale add no column.
func TestScaleColumnAndGrouping(t *testing.T) {
	cfgs := []*bench.Config{{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}, {Name: "unconstrained", Label: "Unconstrained", View: bench.ViewFull}}
	rec := func(cfg, scale string, tokens int, leaks ...scoring.Leak) *rundir.Record {
		r := &rundir.Record{RunID: rundir.RunIDAt("c", cfg, "a", 1, scale), Case: "c", Domain: "d", Config: cfg, Actor: "a", Round: 1, Scale: scale,
			Status: rundir.StatusPassed, SemanticPass: true, LegalPass: true, Tokens: rundir.Usage{Prompt: tokens}, Leaks: leaks, Leaked: len(leaks) > 0,
			Steps: []rundir.StepRecord{{Step: "s", Attempts: 1, Committed: true, Turns: []rundir.Turn{{Calls: []rundir.ToolCall{
				{Name: "read_state", Read: true, Result: strings.Repeat("x", tokens/10)}}}}}}}
		return r
	}
	out := scoring.Leak{Secret: "k", Where: scoring.WhereOutput, Kind: "credential"}
	state := scoring.Leak{Secret: "k", Where: scoring.WhereState, Kind: "credential"}
	for _, multi := range []bool{false, true} {
		b := NewBuilder(cfgs, []string{"a"}, "patchoptic")
		b.Add(rec("patchoptic", "", 1000))
		b.Add(rec("unconstrained", "", 2000, out))
		if multi {
			b.Add(rec("patchoptic", "1MB", 5000))
			b.Add(rec("unconstrained", "1MB", 90000, out, state))
		}
		rep := b.Report()
		for _, tab := range rep.Tables {
			if got := slices.Contains(tab.Header, "Scale"); got != multi {
				t.Errorf("multi %t: table %s has a Scale column: %t (%q)", multi, tab.Name, got, tab.Header)
			}
			if got := slices.Contains(tab.Data.Columns, "scale"); got != multi {
				t.Errorf("multi %t: table %s has a scale data column: %t", multi, tab.Name, got)
			}
		}
		if !multi {
			continue
		}
		rows := rep.Summary.Rows
		if len(rows) != 4 || rows[0].Scale != "" || rows[1].Scale != "1MB" || rows[3].Scale != "1MB" || rows[3].Config != "unconstrained" {
			t.Fatalf("rows: %d, want 4 per configuration, actor and scale (1x first)", len(rows))
		}
		if rows[1].TokensMean != 5000 || rows[3].TokensMean != 90000 || rows[2].TokensMean != 2000 {
			t.Errorf("tokens per run %v, %v, %v; want 5000, 2000, 90000", rows[1].TokensMean, rows[2].TokensMean, rows[3].TokensMean)
		}
		if r := rows[3]; r.LeakedByRoute[RouteRepeated] != 1 || r.LeakedByRoute[RouteCopied] != 1 || rows[2].LeakedByRoute[RouteCopied] != 0 {
			t.Errorf("routes at 1MB %v, at 1x %v", r.LeakedByRoute, rows[2].LeakedByRoute)
		}
		if f := rows[3].Tools; f == nil || f.BytesReadPerStep != 9000 || f.Reads != 1 {
			t.Errorf("tools at 1MB %+v; want 9000 bytes read per step", f)
		}
		main := rep.Tables[0]
		if main.Header[2] != "Scale" || main.Rows[1][2] != "1MB" || main.Rows[0][2] != "1x" {
			t.Errorf("main table: header %q, rows %q", main.Header, main.Rows)
		}
		// Paired tests pair runs at their own scale: one pair each.
		if len(rep.Paired) != 2 || rep.Paired[0].Pairs != 1 || rep.Paired[1].Scale != "1MB" {
			t.Errorf("paired %+v", rep.Paired)
		}
	}
}

// TestPlotsAgainstScale: runs at two scales add the charts of tokens per
// run and leak rate against the scale (a series per configuration, the
// scales on the x axis); runs at one scale do not.
func TestPlotsAgainstScale(t *testing.T) {
	cfgs := []*bench.Config{{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}, {Name: "unconstrained", Label: "Unconstrained", View: bench.ViewFull}}
	for _, scales := range [][]string{{""}, {"", "1MB"}} {
		s := NewSummarizer(cfgs, []string{"a"})
		for _, sc := range scales {
			for _, cfg := range []string{"patchoptic", "unconstrained"} {
				s.Add(&rundir.Record{RunID: rundir.RunIDAt("c", cfg, "a", 1, sc), Case: "c", Config: cfg, Actor: "a", Round: 1, Scale: sc,
					Status: rundir.StatusPassed, Leaked: cfg == "unconstrained", Tokens: rundir.Usage{Prompt: 1000 + 50000*len(sc)}})
			}
		}
		dir := t.TempDir()
		files, err := WritePlots(dir, s.Summary(), cfgs, []string{"a"}, PlotOptions{Format: "svg"})
		if err != nil {
			t.Fatal(err)
		}
		want := 4
		if len(scales) > 1 {
			want = 6
		}
		if len(files) != want {
			t.Fatalf("scales %q: %d plots %q, want %d", scales, len(files), files, want)
		}
		if len(scales) == 1 {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, "tokens-by-scale.svg"))
		if err != nil {
			t.Fatal(err)
		}
		for _, text := range []string{"Tokens per run against scale", ">1MB<", ">1x<", ">PatchOptic<", ">Unconstrained<"} {
			if !strings.Contains(string(b), text) {
				t.Errorf("tokens-by-scale.svg lacks %q", text)
			}
		}
		if b, err := os.ReadFile(filepath.Join(dir, "leak-rate.svg")); err != nil || !strings.Contains(string(b), "at 1x") {
			t.Errorf("leak-rate.svg does not say it shows the rows at 1x (%v)", err)
		}
	}
}
