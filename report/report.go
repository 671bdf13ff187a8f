package report

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Table is a report table as data: a name (what --table selects, and the
// LaTeX label's), a title (the caption), a header and rows of cells as
// printed, rendered as text, Markdown, LaTeX or JSON (Render); and Data,
// the same table as numbers for CSV.
type Table struct {
	Name   string     `json:"name"`
	Title  string     `json:"title"`
	Header []string   `json:"header"`
	Rows   [][]string `json:"rows"`
	// Data is the table with one value per cell: machine column names
	// (leak_rate, leak_lo, leak_hi…) and, per row, float64, int, string
	// or nil (a value that is missing: an empty CSV cell).
	Data *Data `json:"-"`
	// Optional are the headers (without " [95% CI]") of the columns a
	// text table narrowed to a width may leave out (FitText), the first
	// left out first.
	Optional []string `json:"-"`
}

// Data is a table's values, one per cell, for CSV (pandas, R).
type Data struct {
	Columns []string
	Rows    [][]any
}

// add appends a row of values.
func (d *Data) add(v ...any) { d.Rows = append(d.Rows, v) }

// Report is every table of a run directory (docs/reports.md), with
// notes that say what a table leaves out (paired tests skipped for want
// of the baseline configuration, say).
type Report struct {
	Summary Summary  `json:"summary"`
	Tables  []Table  `json:"tables"`
	Paired  []Paired `json:"paired"`
	// Reliability is pass^k and pass@k over rounds (ReliabilityTable).
	Reliability []Reliability `json:"reliability"`
	Notes       []string      `json:"notes,omitempty"`
}

// Paired is the paired comparison of the baseline configuration against
// another on semantic pass, over the runs both have for the same case,
// round, actor and scale: exact McNemar.
type Paired struct {
	Actor string `json:"actor"`
	// Scale is the scale of the runs paired ("" at 1x): runs pair only
	// with runs at their own scale.
	Scale string `json:"scale,omitempty"`
	// Attack is the attack of the runs paired ("" for the default): runs
	// pair only under their own attack.
	Attack   string          `json:"attack,omitempty"`
	Baseline string          `json:"baseline"`
	Other    string          `json:"other"`
	Pairs    int             `json:"pairs"`
	Test     scoring.McNemar `json:"mcnemar"`
}

// Builder builds every table of a run directory from its records, added
// one at a time as they are read (rundir.Dir.Each): the summary
// (Summarizer), the per-domain counts and each run's semantic pass by
// configuration, for the paired tests; never a record.
type Builder struct {
	sum      *Summarizer
	configs  []*bench.Config
	actors   []string
	baseline string
	domains  map[domainKey]*domainCount
	pass     map[string]map[pairKey]bool // config → (case, round, actor) → semantic pass
	models   map[string][]string         // actor → the models its provider said answered
	// repeats tells the actors that answer alike in every round:
	// outcome is the first round's outcome of each case × configuration
	// × actor, varies the actors whose outcomes differ between rounds,
	// rounds the rounds each actor has.
	outcome map[domainKey]string
	varies  map[string]bool
	rounds  map[string]map[int]bool
	// caseRounds counts each case's rounds with an outcome and their
	// successes, per configuration, actor and scale (Reliability).
	caseRounds map[reliabilityKey]*caseRounds
}

type domainKey struct{ actor, domain, config, scale, attack string }

type domainCount struct{ n, leaked, passed int }

type pairKey struct {
	caseID string
	round  int
	actor  string
	scale  string
	attack string
}

// NewBuilder starts the report of the runs of configs and actorNames,
// with the paired tests of baseline (a configuration's name) against
// every other configuration; with no baseline ("") the paired tests are
// skipped, and the report says so.
func NewBuilder(configs []*bench.Config, actorNames []string, baseline string) *Builder {
	return &Builder{sum: NewSummarizer(configs, actorNames), configs: configs, actors: actorNames, baseline: baseline,
		domains: map[domainKey]*domainCount{}, pass: map[string]map[pairKey]bool{}, models: map[string][]string{},
		outcome: map[domainKey]string{}, varies: map[string]bool{}, rounds: map[string]map[int]bool{},
		caseRounds: map[reliabilityKey]*caseRounds{}}
}

// Models lists the models a live actor's provider said answered its runs
// (the steps' model), at most four. A model name the run's leaks list as
// carrying a canary (scoring.FieldModel) is given as WithheldModel: the
// name is what the actor sent, and a report never shows a secret.
func (b *Builder) Models(actor string) []string { return b.models[actor] }

// WithheldModel stands, in Models, for a model name that carries a
// canary.
const WithheldModel = "a model name withheld: it carries a secret"

// Add counts one record: the last record of a run (rundir.Latest).
func (b *Builder) Add(r *rundir.Record) {
	b.sum.Add(r)
	for _, st := range r.Steps {
		model := st.Model
		for _, l := range r.Leaks {
			if l.Field == scoring.FieldModel && l.Step == st.Step {
				model = WithheldModel
			}
		}
		if ms := b.models[r.Actor]; model != "" && len(ms) < 4 && !slices.Contains(ms, model) {
			b.models[r.Actor] = append(ms, model)
		}
	}
	if !r.HasOutcome() {
		return
	}
	b.addRepeat(r)
	b.addRounds(r)
	k := domainKey{r.Actor, r.Domain, r.Config, r.Scale, r.AttackName}
	d := b.domains[k]
	if d == nil {
		d = &domainCount{}
		b.domains[k] = d
	}
	d.n++
	if r.Leaked {
		d.leaked++
	}
	if r.SemanticPass {
		d.passed++
	}
	if b.pass[r.Config] == nil {
		b.pass[r.Config] = map[pairKey]bool{}
	}
	b.pass[r.Config][pairKey{r.Case, r.Round, r.Actor, r.Scale, r.AttackName}] = r.SemanticPass
}

// addRepeat notes a run's outcome (status, leak, pass, illegal commits,
// content, tokens) beside the other rounds' of its case, configuration
// and actor.
func (b *Builder) addRepeat(r *rundir.Record) {
	sig := fmt.Sprintf("%s|%t|%t|%d|%g|%d|%d", r.Status, r.Leaked, r.SemanticPass, len(r.IllegalCommits), r.ContentScore, r.Tokens.Prompt, r.Tokens.Completion)
	k := domainKey{r.Actor, r.Case, r.Config, r.Scale, r.AttackName}
	if prev, ok := b.outcome[k]; !ok {
		b.outcome[k] = sig
	} else if prev != sig {
		b.varies[r.Actor] = true
	}
	if b.rounds[r.Actor] == nil {
		b.rounds[r.Actor] = map[int]bool{}
	}
	b.rounds[r.Actor][r.Round] = true
}

// repeatNote says which actors of several rounds answered alike in every
// round (the no-model actors do): their rounds repeat one round's runs,
// so intervals that count every run narrow without evidence. "" when
// none did.
func (b *Builder) repeatNote() string {
	var same []string
	n := 0
	for _, a := range b.actors {
		if len(b.rounds[a]) > 1 && !b.varies[a] {
			same = append(same, a)
			n = max(n, len(b.rounds[a]))
		}
	}
	if len(same) == 0 {
		return ""
	}
	return fmt.Sprintf("%s answered alike in each of %d rounds: the rounds repeat one round's runs, so the 95%% intervals, which count every run, are narrower than the evidence; one round's intervals are the honest ones (rounds narrow the intervals of actors that sample).", strings.Join(same, ", "), n)
}

// Summarizer is the builder's summary of the records added so far.
func (b *Builder) Summarizer() *Summarizer { return b.sum }

// Report is every table of the records added: the
// main table, the attack table, illegal commits by gate, rejections by
// gate, the per-domain breakdown, the paired McNemar tests of the
// baseline against every other configuration and the reliability over
// rounds (pass^k and pass@k, when a run has an outcome).
func (b *Builder) Report() Report {
	sum := b.sum.Summary()
	rep := Report{Summary: sum}
	rep.Tables = append(rep.Tables, MainTable(sum), AttackTable(sum), LeakKindTable(sum), LeakMechanismTable(sum), LeakRouteTable(sum), IllegalTable(sum), RejectionsTable(sum), b.domainTable(sum))
	if t := ToolsTable(sum); len(t.Rows) > 0 {
		rep.Tables = append(rep.Tables, t)
	}
	mc, paired, notes := b.pairedTests(sum)
	if n := b.repeatNote(); n != "" {
		notes = append(notes, n)
	}
	rep.Paired, rep.Notes = paired, notes
	if len(mc.Rows) > 0 {
		rep.Tables = append(rep.Tables, mc)
	}
	rep.Reliability = b.reliability()
	if len(rep.Reliability) > 0 {
		rep.Tables = append(rep.Tables, ReliabilityTable(rep.Reliability, sum))
	}
	return rep
}

// RejectionsTable gives, per configuration and actor, the failed gate
// results of every attempt by gate, in pipeline order.
func RejectionsTable(s Summary) (t Table) {
	gates := []string{runtime.GateParse, runtime.GateScope, runtime.GateACL, runtime.GatePhase, runtime.GateApply, runtime.GateSchema, runtime.GateInvariants}
	t = Table{Name: "rejections", Title: "Rejections by gate (every attempt)", Header: append([]string{"Configuration", "Actor"}, gates...),
		Data: &Data{Columns: append([]string{"config", "label", "actor"}, gates...)}}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		row := []string{r.Label, r.Actor}
		vals := []any{r.Config, r.Label, r.Actor}
		for _, g := range gates {
			row = append(row, fmt.Sprint(r.RejectionsByGate[g]))
			vals = append(vals, r.RejectionsByGate[g])
		}
		t.Rows = append(t.Rows, row)
		t.Data.add(vals...)
	}
	return t
}

