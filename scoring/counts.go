package scoring

import "github.com/patchbench/patchbench/runtime"

// Rejections counts the rejected proposals of a set of runs (the report's
// rejections by gate and code, docs/reports.md): every failed gate result by
// its code and by its gate, and Blocked, the proposals that one of the
// configuration's own gates (scope, acl, phase, schema, invariants)
// rejected; parse and apply failures are not counted as blocked.
type Rejections struct {
	ByCode, ByGate map[string]int
	Blocked        int
}

// NewRejections returns empty counts.
func NewRejections() Rejections {
	return Rejections{ByCode: map[string]int{}, ByGate: map[string]int{}}
}

// Add counts the decisions of one attempt (the enforcing gates' results).
func (r *Rejections) Add(decisions []runtime.GateResult) {
	blocked := false
	for _, g := range decisions {
		if !g.Passed {
			r.ByCode[g.Code]++
			r.ByGate[g.Gate]++
			blocked = blocked || (g.Gate != runtime.GateParse && g.Gate != runtime.GateApply)
		}
	}
	if blocked {
		r.Blocked++
	}
}

// IllegalCommits counts the illegal commits of a set of runs (docs/run.md):
// the runs with at least one, the commits, and the commits by the audit's
// first failed gate and by its code.
type IllegalCommits struct {
	Runs, Commits  int
	ByGate, ByCode map[string]int
}

// NewIllegalCommits returns empty counts.
func NewIllegalCommits() IllegalCommits {
	return IllegalCommits{ByGate: map[string]int{}, ByCode: map[string]int{}}
}

// AddRun counts one run's illegal commits, each as its (gate, code).
func (c *IllegalCommits) AddRun(commits [][2]string) {
	if len(commits) > 0 {
		c.Runs++
	}
	for _, gc := range commits {
		c.Commits++
		c.ByGate[gc[0]]++
		c.ByCode[gc[1]]++
	}
}
