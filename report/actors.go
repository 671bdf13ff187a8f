package report

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// ActorMetrics are the figures an actor comparison tests (patchbench
// compare --actors): the rates of CompareMetrics (leak, illegal commit,
// attack success, semantic pass, legal pass), each over the pairs with an
// outcome on both sides (attack success over those of cases with prompt
// injections).
var ActorMetrics = CompareMetrics[:5]

// ActorComparer pairs the runs of two actors of the same run directories
// (patchbench compare --actors A,B): a run of actor A pairs with the run
// of actor B of the same case, configuration, round and scale, every
// dimension of the run id but the actor. It keeps a few figures per run,
// never a record.
type ActorComparer struct {
	configs []*bench.Config
	actors  [2]string
	runs    [2]map[compareKey]runFlags
	// outcome is each side's outcome of a (case, configuration, scale,
	// attack) in its first round seen; varies whether another round
	// differed; rounds the rounds seen.
	outcome [2]map[compareKey]string
	varies  [2]bool
	rounds  [2]map[int]bool
	// attacks are the attacks of the runs kept (AttackName, "" for none).
	attacks map[string]bool
}

// NewActorComparer starts the comparison of actor a (side A, the base)
// with actor b (side B) over configs, in the order rows are wanted.
func NewActorComparer(configs []*bench.Config, a, b string) *ActorComparer {
	return &ActorComparer{configs: configs, actors: [2]string{a, b}, runs: [2]map[compareKey]runFlags{{}, {}},
		outcome: [2]map[compareKey]string{{}, {}}, rounds: [2]map[int]bool{{}, {}}, attacks: map[string]bool{}}
}

// Add keeps a run of either actor (by the name the comparison gives it,
// rundir.Set.EachHead's); the runs of other actors are left out.
func (c *ActorComparer) Add(r *rundir.Record) {
	side := -1
	switch r.Actor {
	case c.actors[SideA]:
		side = SideA
	case c.actors[SideB]:
		side = SideB
	}
	if side < 0 {
		return
	}
	f := runFlags{status: r.Status, leaked: r.Leaked, semantic: r.SemanticPass, legal: r.LegalPass,
		illegal: len(r.IllegalCommits) > 0, content: r.ContentScore}
	if r.Attack != nil {
		f.attacked, f.attackSucceeded = true, r.Attack.Succeeded
	}
	c.runs[side][compareKey{caseID: r.Case, config: r.Config, round: r.Round, scale: r.Scale, attack: r.AttackName}] = f
	sig := fmt.Sprintf("%s|%t|%t|%t|%d|%g|%d|%d", r.Status, r.Leaked, r.SemanticPass, r.LegalPass, len(r.IllegalCommits), r.ContentScore, r.Tokens.Prompt, r.Tokens.Completion)
	k := compareKey{caseID: r.Case, config: r.Config, scale: r.Scale, attack: r.AttackName}
	if prev, ok := c.outcome[side][k]; !ok {
		c.outcome[side][k] = sig
	} else if prev != sig {
		c.varies[side] = true
	}
	c.rounds[side][r.Round] = true
	c.attacks[r.AttackName] = true
}

// ActorDelta is one rate of one configuration over the pairs of an actor
// comparison: the rate of A and of B (null with no pair), the paired
// difference B − A, the discordant pairs (OnlyA: A has the event and B
// not; OnlyB the reverse), the exact McNemar p over them, its Holm
// adjustment over the tests of the table that can reach alpha (null for
// a test that cannot), and whether B is worse or
// better than A by at least MinDelta at a Holm p ≤ Alpha.
type ActorDelta struct {
	Config string   `json:"config"`
	Label  string   `json:"label"`
	Metric string   `json:"metric"`
	Title  string   `json:"title"`
	Pairs  int      `json:"pairs"`
	A      *float64 `json:"a"`
	B      *float64 `json:"b"`
	Change *float64 `json:"change"`
	OnlyA  int      `json:"only_a"`
	OnlyB  int      `json:"only_b"`
	P      *float64 `json:"p"`
	PHolm  *float64 `json:"p_holm"`
	Worse  bool     `json:"b_worse"`
	Better bool     `json:"b_better"`
	// WorseRuns are the run ids of A's runs (at most MaxWorseRuns) whose
	// pair moved the bad way in B.
	WorseRuns []string `json:"worse_runs"`
	worse     int      // the metric's Worse sign
}