// domainTable gives, per actor and domain (sorted), the leak rate and
// semantic pass of each configuration, "-" where it has no run.
func (b *Builder) domainTable(sum Summary) (t Table) {
	var ds, scales, attacks []string
	for k := range b.domains {
		if !slices.Contains(ds, k.domain) {
			ds = append(ds, k.domain)
		}
		if !slices.Contains(scales, k.scale) {
			scales = append(scales, k.scale)
		}
		if !slices.Contains(attacks, k.attack) {
			attacks = append(attacks, k.attack)
		}
	}
	slices.Sort(ds)
	SortScales(scales)
	SortAttacks(attacks)
	t = Table{Name: "domains", Title: "Per domain: leak rate / semantic pass", Header: []string{"Actor", "Domain"},
		Data: &Data{Columns: []string{"actor", "domain", "config", "label", "runs", "leak_rate", "semantic_pass"}}}
	for _, c := range b.configs {
		t.Header = append(t.Header, c.Label)
	}
	var rowScales, dataScales, rowAttacks, dataAttacks []string
	for _, a := range b.actors {
		for _, sc := range scales {
			for _, at := range attacks {
				for _, d := range ds {
					row := []string{a, d}
					has := false
					for _, c := range b.configs {
						g := b.domains[domainKey{a, d, c.Name, sc, at}]
						if g == nil || g.n == 0 {
							row = append(row, "-")
							continue
						}
						has = true
						leak, pass := float64(g.leaked)/float64(g.n), float64(g.passed)/float64(g.n)
						row = append(row, fmt.Sprintf("%.2f / %.2f", leak, pass))
						t.Data.add(a, d, c.Name, c.Label, g.n, leak, pass)
						dataScales, dataAttacks = append(dataScales, sc), append(dataAttacks, at)
					}
					if has || len(scales) == 1 && len(attacks) == 1 {
						t.Rows = append(t.Rows, row)
						rowScales, rowAttacks = append(rowScales, sc), append(rowAttacks, at)
					}
				}
			}
		}
	}
	if sum.MultiScale() || sum.MultiAttack() {
		// The same columns on the rows and on the data rows, which
		// are per configuration.
		data := t.Data
		t.Data = nil
		t = withAttack(withScale(t, sum, rowScales), sum, rowAttacks)
		t.Data = withAttack(withScale(Table{Data: data}, sum, dataScales), sum, dataAttacks).Data
	}
	return t
}

