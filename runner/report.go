package runner

import (
	"fmt"
	"sort"

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
	rep.Tables = append(rep.Tables, MainTable(sum))

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
		if r.Status == StatusError {
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
		if r.Status == StatusError {
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
// tokens per run and their change against the full-state
// configurations, commit rate, content score of the runs whose every step
// committed, and semantic pass with its interval.
func MainTable(s Summary) Table {
	t := Table{Name: "main", Title: "PatchBench", Header: []string{"Configuration", "Actor", "Runs", "Leak rate [95% CI]", "Leaked/round",
		"Tokens/run", "vs full", "Commit", "Content (accepted)", "Semantic pass [95% CI]"}}
	for _, r := range s.Rows {
		change := "-"
		if r.TokensChangeVsFull != nil {
			change = fmt.Sprintf("%+.1f%%", 100**r.TokensChangeVsFull)
		}
		runs := fmt.Sprint(r.Runs)
		if r.Errors > 0 {
			runs += fmt.Sprintf(" (%d err)", r.Errors)
		}
		if r.Runs == r.Errors {
			// Nothing was measured: no rate is zero.
			t.Rows = append(t.Rows, []string{r.Label, r.Actor, runs, "-", "-", "-", "-", "-", "-", "-"})
			continue
		}
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, runs,
			fmt.Sprintf("%.3f [%.3f, %.3f]", r.LeakRate, r.LeakCI.Low, r.LeakCI.High),
			fmt.Sprintf("%.2f", r.LeakedPerRound),
			fmt.Sprintf("%.0f", r.TokensMean), change,
			fmt.Sprintf("%.3f", r.CommitRate),
			optional(r.ContentScoreAccepted),
			fmt.Sprintf("%.3f [%.3f, %.3f]", r.SemanticPass, r.SemanticPassCI.Low, r.SemanticPassCI.High)})
	}
	return t
}

// optional formats a value that may be missing as "-".
func optional(v *float64) string {
	if v == nil {
		return "-"
	}
	return fmt.Sprintf("%.3f", *v)
}