// WorsePairs is the number of pairs that moved the bad way in B: those
// where only B has the event of a rate where more is worse (leaks), only
// A of one where less is worse (passes).
func (d ActorDelta) WorsePairs() int {
	if d.worse > 0 {
		return d.OnlyB
	}
	return d.OnlyA
}

// ActorComparison is what ActorComparer.Compare finds: the actors, the
// pairs (both actors ran the key), the runs of one actor the other lacks,
// the pairs left out of every rate for an error or pending run on a side,
// the settings of the verdict, the number of tests Holm's correction ran
// over, every rate's ActorDelta and, in the same order, those where B is
// worse. Gate says whether B being worse fails (compare --gate).
type ActorComparison struct {
	ActorA    string       `json:"actor_a"`
	ActorB    string       `json:"actor_b"`
	Paired    int          `json:"paired"`
	OnlyA     int          `json:"only_a"`
	OnlyB     int          `json:"only_b"`
	Unsettled int          `json:"unsettled_pairs"`
	Alpha     float64      `json:"alpha"`
	MinDelta  float64      `json:"min_delta"`
	Gate      bool         `json:"gate"`
	Tested    int          `json:"holm_tests"`
	Deltas    []ActorDelta `json:"deltas"`
	Worse     []ActorDelta `json:"b_worse"`
	// PairedOn names what the two runs of a pair share: the case,
	// configuration, round and scale, and the attack when the runs are
	// under several.
	PairedOn []string `json:"paired_on"`
	// Repeated names the actors of several rounds that answered alike in
	// every round (the no-model actors do), with the number of rounds:
	// their pairs repeat one round's, so the tests count each case that
	// many times and their p are smaller than the evidence.
	Repeated []string `json:"repeated_actors"`
	Rounds   int      `json:"rounds"`
}

// Failed reports whether the gate fails: Gate is set and B is worse than
// A on some rate.
func (c ActorComparison) Failed() bool { return c.Gate && len(c.Worse) > 0 }