// pairedTests runs the exact McNemar test of semantic pass, the baseline
// against each other configuration, per actor, over the runs both have
// for the same case, round and actor; it returns the table, the tests and
// the notes that say which tests were skipped and why.
func (b *Builder) pairedTests(sum Summary) (Table, []Paired, []string) {
	labels := map[string]string{}
	for _, c := range b.configs {
		labels[c.Name] = c.Label
	}
	base := labels[b.baseline]
	t := Table{Name: "mcnemar", Title: "Paired semantic pass, " + base + " against each configuration (exact McNemar)",
		Header: []string{"Actor", "Against", "Pairs", "Only " + base + " passes", "Only the other passes", "p"},
		Data:   &Data{Columns: []string{"actor", "baseline", "other", "other_label", "pairs", "only_baseline", "only_other", "p"}}}
	var paired []Paired
	var notes []string
	switch {
	case b.baseline == "":
		var names []string
		for _, c := range b.configs {
			names = append(names, c.Name)
		}
		return t, nil, []string{fmt.Sprintf("Paired tests skipped: no baseline configuration (these runs have no patchoptic; --baseline picks one of %s).", strings.Join(names, ", "))}
	case len(b.pass[b.baseline]) == 0:
		return t, nil, []string{fmt.Sprintf("Paired tests skipped: no run of the baseline configuration %s has an outcome (--baseline picks another).", base)}
	}
	var scales, rowScales, attacks, rowAttacks []string
	for k := range b.pass[b.baseline] {
		if !slices.Contains(scales, k.scale) {
			scales = append(scales, k.scale)
		}
		if !slices.Contains(attacks, k.attack) {
			attacks = append(attacks, k.attack)
		}
	}
	SortScales(scales)
	SortAttacks(attacks)
	for _, a := range b.actors {
		has := false
		for k := range b.pass[b.baseline] {
			if k.actor == a {
				has = true
				break
			}
		}
		if !has {
			if b.hasActor(a) {
				notes = append(notes, fmt.Sprintf("Paired tests of %s skipped: it has no run of the baseline configuration %s.", a, base))
			}
			continue
		}
		for _, sc := range scales {
			for _, at := range attacks {
				for _, c := range b.configs {
					if c.Name == b.baseline {
						continue
					}
					onlyBase, onlyOther, n := 0, 0, 0
					for k, pb := range b.pass[b.baseline] {
						if k.actor != a || k.scale != sc || k.attack != at {
							continue
						}
						po, ok := b.pass[c.Name][k]
						if !ok {
							continue
						}
						n++
						if pb && !po {
							onlyBase++
						} else if po && !pb {
							onlyOther++
						}
					}
					if n == 0 {
						continue
					}
					test := scoring.ExactMcNemar(onlyBase, onlyOther)
					paired = append(paired, Paired{Actor: a, Scale: sc, Attack: at, Baseline: b.baseline, Other: c.Name, Pairs: n, Test: test})
					t.Rows = append(t.Rows, []string{a, c.Label, fmt.Sprint(n), fmt.Sprint(onlyBase), fmt.Sprint(onlyOther), PValue(test.P)})
					t.Data.add(a, b.baseline, c.Name, c.Label, n, onlyBase, onlyOther, test.P)
					rowScales, rowAttacks = append(rowScales, sc), append(rowAttacks, at)
				}
			}
		}
	}
	return withAttack(withScale(t, sum, rowScales), sum, rowAttacks), paired, notes
}

