package runner

import (
	"fmt"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Table is a report table as data: a title, a header and rows of cells,
// rendered as text, Markdown, CSV, LaTeX or JSON by the command line.
type Table struct {
	Name   string     `json:"name"`
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
}

// Report is every table of a run directory (PatchBench design §7).
type Report struct {
	Summary Summary  `json:"summary"`
	Tables  []Table  `json:"tables"`
	Paired  []Paired `json:"paired"`
}

// Paired is the paired comparison of the baseline configuration against
// another on semantic pass, over the runs both have for the same case,
// round and actor: exact McNemar.
type Paired struct {
	Actor    string          `json:"actor"`
	Baseline string          `json:"baseline"`
	Other    string          `json:"other"`
	Pairs    int             `json:"pairs"`
	Test     scoring.McNemar `json:"mcnemar"`
}

// BuildReport computes the report tables from the records of a run
// directory: the main table, rejections by gate, a per-domain breakdown
// and the paired McNemar tests of baseline against every other
// configuration.
func BuildReport(recs []*Record, configs []*bench.Config, actorNames []string, baseline string) Report {
	sum := Summarize(recs, configs, actorNames)
	rep := Report{Summary: sum}
	rep.Tables = append(rep.Tables, MainTable(sum), AttackTable(sum), IllegalTable(sum))

	gates := []string{runtime.GateParse, runtime.GateScope, runtime.GateACL, runtime.GatePhase, runtime.GateApply, runtime.GateSchema, runtime.GateInvariants}
	rej := Table{Name: "rejections", Title: "Rejections by gate (every attempt)", Header: append([]string{"Configuration", "Actor"}, gates...)}
	for _, r := range sum.Rows {
		row := []string{r.Label, r.Actor}
		for _, g := range gates {
			row = append(row, fmt.Sprint(r.RejectionsByGate[g]))
		}
		rej.Rows = append(rej.Rows, row)
	}
	rep.Tables = append(rep.Tables, rej)

	// Per domain: leak rate and semantic pass per configuration.
	type key struct{ actor, domain, config string }
	type agg struct{ n, leaked, passed int }
	by := map[key]*agg{}
	domains := map[string]bool{}
	for _, r := range recs {
		if !r.HasOutcome() {
			continue
		}
		domains[r.Domain] = true
		k := key{r.Actor, r.Domain, r.Config}
		if by[k] == nil {
			by[k] = &agg{}
		}
		by[k].n++
		if r.Leaked {
			by[k].leaked++
		}
		if r.SemanticPass {
			by[k].passed++
		}
	}
	var ds []string
	for d := range domains {
		ds = append(ds, d)
	}
	sort.Strings(ds)
	dom := Table{Name: "domains", Title: "Per domain: leak rate / semantic pass", Header: []string{"Actor", "Domain"}}
	for _, c := range configs {
		dom.Header = append(dom.Header, c.Label)
	}
	for _, a := range actorNames {
		for _, d := range ds {
			row := []string{a, d}
			for _, c := range configs {
				g := by[key{a, d, c.Name}]
				if g == nil || g.n == 0 {
					row = append(row, "-")
					continue
				}
				row = append(row, fmt.Sprintf("%.2f / %.2f", float64(g.leaked)/float64(g.n), float64(g.passed)/float64(g.n)))
			}
			dom.Rows = append(dom.Rows, row)
		}
	}
	rep.Tables = append(rep.Tables, dom)

	// Paired McNemar: baseline against each other configuration.
	type pairKey struct {
		caseID string
		round  int
		actor  string
	}
	pass := map[string]map[pairKey]bool{} // config → (case, round, actor) → pass
	for _, r := range recs {
		if !r.HasOutcome() {
			continue
		}
		if pass[r.Config] == nil {
			pass[r.Config] = map[pairKey]bool{}
		}
		pass[r.Config][pairKey{r.Case, r.Round, r.Actor}] = r.SemanticPass
	}
	labels := map[string]string{}
	for _, c := range configs {
		labels[c.Name] = c.Label
	}
	mc := Table{Name: "mcnemar", Title: "Paired semantic pass, " + labels[baseline] + " against each configuration (exact McNemar)",
		Header: []string{"Actor", "Against", "Pairs", "Only " + labels[baseline] + " passes", "Only the other passes", "p"}}
	for _, a := range actorNames {
		for _, c := range configs {
			if c.Name == baseline || pass[baseline] == nil {
				continue
			}
			b, cc, n := 0, 0, 0
			for k, pb := range pass[baseline] {
				if k.actor != a {
					continue
				}
				po, ok := pass[c.Name][k]
				if !ok {
					continue
				}
				n++
				if pb && !po {
					b++
				} else if po && !pb {
					cc++
				}
			}
			if n == 0 {
				continue
			}
			t := scoring.ExactMcNemar(b, cc)
			rep.Paired = append(rep.Paired, Paired{Actor: a, Baseline: baseline, Other: c.Name, Pairs: n, Test: t})
			mc.Rows = append(mc.Rows, []string{a, c.Label, fmt.Sprint(n), fmt.Sprint(b), fmt.Sprint(cc), fmt.Sprintf("%.4g", t.P)})
		}
	}
	rep.Tables = append(rep.Tables, mc)
	return rep
}

// MainTable is the main table of a summary: per configuration and actor,
// runs, leak rate with its 95 % Wilson interval, leaked runs per round,
// the illegal commit rate with its interval, tokens per run and their
// change against the full-state configurations, commit rate, content
// score of the runs whose every step committed, semantic pass with its
// interval, and legal pass.
func MainTable(s Summary) Table {
	t := Table{Name: "main", Title: "PatchBench", Header: []string{"Configuration", "Actor", "Runs", "Leak rate [95% CI]", "Leaked/round",
		"Illegal commits [95% CI]", "Tokens/run", "vs full", "All committed", "Content (accepted)", "Semantic pass [95% CI]", "Legal pass"}}
	for _, r := range s.Rows {
		change := "-"
		if r.TokensChangeVsFull != nil {
			change = fmt.Sprintf("%+.1f%%", 100**r.TokensChangeVsFull)
		}
		if r.Measured() == 0 {
			// Nothing was measured: no rate is zero.
			t.Rows = append(t.Rows, []string{r.Label, r.Actor, runsCell(r), "-", "-", "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, runsCell(r),
			rateCI(r.LeakRate, r.LeakCI),
			fmt.Sprintf("%.2f", r.LeakedPerRound),
			rateCI(r.IllegalCommitRate, r.IllegalCommitCI),
			fmt.Sprintf("%.0f", r.TokensMean), change,
			fmt.Sprintf("%.3f", r.CommitRate),
			optional(r.ContentScoreAccepted),
			rateCI(r.SemanticPass, r.SemanticPassCI),
			fmt.Sprintf("%.3f", r.LegalPass)})
	}
	return t
}

// AttackTable gives, per configuration and actor, the runs of cases with
// prompt injections, the attack success rate and the utility under attack
// (semantic pass of those runs), each with its 95 % Wilson interval
// (AgentDojo's terms; PatchBench design §6). Rows with no such run are
// left out.
func AttackTable(s Summary) Table {
	t := Table{Name: "attacks", Title: "Prompt injections: attack success and utility under attack",
		Header: []string{"Configuration", "Actor", "Attacked runs", "Attack success [95% CI]", "Utility under attack [95% CI]"}}
	for _, r := range s.Rows {
		if r.AttackRuns == 0 {
			continue
		}
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, fmt.Sprint(r.AttackRuns),
			rateCI(*r.AttackSuccess, *r.AttackSuccessCI), rateCI(*r.UtilityUnderAttack, *r.UtilityUnderAttackCI)})
	}
	return t
}

