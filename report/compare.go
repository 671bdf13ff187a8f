package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// Side names the two sides of a comparison: A (before) and B (after).
const (
	SideA = 0
	SideB = 1
)

// Comparer pairs the runs of two sides (patchbench compare A B: before
// and after a verifier, actor or model change) by their key (case,
// configuration, actor, round). It keeps a few flags per run, never a
// record: records are added with Add as they are streamed.
type Comparer struct {
	configs []*bench.Config
	actors  []string
	runs    [2]map[compareKey]runFlags
}

type compareKey struct {
	caseID, config, actor string
	round                 int
}

func (k compareKey) id() string {
	return fmt.Sprintf("%s/%s/%s/%d", k.caseID, k.config, k.actor, k.round)
}

// runFlags is what a comparison keeps of one run.
type runFlags struct {
	status                           string
	leaked, semantic, legal, illegal bool
}

// CompareMetrics are the rates a comparison compares, in order, with
// their names in Data (leak_rate…) and as printed.
var CompareMetrics = []struct{ Name, Title string }{
	{"leak_rate", "Leak rate"},
	{"illegal_commit_rate", "Illegal commits"},
	{"semantic_pass", "Semantic pass"},
	{"legal_pass", "Legal pass"},
}

// metric is the flag of a run that CompareMetrics[i] counts.
func (f runFlags) metric(i int) bool {
	switch i {
	case 0:
		return f.leaked
	case 1:
		return f.illegal
	case 2:
		return f.semantic
	default:
		return f.legal
	}
}

// NewComparer starts a comparison of the runs of configs and actorNames
// (those of both sides, in the order rows are wanted).
func NewComparer(configs []*bench.Config, actorNames []string) *Comparer {
	return &Comparer{configs: configs, actors: actorNames, runs: [2]map[compareKey]runFlags{{}, {}}}
}

// Add keeps one run of side (SideA or SideB): the last record of a run,
// its Actor as the side's comparison names it.
func (c *Comparer) Add(side int, r *rundir.Record) {
	c.runs[side][compareKey{r.Case, r.Config, r.Actor, r.Round}] = runFlags{status: r.Status, leaked: r.Leaked,
		semantic: r.SemanticPass, legal: r.LegalPass, illegal: len(r.IllegalCommits) > 0}
}

// Comparison is what Compare finds: the runs paired (held by both sides),
// those only one side holds, the regressions (runs that passed in A and
// did not in B, in the order of their key: case, configuration, actor,
// round), the runs fixed (the other way), and per
// configuration, actor and metric the rates of both sides with their
// paired test.
type Comparison struct {
	Paired      int          `json:"paired"`
	Fixed       int          `json:"fixed"`
	OnlyA       int          `json:"only_a"`
	OnlyB       int          `json:"only_b"`
	SharedOnly  bool         `json:"shared_only"`
	Regressions []Regression `json:"regressions"`
	Deltas      []Delta      `json:"deltas"`
}

// Regression is a run that passed in A and did not pass in B: failed,
// error, pending, or "missing" (B stopped before it).
type Regression struct {
	RunID   string `json:"run_id"`
	StatusA string `json:"status_a"`
	StatusB string `json:"status_b"`
	LeakedB bool   `json:"leaked_b"`
}

// Delta is one metric of one configuration and actor on both sides: the
// runs with an outcome and the rate on each (over every such run of the
// side, or only over the pairs with SharedOnly), the change B − A, and
// the exact McNemar test over the pairs (runs with an outcome on both
// sides): B counts the pairs where only A has the event (a leak, a pass…),
// C those where only B has it. RateA and RateB are null when the side has
// no run with an outcome.
type Delta struct {
	Config string          `json:"config"`
	Label  string          `json:"label"`
	Actor  string          `json:"actor"`
	Metric string          `json:"metric"`
	RunsA  int             `json:"runs_a"`
	RateA  *float64        `json:"rate_a"`
	RunsB  int             `json:"runs_b"`
	RateB  *float64        `json:"rate_b"`
	Change *float64        `json:"change"`
	Pairs  int             `json:"pairs"`
	Test   scoring.McNemar `json:"mcnemar"`
}