// hasActor reports whether any run of actor a has an outcome.
func (b *Builder) hasActor(a string) bool {
	for _, m := range b.pass {
		for k := range m {
			if k.actor == a {
				return true
			}
		}
	}
	return false
}

// MainTable is the main table of a summary: per configuration and actor,
// runs, leak rate with its 95 % Wilson interval, leaked runs per round,
// the illegal commit rate with its interval, tokens per run and their
// change against the full-state configurations, commit rate, content
// score of the runs whose every step committed, semantic pass with its
// interval, and legal pass. Its Data has every figure and interval bound
// in a column of its own.
func MainTable(s Summary) (t Table) {
	t = Table{Name: "main", Title: "PatchBench" + scaleTitle(s.Scales), Header: []string{"Configuration", "Actor", "Runs", "Leak rate [95% CI]", "Leaked/round",
		"Illegal commits [95% CI]", "Tokens/run", "vs full", "All committed", "Content (accepted)", "Semantic pass [95% CI]", "Legal pass"},
		Data: &Data{Columns: []string{"config", "label", "view", "actor", "runs", "errors", "pending", "measured",
			"leak_rate", "leak_lo", "leak_hi", "leaked_per_round",
			"illegal_commit_rate", "illegal_commit_lo", "illegal_commit_hi",
			"tokens_mean", "tokens_lo", "tokens_hi", "tokens_change_vs_full",
			"commit_rate", "content_score", "content_score_accepted",
			"semantic_pass", "semantic_pass_lo", "semantic_pass_hi",
			"legal_pass", "legal_pass_lo", "legal_pass_hi",
			"attack_runs", "attack_success_rate", "attack_success_lo", "attack_success_hi",
			"utility_under_attack", "utility_under_attack_lo", "utility_under_attack_hi"}},
		// Leaked/round is the leak rate times the cases of a round;
		// all committed is what content (accepted) is taken over.
		Optional: []string{"Leaked/round", "All committed", "vs full"}}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		change := "-"
		if r.TokensChangeVsFull != nil {
			change = fmt.Sprintf("%+.1f%%", 100**r.TokensChangeVsFull)
		}
		if r.Measured() == 0 {
			// Nothing was measured: no rate is zero.
			t.Rows = append(t.Rows, []string{r.Label, r.Actor, runsCell(r), "-", "-", "-", "-", "-", "-", "-", "-", "-"})
			vals := []any{r.Config, r.Label, r.View, r.Actor, r.Runs, r.Errors, r.Pending, 0}
			t.Data.add(append(vals, make([]any, len(t.Data.Columns)-len(vals))...)...)
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
		t.Data.add(r.Config, r.Label, r.View, r.Actor, r.Runs, r.Errors, r.Pending, r.Measured(),
			r.LeakRate, r.LeakCI.Low, r.LeakCI.High, r.LeakedPerRound,
			r.IllegalCommitRate, r.IllegalCommitCI.Low, r.IllegalCommitCI.High,
			r.TokensMean, r.TokensCI.Low, r.TokensCI.High, optionalValue(r.TokensChangeVsFull),
			r.CommitRate, r.ContentScore, optionalValue(r.ContentScoreAccepted),
			r.SemanticPass, r.SemanticPassCI.Low, r.SemanticPassCI.High,
			r.LegalPass, r.LegalPassCI.Low, r.LegalPassCI.High,
			r.AttackRuns, optionalValue(r.AttackSuccess), intervalLow(r.AttackSuccessCI), intervalHigh(r.AttackSuccessCI),
			optionalValue(r.UtilityUnderAttack), intervalLow(r.UtilityUnderAttackCI), intervalHigh(r.UtilityUnderAttackCI))
	}
	return t
}

