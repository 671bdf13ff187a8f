package scoring

import (
	"fmt"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// StressCell counts the artifacts of one category one configuration
// accepted (committed).
type StressCell struct {
	Config   string `json:"config"`
	Category string `json:"category"`
	Accepted int    `json:"accepted"`
	Total    int    `json:"total"`
}

// StressSet counts the paper's hidden-source artifacts one configuration
// accepted.
type StressSet struct {
	Config   string `json:"config"`
	Accepted int    `json:"accepted"`
	Total    int    `json:"total"`
}

// Mismatch is an artifact whose decision in a configuration differs from
// what its caught_by predicts.
type Mismatch struct {
	Case      string `json:"case"`
	Artifact  string `json:"artifact"`
	Config    string `json:"config"`
	Committed bool   `json:"committed"`
	Expected  bool   `json:"expected_committed"`
	Gate      string `json:"gate,omitempty"`
	Code      string `json:"code,omitempty"`
}

// StressResult is the no-model stress test's figures (PatchBench design
// §1, paper §4): accepted/total per configuration and artifact category
// (in the order of the configurations, then bench.Categories), the
// paper's hidden-source set per configuration, and the mismatches with
// caught_by.
type StressResult struct {
	Cells      []StressCell `json:"cells"`
	PaperSet   []StressSet  `json:"paper_set"`
	Mismatches []Mismatch   `json:"mismatches"`
}

// StressTally adds up the stress test's decisions into a StressResult.
type StressTally struct {
	configs []*bench.Config
	cells   map[[2]string]*StressCell
	paper   map[string]*StressSet
	res     StressResult
}

// NewStressTally starts the tally of the configurations, every category
// at 0/0.
func NewStressTally(configs []*bench.Config) *StressTally {
	t := &StressTally{configs: configs, cells: map[[2]string]*StressCell{}, paper: map[string]*StressSet{},
		res: StressResult{Mismatches: []Mismatch{}}}
	for _, cfg := range configs {
		for _, cat := range bench.Categories {
			t.cells[[2]string{cfg.Name, cat}] = &StressCell{Config: cfg.Name, Category: cat}
		}
		t.paper[cfg.Name] = &StressSet{Config: cfg.Name}
	}
	return t
}

// Add counts the decision of configuration cfg on artifact a of case c:
// accepted or not in its category (and the paper set), and a mismatch
// when the decision is not the one caught_by predicts (committed unless
// one of cfg's gates is listed). An unknown category is an error.
func (t *StressTally) Add(c *bench.Case, a *bench.Artifact, cfg *bench.Config, d *runtime.Decision) error {
	cell := t.cells[[2]string{cfg.Name, a.Category}]
	if cell == nil {
		return fmt.Errorf("case %s artifact %s: unknown category %q", c.ID, a.ID, a.Category)
	}
	cell.Total++
	if d.Committed {
		cell.Accepted++
	}
	if a.PaperSet {
		t.paper[cfg.Name].Total++
		if d.Committed {
			t.paper[cfg.Name].Accepted++
		}
	}
	expected := true
	for _, g := range a.CaughtBy {
		if cfg.Runs(g) {
			expected = false
		}
	}
	if d.Committed != expected {
		m := Mismatch{Case: c.ID, Artifact: a.ID, Config: cfg.Name, Committed: d.Committed, Expected: expected}
		if r := d.Rejection(); r != nil {
			m.Gate, m.Code = r.Gate, r.Code
		}
		t.res.Mismatches = append(t.res.Mismatches, m)
	}
	return nil
}

// Result returns the figures counted so far.
func (t *StressTally) Result() *StressResult {
	res := t.res
	res.Cells, res.PaperSet = nil, nil
	for _, cfg := range t.configs {
		for _, cat := range bench.Categories {
			res.Cells = append(res.Cells, *t.cells[[2]string{cfg.Name, cat}])
		}
		res.PaperSet = append(res.PaperSet, *t.paper[cfg.Name])
	}
	return &res
}