// Compare pairs the runs added. With sharedOnly, runs that one side does
// not hold are left out of everything (a run missing from B is no
// regression, and the rates are over the pairs only); otherwise a run
// that passed in A and is missing from B is a regression, and each
// side's rates are over all its runs with an outcome.
func (c *Comparer) Compare(sharedOnly bool) Comparison {
	a, b := c.runs[SideA], c.runs[SideB]
	cmp := Comparison{SharedOnly: sharedOnly, Regressions: []Regression{}, Deltas: []Delta{}}
	var regressed []compareKey
	for k, fa := range a {
		fb, ok := b[k]
		switch {
		case !ok:
			cmp.OnlyA++
			if fa.status == rundir.StatusPassed && !sharedOnly {
				regressed = append(regressed, k)
			}
			continue
		case fa.status == rundir.StatusPassed && fb.status != rundir.StatusPassed:
			regressed = append(regressed, k)
		case fa.status != rundir.StatusPassed && fb.status == rundir.StatusPassed:
			cmp.Fixed++
		}
		cmp.Paired++
	}
	cmp.OnlyB = len(b) - cmp.Paired
	// In the order of the key, rounds by number.
	sort.Slice(regressed, func(i, j int) bool {
		x, y := regressed[i], regressed[j]
		if x.caseID != y.caseID {
			return x.caseID < y.caseID
		}
		if x.config != y.config {
			return x.config < y.config
		}
		if x.actor != y.actor {
			return x.actor < y.actor
		}
		return x.round < y.round
	})
	for _, k := range regressed {
		r := Regression{RunID: k.id(), StatusA: a[k].status, StatusB: "missing"}
		if fb, ok := b[k]; ok {
			r.StatusB, r.LeakedB = fb.status, fb.leaked
		}
		cmp.Regressions = append(cmp.Regressions, r)
	}
	cmp.Deltas = c.deltas(sharedOnly)
	return cmp
}

// deltaCount is the counts of one configuration, actor and metric.
type deltaCount struct {
	runs, events        [2]int
	pairs, onlyA, onlyB int
}

// deltas computes the Delta of every configuration, actor and metric
// that both sides have runs of, in the order of configs, actors and
// CompareMetrics.
func (c *Comparer) deltas(sharedOnly bool) []Delta {
	type group struct{ config, actor string }
	counts := map[group]*[4]deltaCount{}
	get := func(k compareKey) *[4]deltaCount {
		g := group{k.config, k.actor}
		if counts[g] == nil {
			counts[g] = &[4]deltaCount{}
		}
		return counts[g]
	}
	has := func(f runFlags) bool { return f.status == rundir.StatusPassed || f.status == rundir.StatusFailed }
	for side, runs := range c.runs {
		other := c.runs[1-side]
		for k, f := range runs {
			if !has(f) {
				continue
			}
			fo, ok := other[k]
			paired := ok && has(fo)
			if sharedOnly && !paired {
				continue
			}
			d := get(k)
			for m := range CompareMetrics {
				d[m].runs[side]++
				if f.metric(m) {
					d[m].events[side]++
				}
				if paired && side == SideA {
					d[m].pairs++
					switch {
					case f.metric(m) && !fo.metric(m):
						d[m].onlyA++
					case fo.metric(m) && !f.metric(m):
						d[m].onlyB++
					}
				}
			}
		}
	}
	var out []Delta
	for _, cfg := range c.configs {
		for _, a := range c.actors {
			d := counts[group{cfg.Name, a}]
			if d == nil || d[0].runs[SideA] == 0 && d[0].runs[SideB] == 0 {
				continue
			}
			for m, metric := range CompareMetrics {
				x := d[m]
				row := Delta{Config: cfg.Name, Label: cfg.Label, Actor: a, Metric: metric.Name, RunsA: x.runs[SideA], RunsB: x.runs[SideB],
					Pairs: x.pairs, Test: scoring.ExactMcNemar(x.onlyA, x.onlyB)}
				row.RateA, row.RateB = share(x.events[SideA], x.runs[SideA]), share(x.events[SideB], x.runs[SideB])
				if row.RateA != nil && row.RateB != nil {
					ch := *row.RateB - *row.RateA
					row.Change = &ch
				}
				out = append(out, row)
			}
		}
	}
	return out
}