// intervalLow and intervalHigh are an interval's bounds as Data cells,
// missing when the interval is.
func intervalLow(ci *scoring.Interval) any {
	if ci == nil {
		return nil
	}
	return ci.Low
}

func intervalHigh(ci *scoring.Interval) any {
	if ci == nil {
		return nil
	}
	return ci.High
}

// optionalValue is a value that may be missing, as a Data cell.
func optionalValue(v *float64) any {
	if v == nil {
		return nil
	}
	return *v
}

// AttackTable gives, per configuration and actor, the runs of cases with
// prompt injections, the attack success rate and the utility under attack
// (semantic pass of those runs), each with its 95 % Wilson interval
// (AgentDojo's terms; docs/run.md). Rows with no such run are
// left out.
func AttackTable(s Summary) (t Table) {
	t = Table{Name: "attacks", Title: "Prompt injections: attack success and utility under attack",
		Header: []string{"Configuration", "Actor", "Attacked runs", "Attack success [95% CI]", "Utility under attack [95% CI]"},
		Data: &Data{Columns: []string{"config", "label", "actor", "attack_runs", "attack_success_rate", "attack_success_lo", "attack_success_hi",
			"utility_under_attack", "utility_under_attack_lo", "utility_under_attack_hi"}}}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		if r.AttackRuns == 0 {
			continue
		}
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, fmt.Sprint(r.AttackRuns),
			rateCI(*r.AttackSuccess, *r.AttackSuccessCI), rateCI(*r.UtilityUnderAttack, *r.UtilityUnderAttackCI)})
		t.Data.add(r.Config, r.Label, r.Actor, r.AttackRuns, *r.AttackSuccess, r.AttackSuccessCI.Low, r.AttackSuccessCI.High,
			*r.UtilityUnderAttack, r.UtilityUnderAttackCI.Low, r.UtilityUnderAttackCI.High)
	}
	return t
}

