package scoring

import (
	"fmt"
	"slices"
	"strings"

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

// Mismatch is an artifact that is not caught as its caught_by says, in
// words (Reason) and as data. Three kinds: in a configuration (Config),
// the decision differs from what caught_by predicts (Committed against
// Expected); in a configuration, it is rejected by a gate (Gate, Code)
// that caught_by does not name; with no configuration, a gate (Gate) on
// its own accepts it though caught_by names it, or rejects it (Code)
// though caught_by does not name it.
type Mismatch struct {
	Case      string `json:"case"`
	Artifact  string `json:"artifact"`
	Config    string `json:"config,omitempty"`
	Committed bool   `json:"committed"`
	Expected  bool   `json:"expected_committed"`
	Gate      string `json:"gate,omitempty"`
	Code      string `json:"code,omitempty"`
	Reason    string `json:"reason"`
}

// StressResult is the no-model stress test's figures (paper §4;
// docs/regression.md, patchbench stress): accepted/total per configuration
// and artifact category (in the order of the configurations, then
// bench.Categories), the paper's hidden-source set per configuration, and
// the mismatches with caught_by.
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
	m := Mismatch{Case: c.ID, Artifact: a.ID, Config: cfg.Name, Committed: d.Committed, Expected: expected}
	if r := d.Rejection(); r != nil {
		m.Gate, m.Code = r.Gate, r.Code
	}
	switch {
	case d.Committed != expected:
		m.Reason = fmt.Sprintf("in %s: committed %v, caught_by says %v", cfg.Name, d.Committed, expected)
	case !d.Committed && !slices.ContainsFunc(d.Gates, func(g runtime.GateResult) bool { return !g.Passed && slices.Contains(a.CaughtBy, g.Gate) }):
		m.Reason = fmt.Sprintf("in %s: rejected by %s (%s), a gate caught_by [%s] does not name", cfg.Name, m.Gate, m.Code, strings.Join(a.CaughtBy, ", "))
	default:
		return nil
	}
	t.res.Mismatches = append(t.res.Mismatches, m)
	return nil
}

// AddAlone checks artifact a of case c against what each gate decides on
// its own (alone: gate name to rejection code, as bench.Step.GatesAlone
// returns it): a gate caught_by names must reject it, and a gate it does
// not name must not. Each gate that does otherwise is a mismatch with no
// configuration. It is what catches a gate that stopped working while
// another gate of caught_by still rejects the artifact in every
// configuration.
func (t *StressTally) AddAlone(c *bench.Case, a *bench.Artifact, alone map[string]string) {
	listed := strings.Join(a.CaughtBy, ", ")
	for _, g := range bench.GateOrder {
		m := Mismatch{Case: c.ID, Artifact: a.ID, Gate: g, Code: alone[g]}
		switch named := slices.Contains(a.CaughtBy, g); {
		case named && alone[g] == "":
			m.Reason = fmt.Sprintf("gate %s on its own accepts it, though caught_by [%s] names it", g, listed)
		case !named && alone[g] != "":
			m.Reason = fmt.Sprintf("gate %s on its own rejects it (%s), though caught_by [%s] does not name it", g, alone[g], listed)
		default:
			continue
		}
		t.res.Mismatches = append(t.res.Mismatches, m)
	}
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
