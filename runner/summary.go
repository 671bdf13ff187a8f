package runner

import (
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

// Row is one line of summary.json: the statistics of one configuration
// and actor over every round and case (PatchBench design §6). Rates and
// means leave error runs out; Runs counts them, Errors says how many.
type Row struct {
	Config         string           `json:"config"`
	Label          string           `json:"label"`
	View           string           `json:"view"`
	Actor          string           `json:"actor"`
	Runs           int              `json:"runs"`
	Errors         int              `json:"errors"`
	LeakRate       float64          `json:"leak_rate"`
	LeakCI         scoring.Interval `json:"leak_ci"`
	LeakedPerRound float64          `json:"leaked_per_round"`
	TokensMean     float64          `json:"tokens_mean"`
	TokensCI       scoring.Interval `json:"tokens_ci"`
	CommitRate     float64          `json:"commit_rate"`
	ContentScore   float64          `json:"content_score"`
	// ContentScoreAccepted is null when no run committed every step.
	ContentScoreAccepted *float64         `json:"content_score_accepted"`
	SemanticPass         float64          `json:"semantic_pass"`
	SemanticPassCI       scoring.Interval `json:"semantic_pass_ci"`
	Rejections           map[string]int   `json:"rejections"`
	RejectionsByGate     map[string]int   `json:"rejections_by_gate"`
	TokensChangeVsFull   *float64         `json:"tokens_change_vs_full,omitempty"`
}

// Summary is summary.json. RunsExpected and Complete are set by the
// caller that knows the settings (0 and false when unknown).
type Summary struct {
	Rows         []Row `json:"rows"`
	RunsRecorded int   `json:"runs_recorded"`
	RunsExpected int   `json:"runs_expected"`
	Complete     bool  `json:"complete"`
}

// Summarize computes the summary of a set of records, one row per
// configuration (in the order of configs) and actor (in the order of
// actorNames). TokensChangeVsFull, for projected configurations, is the
// relative change of mean tokens against the full-state configurations'
// mean for the same actor.
func Summarize(recs []*Record, configs []*bench.Config, actorNames []string) Summary {
	type key struct{ config, actor string }
	groups := map[key][]*Record{}
	for _, r := range recs {
		k := key{r.Config, r.Actor}
		groups[k] = append(groups[k], r)
	}
	var rows []Row
	for _, cfg := range configs {
		for _, a := range actorNames {
			rs := groups[key{cfg.Name, a}]
			if len(rs) == 0 {
				continue
			}
			rows = append(rows, summarizeGroup(cfg, a, rs))
		}
	}
	// Token change of projected configurations against full-state ones.
	full := map[string][]float64{}
	for _, r := range rows {
		if r.View == bench.ViewFull && r.Runs > r.Errors {
			full[r.Actor] = append(full[r.Actor], r.TokensMean)
		}
	}
	for i := range rows {
		f := full[rows[i].Actor]
		if rows[i].View != bench.ViewProjected || len(f) == 0 {
			continue
		}
		sum := 0.0
		for _, x := range f {
			sum += x
		}
		base := sum / float64(len(f))
		if base > 0 {
			ch := rows[i].TokensMean/base - 1
			rows[i].TokensChangeVsFull = &ch
		}
	}
	return Summary{Rows: rows, RunsRecorded: len(recs)}
}

func summarizeGroup(cfg *bench.Config, actor string, rs []*Record) Row {
	row := Row{Config: cfg.Name, Label: cfg.Label, View: cfg.View, Actor: actor, Runs: len(rs),
		Rejections: map[string]int{}, RejectionsByGate: map[string]int{}}
	var tokens, content, accepted []float64
	leaked, passed, allCommitted := 0, 0, 0
	leakedByRound := map[int]int{}
	rounds := map[int]bool{}
	for _, r := range rs {
		if r.Status == StatusError {
			row.Errors++
			continue
		}
		rounds[r.Round] = true
		if r.Leaked {
			leaked++
			leakedByRound[r.Round]++
		}
		if r.SemanticPass {
			passed++
		}
		tokens = append(tokens, float64(r.Tokens.Prompt+r.Tokens.Completion))
		content = append(content, r.ContentScore)
		all := true
		for _, s := range r.Steps {
			all = all && s.Committed
			collect := append([]Attempt{}, s.Earlier...)
			collect = append(collect, Attempt{Decisions: s.Decisions})
			for _, at := range collect {
				for _, g := range at.Decisions {
					if !g.Passed {
						row.Rejections[g.Code]++
						row.RejectionsByGate[g.Gate]++
					}
				}
			}
		}
		if all {
			allCommitted++
			accepted = append(accepted, r.ContentScore)
		}
	}
	n := row.Runs - row.Errors
	if n == 0 {
		return row
	}
	row.LeakRate = float64(leaked) / float64(n)
	row.LeakCI = scoring.Wilson(leaked, n)
	perRound := 0.0
	for r := range rounds {
		perRound += float64(leakedByRound[r])
	}
	row.LeakedPerRound = perRound / float64(len(rounds))
	row.TokensMean, row.TokensCI = scoring.MeanCI(tokens)
	row.CommitRate = float64(allCommitted) / float64(n)
	row.ContentScore, _ = scoring.MeanCI(content)
	if len(accepted) > 0 {
		m, _ := scoring.MeanCI(accepted)
		row.ContentScoreAccepted = &m
	}
	row.SemanticPass = float64(passed) / float64(n)
	row.SemanticPassCI = scoring.Wilson(passed, n)
	return row
}