// ToolsTable gives, per configuration and actor with runs of the tools
// protocol, the turns and tool calls per run, the reads, the reads of
// hidden locations (and how many were answered as absent), and, in
// either protocol, the steps that ended without a commit, by code
// (Row.StepsEnded). A row of the json protocol is in it only when a
// step ended so (its prompt passed the actor's context budget:
// context_exceeded), its agent-loop figures "-".
func ToolsTable(s Summary) (t Table) {
	t = Table{Name: "tools", Title: "Agent loop (tools protocol): turns, tool calls and reads; steps ended without a commit",
		Header: []string{"Configuration", "Actor", "Runs", "Turns/run", "Tool calls/run", "Reads", "Hidden reads (answered absent)", "Bytes read/step", "Steps ended without a commit"},
		Data: &Data{Columns: []string{"config", "label", "actor", "runs", "turns_per_run", "tool_calls_per_run", "reads", "hidden_reads", "hidden_reads_answered_absent",
			"bytes_read_per_step", "steps_ended"}}}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		f := r.Tools
		if f == nil && len(r.StepsEnded) == 0 {
			continue
		}
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		var ended []string
		for _, k := range slices.Sorted(maps.Keys(r.StepsEnded)) {
			ended = append(ended, fmt.Sprintf("%s %d", k, r.StepsEnded[k]))
		}
		endedCell := strings.Join(ended, ", ")
		if endedCell == "" {
			endedCell = "-"
		}
		if f == nil {
			t.Rows = append(t.Rows, []string{r.Label, r.Actor, runsCell(r), "-", "-", "-", "-", "-", endedCell})
			t.Data.add(r.Config, r.Label, r.Actor, r.Runs, nil, nil, nil, nil, nil, nil, endedCell)
			continue
		}
		t.Rows = append(t.Rows, []string{r.Label, r.Actor, runsCell(r), fmt.Sprintf("%.2f", f.TurnsPerRun), fmt.Sprintf("%.2f", f.ToolCallsPerRun),
			fmt.Sprint(f.Reads), fmt.Sprintf("%d (%d)", f.HiddenReads, f.HiddenAbsent), fmt.Sprintf("%.0f", f.BytesReadPerStep), endedCell})
		t.Data.add(r.Config, r.Label, r.Actor, r.Runs, f.TurnsPerRun, f.ToolCallsPerRun, f.Reads, f.HiddenReads, f.HiddenAbsent, f.BytesReadPerStep, endedCell)
	}
	return t
}

// LeakKindTable gives, per configuration and actor, the runs with an
// outcome, the leaked runs and the leaked runs by the kind of a secret
// they leaked (Row.LeakedByKind): a column per kind of the closed list
// (bench.SecretKinds), then one per kind a case set adds, sorted, then
// "unrecorded" when a leak's record lacks its kind. A run that leaked
// secrets of two kinds counts in both columns. Rows with no run measured
// are left out.
func LeakKindTable(s Summary) Table {
	cols := slices.Clone(bench.SecretKinds)
	var extra []string
	for _, r := range s.Rows {
		for k := range r.LeakedByKind {
			if !slices.Contains(cols, k) && !slices.Contains(extra, k) && k != Unrecorded {
				extra = append(extra, k)
			}
		}
	}
	slices.Sort(extra)
	return leakSplitTable(s, "leak-kinds", "Leaked runs by secret kind (a run counts under each kind it leaked)",
		append(cols, extra...), nil, func(r Row) map[string]int { return r.LeakedByKind })
}

// LeakMechanismTable gives, per configuration and actor, the runs with an
// outcome, the leaked runs and the leaked runs by the mechanism of the
// disclosure pull a leak answered (Row.LeakedByMechanism; docs/cases.md,
// "Leaks by kind and mechanism"): context, policy, injection, and "no
// pull" (bench.MechanismNone: no pull names the leaked secret), then
// "unrecorded" when a leak's record lacks its mechanism. A run counts
// under each mechanism its leaks have. Rows with no run measured are left
// out.
func LeakMechanismTable(s Summary) Table {
	return leakSplitTable(s, "leak-mechanisms", "Leaked runs by mechanism of the pull a leak answered (a run counts under each)",
		bench.LeakMechanisms, map[string]string{bench.MechanismNone: "no pull"}, func(r Row) map[string]int { return r.LeakedByMechanism })
}

// LeakRouteTable gives, per configuration and actor, the runs with an
// outcome, the leaked runs and the leaked runs by the route a secret
// took (Row.LeakedByRoute): repeated, a value the actor read and then
// sent (a leak in its output), and copied, a value its patch copied into
// the state (a leak in the final state). A run counts under each route
// its leaks have. Rows with no run measured are left out.
func LeakRouteTable(s Summary) Table {
	return leakSplitTable(s, "leak-routes", "Leaked runs by route: a value read and repeated, or copied by a patch (a run counts under each)",
		LeakRoutes, map[string]string{RouteRepeated: "read and repeated", RouteCopied: "copied by a patch"}, func(r Row) map[string]int { return r.LeakedByRoute })
}

