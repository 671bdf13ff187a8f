package report

import (
	"fmt"
	"slices"

	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// reliabilityKey is a case of one configuration, actor and scale.
type reliabilityKey struct{ config, actor, scale, attack, caseID string }

// caseRounds counts the rounds of one case with an outcome, and those
// with a semantic pass, a legal pass and no leak.
type caseRounds struct{ n, semantic, legal, noLeak int }

// addRounds counts a run with an outcome among the rounds of its case.
func (b *Builder) addRounds(r *rundir.Record) {
	k := reliabilityKey{r.Config, r.Actor, r.Scale, r.AttackName, r.Case}
	c := b.caseRounds[k]
	if c == nil {
		c = &caseRounds{}
		b.caseRounds[k] = c
	}
	c.n++
	if r.SemanticPass {
		c.semantic++
	}
	if r.LegalPass {
		c.legal++
	}
	if !r.Leaked {
		c.noLeak++
	}
}

// Reliability is pass^k and pass@k over rounds of one configuration,
// actor and scale at one k: per case, of its n rounds with an outcome and
// the c of them that succeeded, pass^k = C(c, k)/C(n, k) (k rounds drawn
// all succeed: Yao et al. 2024, "τ-bench") and pass@k = 1 − C(n − c, k)/C(n, k)
// (at least one does: Chen et al. 2021, the unbiased estimator), averaged
// over the Cases that have at least k rounds; for a semantic pass, a legal
// pass and no leak. Rounds is the most rounds a case has: k runs from 1
// to it. Values are in [0, 1]; at k = 1 both are the rate.
type Reliability struct {
	Config       string  `json:"config"`
	Label        string  `json:"label"`
	Actor        string  `json:"actor"`
	Scale        string  `json:"scale,omitempty"`
	Attack       string  `json:"attack,omitempty"`
	K            int     `json:"k"`
	Rounds       int     `json:"rounds"`
	Cases        int     `json:"cases"`
	SemanticHatK float64 `json:"semantic_pass_hat_k"`
	SemanticAtK  float64 `json:"semantic_pass_at_k"`
	LegalHatK    float64 `json:"legal_pass_hat_k"`
	LegalAtK     float64 `json:"legal_pass_at_k"`
	NoLeakHatK   float64 `json:"no_leak_pass_hat_k"`
	NoLeakAtK    float64 `json:"no_leak_pass_at_k"`
}

// reliability is the Reliability of every configuration (in the order of
// configs), actor (in theirs) and scale (smallest first) with a run with
// an outcome, k from 1 to its most rounds.
func (b *Builder) reliability() []Reliability {
	type group struct{ config, actor, scale, attack string }
	cases := map[group][]*caseRounds{}
	var scales, attacks []string
	for k, c := range b.caseRounds {
		g := group{k.config, k.actor, k.scale, k.attack}
		cases[g] = append(cases[g], c)
		if !slices.Contains(scales, k.scale) {
			scales = append(scales, k.scale)
		}
		if !slices.Contains(attacks, k.attack) {
			attacks = append(attacks, k.attack)
		}
	}
	SortScales(scales)
	SortAttacks(attacks)
	var out []Reliability
	for _, cfg := range b.configs {
		for _, a := range b.actors {
			for _, sc := range scales {
				for _, at := range attacks {
					cs := cases[group{cfg.Name, a, sc, at}]
					if len(cs) == 0 {
						continue
					}
					rounds := 0
					for _, c := range cs {
						rounds = max(rounds, c.n)
					}
					for k := 1; k <= rounds; k++ {
						r := Reliability{Config: cfg.Name, Label: cfg.Label, Actor: a, Scale: sc, Attack: at, K: k, Rounds: rounds}
						// Summed in an order that does not depend on the map's.
						var sums [6]float64
						var counted []*caseRounds
						for _, c := range cs {
							if c.n >= k {
								counted = append(counted, c)
							}
						}
						slices.SortFunc(counted, func(x, y *caseRounds) int {
							return cmpInts([]int{x.n, x.semantic, x.legal, x.noLeak}, []int{y.n, y.semantic, y.legal, y.noLeak})
						})
						for _, c := range counted {
							for i, succ := range []int{c.semantic, c.legal, c.noLeak} {
								// n ≥ k ≥ 1 and 0 ≤ succ ≤ n: no error.
								hat, _ := scoring.PassHatK(c.n, succ, k)
								at, _ := scoring.PassAtK(c.n, succ, k)
								sums[2*i] += hat
								sums[2*i+1] += at
							}
						}
						r.Cases = len(counted)
						n := float64(len(counted))
						r.SemanticHatK, r.SemanticAtK = scoring.Round(sums[0]/n), scoring.Round(sums[1]/n)
						r.LegalHatK, r.LegalAtK = scoring.Round(sums[2]/n), scoring.Round(sums[3]/n)
						r.NoLeakHatK, r.NoLeakAtK = scoring.Round(sums[4]/n), scoring.Round(sums[5]/n)
						out = append(out, r)
					}
				}
			}
		}
	}
	return out
}

// cmpInts orders two slices of ints lexicographically.
func cmpInts(x, y []int) int { return slices.Compare(x, y) }

// ReliabilityTable is the reliability over rounds as a table: one row per
// configuration, actor (and scale, when the runs are at several) and k,
// with the cases counted and pass^k and pass@k of a semantic pass, a
// legal pass and no leak. Its title says when every group has one round
// (k = 1 only: both figures are then the rate). Its Data has the same
// values, one column each: config, label, actor, (scale,) k, rounds,
// cases, semantic_pass_hat_k, semantic_pass_at_k, legal_pass_hat_k,
// legal_pass_at_k, no_leak_pass_hat_k, no_leak_pass_at_k.
func ReliabilityTable(rel []Reliability, s Summary) Table {
	title := "Reliability over rounds: pass^k, the chance that k rounds of a case (drawn from its n) all succeed, and pass@k, that at least one does; per case, averaged over the cases with at least k rounds"
	rounds := 0
	for _, r := range rel {
		rounds = max(rounds, r.Rounds)
	}
	if rounds <= 1 {
		title += " (one round: k = 1 only, where both are the rate; run --rounds N for k up to N)"
	}
	t := Table{Name: "reliability", Title: title,
		Header: []string{"Configuration", "Actor", "k", "Cases", "Semantic pass^k", "Semantic pass@k", "Legal pass^k", "Legal pass@k", "No leak pass^k", "No leak pass@k"},
		Data: &Data{Columns: []string{"config", "label", "actor", "k", "rounds", "cases", "semantic_pass_hat_k", "semantic_pass_at_k",
			"legal_pass_hat_k", "legal_pass_at_k", "no_leak_pass_hat_k", "no_leak_pass_at_k"}}}
	var scales, attacks []string
	for _, r := range rel {
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, fmt.Sprint(r.K), fmt.Sprint(r.Cases), fmt.Sprintf("%.3f", r.SemanticHatK), fmt.Sprintf("%.3f", r.SemanticAtK),
			fmt.Sprintf("%.3f", r.LegalHatK), fmt.Sprintf("%.3f", r.LegalAtK), fmt.Sprintf("%.3f", r.NoLeakHatK), fmt.Sprintf("%.3f", r.NoLeakAtK)})
		t.Data.add(r.Config, r.Label, r.Actor, r.K, r.Rounds, r.Cases, r.SemanticHatK, r.SemanticAtK, r.LegalHatK, r.LegalAtK, r.NoLeakHatK, r.NoLeakAtK)
		scales, attacks = append(scales, r.Scale), append(attacks, r.Attack)
	}
	return withAttack(withScale(t, s, scales), s, attacks)
}
