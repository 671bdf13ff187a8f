package scoring

import "github.com/patchbench/patchbench/bench"

// CheckResult is one rubric check judged on a run's final state: its id,
// the step it belongs to, the path and the test (bench.Check.Describe),
// and whether it held. A check of a step that never committed does not
// hold.
type CheckResult struct {
	ID   string `json:"id"`
	Step string `json:"step"`
	Path string `json:"path"`
	Test string `json:"test"`
	Held bool   `json:"held"`
}

// CheckResults judges every rubric check of case c on the final state (a
// decoded JSON value), in step order: a check holds
// when its step committed (committed maps step ids to that) and its test
// holds (bench.Check.Holds; a rule check reads the run's initial state,
// the case's own, grown at a scale, too).
func CheckResults(c *bench.Case, final any, committed map[string]bool) []CheckResult {
	initial := c.State.Value()
	var out []CheckResult
	for _, s := range c.Steps {
		for j := range s.Rubric {
			chk := &s.Rubric[j]
			out = append(out, CheckResult{ID: chk.ID, Step: s.ID, Path: chk.Path.String(), Test: chk.Describe(),
				Held: committed[s.ID] && chk.Holds(initial, final)})
		}
	}
	return out
}

// Score is the content score of judged checks: the fraction that held,
// in [0, 1]; 0 when there are none.
func Score(results []CheckResult) float64 {
	held := 0
	for _, r := range results {
		if r.Held {
			held++
		}
	}
	if len(results) == 0 {
		return 0
	}
	return float64(held) / float64(len(results))
}