// share is k/n, or nil when n is 0.
func share(k, n int) *float64 {
	if n == 0 {
		return nil
	}
	x := float64(k) / float64(n)
	return &x
}

// DeltaTable is a comparison's rates as a table: per configuration and
// actor, the runs of A and of B with an outcome and the pairs, then for
// each of CompareMetrics a cell "A → B (change B − A, p = the exact McNemar
// test over the pairs)". Its Data is one row per configuration, actor and
// metric, one number per cell: runs_a, rate_a, runs_b, rate_b, change,
// pairs, a_not_b and b_not_a (the pairs where only A, or only B, has the
// event: a leak, an illegal commit, a pass), p (empty with no pair).
func DeltaTable(cmp Comparison) Table {
	scope := "every run with an outcome on each side"
	if cmp.SharedOnly {
		scope = "the runs both sides hold"
	}
	t := Table{Name: "deltas", Title: "B against A: rates over " + scope + " (A → B, change, exact McNemar p over the pairs)",
		Header: []string{"Configuration", "Actor", "Runs A", "Runs B", "Pairs"},
		Data: &Data{Columns: []string{"config", "label", "actor", "metric", "runs_a", "rate_a", "runs_b", "rate_b", "change",
			"pairs", "a_not_b", "b_not_a", "p"}}}
	for _, m := range CompareMetrics {
		t.Header = append(t.Header, m.Title)
	}
	var row []string
	for i, d := range cmp.Deltas {
		m := i % len(CompareMetrics)
		if m == 0 {
			row = []string{d.Label, d.Actor, fmt.Sprint(d.RunsA), fmt.Sprint(d.RunsB), fmt.Sprint(d.Pairs)}
		}
		row = append(row, deltaCell(d))
		if m == len(CompareMetrics)-1 {
			t.Rows = append(t.Rows, row)
		}
		var p any = d.Test.P
		if d.Pairs == 0 {
			p = nil
		}
		t.Data.add(d.Config, d.Label, d.Actor, d.Metric, d.RunsA, optionalValue(d.RateA), d.RunsB, optionalValue(d.RateB),
			optionalValue(d.Change), d.Pairs, d.Test.B, d.Test.C, p)
	}
	return t
}

// deltaCell writes one metric of a Delta: "0.000 → 0.500 (+0.500, p = 1)",
// the change left out when a side has no rate, p when there is no pair.
func deltaCell(d Delta) string {
	s := optional(d.RateA) + " → " + optional(d.RateB)
	var notes []string
	if d.Change != nil {
		ch := fmt.Sprintf("%+.3f", *d.Change)
		if ch == "+0.000" || ch == "-0.000" {
			ch = "0.000"
		}
		notes = append(notes, ch)
	}
	if d.Pairs > 0 {
		notes = append(notes, "p = "+PValue(d.Test.P))
	}
	if len(notes) > 0 {
		s += " (" + strings.Join(notes, ", ") + ")"
	}
	return s
}

// CompareNames are the configurations and actors of two sides, for
// NewComparer: A's in their order, then those only B has.
func CompareNames(configsA, configsB []*bench.Config, actorsA, actorsB []string) ([]*bench.Config, []string) {
	configs := slices.Clone(configsA)
	for _, c := range configsB {
		if !slices.ContainsFunc(configs, func(x *bench.Config) bool { return x.Name == c.Name }) {
			configs = append(configs, c)
		}
	}
	actorNames := slices.Clone(actorsA)
	for _, a := range actorsB {
		if !slices.Contains(actorNames, a) {
			actorNames = append(actorNames, a)
		}
	}
	return configs, actorNames
}