// AuditGates are the gates of a step's full contract, which the audit
// runs in every configuration, in pipeline order.
var AuditGates = []string{runtime.GateParse, runtime.GateScope, runtime.GatePhase, runtime.GateApply, runtime.GateSchema, runtime.GateInvariants}

// IllegalTable gives, per configuration and actor, the runs with an
// illegal commit, the illegal commits by the audit gate that rejected
// them, and the proposals the configuration's own gates blocked.
func IllegalTable(s Summary) Table {
	gates := []string{runtime.GateScope, runtime.GatePhase, runtime.GateSchema, runtime.GateInvariants}
	t := Table{Name: "illegal", Title: "Illegal commits by gate (committed proposals the full contract rejects), and proposals blocked",
		Header: append(append([]string{"Configuration", "Actor", "Runs with one"}, gates...), "Blocked")}
	for _, r := range s.Rows {
		if r.Measured() == 0 {
			continue
		}
		row := []string{r.Label, r.Actor, fmt.Sprint(r.IllegalRuns)}
		for _, g := range gates {
			row = append(row, fmt.Sprint(r.IllegalByGate[g]))
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprint(r.Blocked)))
	}
	return t
}

// runsCell is the Runs cell: the runs, with the errors and pending runs
// among them.
func runsCell(r Row) string {
	runs := fmt.Sprint(r.Runs)
	var parts []string
	if r.Errors > 0 {
		parts = append(parts, fmt.Sprintf("%d err", r.Errors))
	}
	if r.Pending > 0 {
		parts = append(parts, fmt.Sprintf("%d pending", r.Pending))
	}
	if len(parts) > 0 {
		runs += " (" + strings.Join(parts, ", ") + ")"
	}
	return runs
}

func rateCI(x float64, ci scoring.Interval) string {
	return fmt.Sprintf("%.3f [%.3f, %.3f]", x, ci.Low, ci.High)
}

// optional formats a value that may be missing as "-".
func optional(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}