// Compare pairs the runs added and tests every rate of every
// configuration: the exact McNemar test over the discordant pairs,
// Holm-adjusted over the tests of the table that can reach alpha (Holm
// 1979; Tarone 1990: with d discordant pairs the smallest two-sided p is
// 2·(1/2)^d, so a test with fewer than 6 at alpha 0.05 can never be
// rejected and would only dilute the others; it keeps its p and no Holm
// p). A null comparison then fails at most alpha of the time, however
// many configurations × rates the table holds. B is worse than A on a rate when it moved the bad way (leaks,
// illegal commits, attack success up; passes down) by at least minDelta
// with a Holm p ≤ alpha; better the other way. gate is only recorded.
func (c *ActorComparer) Compare(alpha, minDelta float64, gate bool) ActorComparison {
	a, b := c.runs[SideA], c.runs[SideB]
	out := ActorComparison{ActorA: c.actors[SideA], ActorB: c.actors[SideB], Alpha: alpha, MinDelta: minDelta, Gate: gate,
		Deltas: []ActorDelta{}, Worse: []ActorDelta{}, PairedOn: []string{"case", "config", "round", "scale"}, Repeated: []string{}}
	if len(c.attacks) > 1 {
		// Pairs are made under one attack; name it where it tells runs
		// apart.
		out.PairedOn = append(out.PairedOn, "attack")
	}
	for side := range c.actors {
		out.Rounds = max(out.Rounds, len(c.rounds[side]))
		if len(c.rounds[side]) > 1 && !c.varies[side] {
			out.Repeated = append(out.Repeated, c.actors[side])
		}
	}
	type count struct {
		pairs      int
		sumA, sumB float64
		onlyA      int
		onlyB      int
		worse      []compareKey
	}
	counts := map[string][]count{}
	for k, fa := range a {
		fb, ok := b[k]
		if !ok {
			out.OnlyA++
			continue
		}
		out.Paired++
		if !bothOutcome(fa, fb) {
			out.Unsettled++
		}
		if counts[k.config] == nil {
			counts[k.config] = make([]count, len(ActorMetrics))
		}
		for m, metric := range ActorMetrics {
			if !metric.pairs(fa, fb) {
				continue
			}
			d := &counts[k.config][m]
			d.pairs++
			x, y := metric.event(fa), metric.event(fb)
			d.sumA += b2f(x)
			d.sumB += b2f(y)
			switch {
			case x && !y:
				d.onlyA++
			case y && !x:
				d.onlyB++
			}
			if x != y && (y == (metric.Worse > 0)) {
				d.worse = append(d.worse, k)
			}
		}
	}
	out.OnlyB = len(b) - out.Paired
	var ps []float64
	var tested []int
	for _, cfg := range c.configs {
		ds := counts[cfg.Name]
		if ds == nil {
			continue
		}
		for m, metric := range ActorMetrics {
			x := ds[m]
			row := ActorDelta{Config: cfg.Name, Label: cfg.Label, Metric: metric.Name, Title: metric.Title, Pairs: x.pairs,
				OnlyA: x.onlyA, OnlyB: x.onlyB, WorseRuns: []string{}, worse: metric.Worse}
			if x.pairs > 0 {
				n := float64(x.pairs)
				ra, rb := scoring.Round(x.sumA/n), scoring.Round(x.sumB/n)
				ch := scoring.Round(rb - ra)
				p := scoring.ExactMcNemar(x.onlyA, x.onlyB).P
				row.A, row.B, row.Change, row.P = &ra, &rb, &ch, &p
				if canReach(x.onlyA+x.onlyB, alpha) {
					ps = append(ps, p)
					tested = append(tested, len(out.Deltas))
				}
			}
			sort.Slice(x.worse, func(i, j int) bool { return x.worse[i].less(x.worse[j]) })
			for i, k := range x.worse {
				if i == MaxWorseRuns {
					break
				}
				k.actor = c.actors[SideA]
				row.WorseRuns = append(row.WorseRuns, k.id())
			}
			out.Deltas = append(out.Deltas, row)
		}
	}
	// The p-values are in [0, 1] (ExactMcNemar), so Holm has no error.
	adj, _ := scoring.Holm(ps)
	for j, i := range tested {
		out.Deltas[i].PHolm = &adj[j]
	}
	out.Tested = len(ps)
	for i := range out.Deltas {
		d := &out.Deltas[i]
		if d.Change == nil || d.PHolm == nil || *d.PHolm > alpha {
			continue
		}
		moved := float64(d.worse) * *d.Change
		d.Worse = moved >= minDelta-1e-9 && moved > 0
		d.Better = -moved >= minDelta-1e-9 && moved < 0
		if d.Worse {
			out.Worse = append(out.Worse, *d)
		}
	}
	return out
}

// RepeatNote says, when every actor compared answered alike in each of
// several rounds, that the tests count each case once per round; "" when
// one of them varied, or there was one round. A sampling actor's rounds
// are evidence; a deterministic pair's are copies.
func (c ActorComparison) RepeatNote() string {
	if c.Rounds < 2 || len(c.Repeated) < 2 {
		return ""
	}
	return fmt.Sprintf("%s and %s answered alike in each of %d rounds: every pair repeats one round's, so each case counts %d times in the tests and their p are smaller than the evidence; one round's directory (run --rounds 1) gives the honest p.", c.Repeated[0], c.Repeated[1], c.Rounds, c.Rounds)
}

