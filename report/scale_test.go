package report

import (
	"slices"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
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