// withScale gives t a Scale column after its Actor column, and a scale
// column after its actor data column, when the summary's runs are at
// more than one scale (Summary.MultiScale): scales holds the scale of
// each row, in order ("" is 1x). A table of one scale is left as it is.
func withScale(t Table, s Summary, scales []string) Table {
	if !s.MultiScale() {
		return t
	}
	if i := slices.Index(t.Header, "Actor"); i >= 0 {
		t.Header = slices.Insert(slices.Clone(t.Header), i+1, "Scale")
		for k := range t.Rows {
			t.Rows[k] = slices.Insert(t.Rows[k], i+1, ScaleName(scales[k]))
		}
	}
	if t.Data != nil {
		if i := slices.Index(t.Data.Columns, "actor"); i >= 0 {
			t.Data.Columns = slices.Insert(slices.Clone(t.Data.Columns), i+1, "scale")
			for k := range t.Data.Rows {
				t.Data.Rows[k] = slices.Insert(t.Data.Rows[k], i+1, any(ScaleName(scales[k])))
			}
		}
	}
	return t
}

// withAttack gives t an Attack column after its Scale column (after its
// Actor column when it has none), and an attack column likewise among
// its data columns, when the summary's runs are under more than one
// attack (Summary.MultiAttack): attacks holds the attack of each row, in
// order ("" is the default). A table of one attack is left as it is.
func withAttack(t Table, s Summary, attacks []string) Table {
	if !s.MultiAttack() {
		return t
	}
	at := func(cols []string, scale, actor string) int {
		if i := slices.Index(cols, scale); i >= 0 {
			return i
		}
		return slices.Index(cols, actor)
	}
	if i := at(t.Header, "Scale", "Actor"); i >= 0 {
		t.Header = slices.Insert(slices.Clone(t.Header), i+1, "Attack")
		for k := range t.Rows {
			t.Rows[k] = slices.Insert(t.Rows[k], i+1, AttackName(attacks[k]))
		}
	}
	if t.Data != nil {
		if i := at(t.Data.Columns, "scale", "actor"); i >= 0 {
			t.Data.Columns = slices.Insert(slices.Clone(t.Data.Columns), i+1, "attack")
			for k := range t.Data.Rows {
				t.Data.Rows[k] = slices.Insert(t.Data.Rows[k], i+1, any(AttackName(attacks[k])))
			}
		}
	}
	return t
}

// leakSplitTable is a table of leaked runs split by the keys cols of
// counts (headed as headers says, or by the key with spaces for its
// hyphens), with an "unrecorded"
// column when a row counts one.
func leakSplitTable(s Summary, name, title string, cols []string, headers map[string]string, counts func(Row) map[string]int) (t Table) {
	cols = slices.Clone(cols)
	for _, r := range s.Rows {
		if counts(r)[Unrecorded] > 0 {
			cols = append(cols, Unrecorded)
			break
		}
	}
	t = Table{Name: name, Title: title, Header: []string{"Configuration", "Actor", "Runs", "Leaked"},
		Data: &Data{Columns: append([]string{"config", "label", "actor", "runs", "leaked"}, cols...)}}
	for _, c := range cols {
		// Words, so that a narrow text table can wrap the header
		// ("confidential business" on two lines); the data columns keep
		// the key.
		t.Header = append(t.Header, cmp.Or(headers[c], strings.ReplaceAll(c, "-", " ")))
	}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		n := r.Measured()
		if n == 0 {
			continue
		}
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		leaked := int(math.Round(r.LeakRate * float64(n)))
		row := []string{r.Label, r.Actor, fmt.Sprint(n), fmt.Sprint(leaked)}
		vals := []any{r.Config, r.Label, r.Actor, n, leaked}
		for _, c := range cols {
			row = append(row, fmt.Sprint(counts(r)[c]))
			vals = append(vals, counts(r)[c])
		}
		t.Rows = append(t.Rows, row)
		t.Data.add(vals...)
	}
	return t
}

// AuditGates are the gates of a step's full contract, which the audit
// runs in every configuration, in pipeline order.
var AuditGates = []string{runtime.GateParse, runtime.GateScope, runtime.GatePhase, runtime.GateApply, runtime.GateSchema, runtime.GateInvariants}