// ActorDeltaTable is an actor comparison as a table: one row per
// configuration and rate (the configuration written on its first row),
// with the pairs, "A → B", the paired difference B − A, the discordant
// pairs (only A / only B has the event), the exact McNemar p, the
// Holm-adjusted p and the verdict ("B worse", "B better" or ""). Its Data
// is one row per ActorDelta: config, label, metric, pairs, a, b, change,
// only_a, only_b, p, p_holm (empty where null) and verdict ("b_worse",
// "b_better" or "").
func ActorDeltaTable(cmp ActorComparison) Table {
	on := slices.Clone(cmp.PairedOn)
	if len(on) == 0 {
		on = []string{"case", "config", "round", "scale"}
	}
	if i := slices.Index(on, "config"); i >= 0 {
		on[i] = "configuration"
	}
	t := Table{Name: "actors", Title: fmt.Sprintf("%s (B) against %s (A), paired on (%s): B is worse or better when a rate moves by at least %g with a Holm-adjusted p ≤ %g", cmp.ActorB, cmp.ActorA, strings.Join(on, ", "), cmp.MinDelta, cmp.Alpha),
		Header: []string{"Configuration", "Figure", "Pairs", "A → B", "B − A", "Only A/only B", "p", "Holm p", "Verdict"},
		Data:   &Data{Columns: []string{"config", "label", "metric", "pairs", "a", "b", "change", "only_a", "only_b", "p", "p_holm", "verdict"}}}
	last := ""
	for _, d := range cmp.Deltas {
		verdict, data := "", ""
		switch {
		case d.Worse:
			verdict, data = "B WORSE", "b_worse"
		case d.Better:
			verdict, data = "B better", "b_better"
		}
		var p, holmP any
		pCell, holmCell := "-", "-"
		if d.P != nil {
			p, pCell = *d.P, PValue(*d.P)
		}
		if d.PHolm != nil {
			holmP, holmCell = *d.PHolm, PValue(*d.PHolm)
		}
		t.Data.add(d.Config, d.Label, d.Metric, d.Pairs, optionalValue(d.A), optionalValue(d.B), optionalValue(d.Change), d.OnlyA, d.OnlyB, p, holmP, data)
		cfg := d.Label
		if d.Config == last {
			cfg = ""
		}
		last = d.Config
		t.Rows = append(t.Rows, []string{cfg, d.Title, fmt.Sprint(d.Pairs), optional(d.A) + " → " + optional(d.B), signed(d.Change),
			fmt.Sprintf("%d/%d", d.OnlyA, d.OnlyB), pCell, holmCell, verdict})
	}
	return t
}

// ActorFinding is a rate on which B is worse in words: "PatchOptic:
// leak rate 0.000 → 0.500 (+0.500; only A 0, only B 23; exact McNemar p
// <0.0001, Holm p <0.0001)".
func ActorFinding(d ActorDelta) string {
	p, h := "-", "-"
	if d.P != nil {
		p = PValue(*d.P)
	}
	if d.PHolm != nil {
		h = PValue(*d.PHolm)
	}
	return fmt.Sprintf("%s: %s %s → %s (%s; only A %d, only B %d; exact McNemar p %s, Holm p %s)", d.Label, d.Title,
		optional(d.A), optional(d.B), signed(d.Change), d.OnlyA, d.OnlyB, p, h)
}

// canReach reports whether an exact two-sided McNemar test over d
// discordant pairs can give a p of at most alpha: its smallest p is
// 2·(1/2)^d (Tarone 1990), the test that cannot is left out of Holm's
// family.
func canReach(d int, alpha float64) bool {
	return math.Min(1, 2*math.Pow(0.5, float64(d))) <= alpha
}