// IllegalTable gives, per configuration and actor, the runs with an
// illegal commit, the illegal commits by the audit gate that rejected
// them, and the proposals the configuration's own gates blocked.
func IllegalTable(s Summary) (t Table) {
	gates := []string{runtime.GateScope, runtime.GatePhase, runtime.GateSchema, runtime.GateInvariants}
	t = Table{Name: "illegal", Title: "Illegal commits by gate (committed proposals the full contract rejects), and proposals blocked",
		Header: append(append([]string{"Configuration", "Actor", "Runs with one"}, gates...), "Blocked"),
		Data:   &Data{Columns: append(append([]string{"config", "label", "actor", "illegal_runs"}, gates...), "blocked")}}
	var sc, at []string
	defer func() { t = withAttack(withScale(t, s, sc), s, at) }()
	for _, r := range s.Rows {
		if r.Measured() == 0 {
			continue
		}
		sc, at = append(sc, r.Scale), append(at, r.Attack)
		row := []string{r.Label, r.Actor, fmt.Sprint(r.IllegalRuns)}
		vals := []any{r.Config, r.Label, r.Actor, r.IllegalRuns}
		for _, g := range gates {
			row = append(row, fmt.Sprint(r.IllegalByGate[g]))
			vals = append(vals, r.IllegalByGate[g])
		}
		t.Rows = append(t.Rows, append(row, fmt.Sprint(r.Blocked)))
		t.Data.add(append(vals, r.Blocked)...)
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

// UnknownExpectedNote says that the runs expected of the directories
// dirs are unknown: their manifests were rebuilt by repair from the
// records, which show the runs done but not those missing.
func UnknownExpectedNote(dirs []string) string {
	return fmt.Sprintf("runs expected: unknown for %s (manifest rebuilt by patchbench repair from the records it kept; runs missing from it are not counted)", strings.Join(dirs, ", "))
}

// MarkUnknownExpected marks a report over directories dirs whose runs
// expected are unknown (UnknownExpectedNote): every table's title ends
// with "(runs expected: unknown)", the note is added to the report's
// notes, and the summary is marked (RunsExpectedUnknown) and not
// complete. Nothing is done when dirs is empty.
func MarkUnknownExpected(rep *Report, dirs []string) {
	if len(dirs) == 0 {
		return
	}
	markTables(rep, "runs expected: unknown", UnknownExpectedNote(dirs))
	rep.Summary.RunsExpectedUnknown = true
}

// MissingShardsNote says that directories were merged without some
// shards of their series (dirs: "DIR (without 1/3)", rundir's
// MissingShards).
func MissingShardsNote(dirs []string) string {
	return fmt.Sprintf("shards missing: %s was merged without them (merge --allow-missing); their runs are neither in the tables nor counted as expected", strings.Join(dirs, ", "))
}

// ShardsNotGivenNote says that shards of a series were read without the
// others (dirs: "s3-0, s3-1 (shards of a series of 3, without 2/3)",
// rundir's ShardsNotGiven).
func ShardsNotGivenNote(dirs []string) string {
	return fmt.Sprintf("shards missing: %s were given without the other shards of their series; their runs are neither in the tables nor counted as expected (give every shard, or merge them with patchbench merge)", strings.Join(dirs, "; "))
}

// MarkMissingShards marks a report over directories merged without some
// shards (merged: MissingShardsNote) or over shards given without the
// others of their series (notGiven: ShardsNotGivenNote) as
// MarkUnknownExpected does: every table's title ends with "(shards
// missing)", the notes are added, the summary names them
// (ShardsMissing) and is not complete. Nothing is done when both are
// empty.
func MarkMissingShards(rep *Report, merged, notGiven []string) {
	var notes []string
	if len(merged) > 0 {
		notes = append(notes, MissingShardsNote(merged))
	}
	if len(notGiven) > 0 {
		notes = append(notes, ShardsNotGivenNote(notGiven))
	}
	if len(notes) == 0 {
		return
	}
	markTables(rep, "shards missing", notes[0])
	rep.Notes = append(rep.Notes, notes[1:]...)
	rep.Summary.ShardsMissing = append(slices.Clone(merged), notGiven...)
}

// markTables ends every table's title with "(what)", adds note to the
// report's notes and marks the summary not complete.
func markTables(rep *Report, what, note string) {
	for i := range rep.Tables {
		rep.Tables[i].Title += " (" + what + ")"
	}
	rep.Notes = append(rep.Notes, note)
	rep.Summary.Complete = false
}

// scaleTitle is what the main table's title says of the runs' scales: ""
// at 1x, " at scale 10MB" for one, and for several the scales, which
// the tables' Scale column tells apart.
func scaleTitle(scales []string) string {
	switch len(scales) {
	case 0:
		return ""
	case 1:
		return " at scale " + scales[0]
	}
	return " at the scales " + strings.Join(scales, ", ") + " (a row per scale)"
}
