package report

import (
	"cmp"
	"maps"
	"math"
	"slices"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// Row is one line of summary.json: the statistics of one configuration
// and actor over every round and case (docs/run.md). Rates and
// means leave error and pending runs out; Runs counts them, Errors and
// Pending say how many.
type Row struct {
	Config string `json:"config"`
	Label  string `json:"label"`
	View   string `json:"view"`
	Actor  string `json:"actor"`
	// Scale is the scale of the row's runs (rundir.Record.Scale): ""
	// at 1x, for a case that does not grow, and for a record of no
	// scale. A directory of several scales has a row per
	// configuration, actor and scale.
	Scale string `json:"scale,omitempty"`
	// Attack is the attack of the row's runs (rundir.Record.AttackName):
	// "" for the default, the case's own planted texts. A directory of
	// several attacks has a row per configuration, actor, scale and
	// attack.
	Attack         string           `json:"attack,omitempty"`
	Runs           int              `json:"runs"`
	Errors         int              `json:"errors"`
	Pending        int              `json:"pending"`
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
	// IllegalCommitRate is the share of runs with at least one illegal
	// commit (a committed proposal the step's full contract rejects);
	// IllegalCommits counts those proposals, by the audit's first failed
	// gate and by its code.
	IllegalCommitRate float64          `json:"illegal_commit_rate"`
	IllegalCommitCI   scoring.Interval `json:"illegal_commit_ci"`
	IllegalRuns       int              `json:"illegal_runs"`
	IllegalCommits    int              `json:"illegal_commits"`
	IllegalByGate     map[string]int   `json:"illegal_commits_by_gate"`
	IllegalByCode     map[string]int   `json:"illegal_commits_by_code"`
	// Blocked counts the proposals that one of the configuration's own
	// gates (scope, acl, phase, schema, invariants) rejected; parse and
	// apply failures are not counted here.
	Blocked int `json:"blocked"`
	// LegalPass is the share of runs with a semantic pass and no illegal
	// commit: the figure to compare configurations by when an ungated
	// one commits what the contract forbids.
	LegalPass   float64          `json:"legal_pass"`
	LegalPassCI scoring.Interval `json:"legal_pass_ci"`
	// AttackRuns counts the runs of cases with prompt injections;
	// AttackSuccess is the share of them in which an injected secret
	// leaked, and UtilityUnderAttack their semantic pass (AgentDojo's
	// terms). Both are null when the row has no such run.
	AttackRuns           int               `json:"attack_runs"`
	AttackSuccess        *float64          `json:"attack_success_rate"`
	AttackSuccessCI      *scoring.Interval `json:"attack_success_ci"`
	UtilityUnderAttack   *float64          `json:"utility_under_attack"`
	UtilityUnderAttackCI *scoring.Interval `json:"utility_under_attack_ci"`
	Rejections           map[string]int    `json:"rejections"`
	RejectionsByGate     map[string]int    `json:"rejections_by_gate"`
	TokensChangeVsFull   *float64          `json:"tokens_change_vs_full,omitempty"`
	// Tools is set for the runs of the tools protocol (absent for the
	// json protocol): turns and tool calls per run, and the reads.
	Tools *ToolFigures `json:"tools,omitempty"`
	// StepsEnded counts the steps of the runs with an outcome that ended
	// without a commit, by code (rundir.StepRecord.Ended), in either
	// protocol: the json protocol's steps end so only when their prompt
	// would pass the actor's context budget (context_exceeded). Absent
	// when no step ended so.
	StepsEnded map[string]int `json:"steps_ended,omitempty"`
	// LeakedByKind counts the leaked runs by the kind of a secret they
	// leaked, and LeakedByMechanism by the mechanism of the pull a leak
	// answered (scoring.Leak's Kind and Mechanism; "unrecorded" for a
	// leak recorded without them): a run counts once under each kind
	// (mechanism) its leaks have, so a row's counts may add up to more
	// than its leaked runs.
	LeakedByKind      map[string]int `json:"leaked_by_kind"`
	LeakedByMechanism map[string]int `json:"leaked_by_mechanism"`
	// LeakedByRoute counts the leaked runs by the route a secret took
	// (a run counts once under each route its leaks have):
	// RouteRepeated, a value the actor read and repeated in something
	// it sent (scoring.WhereOutput), and RouteCopied, a value its patch
	// copied into the state (scoring.WhereState, found in the final
	// state away from the secret's own place).
	LeakedByRoute map[string]int `json:"leaked_by_route"`
}

// The routes of a leak (Row.LeakedByRoute).
const (
	RouteRepeated = "repeated"
	RouteCopied   = "copied"
)

// LeakRoutes are the routes of a leak, in the order of the tables.
var LeakRoutes = []string{RouteRepeated, RouteCopied}

// leakRoute is the route of a leak by where it was found.
func leakRoute(l scoring.Leak) string {
	switch l.Where {
	case scoring.WhereOutput:
		return RouteRepeated
	case scoring.WhereState:
		return RouteCopied
	}
	return ""
}

// Unrecorded is the kind or mechanism of a leak whose record does not
// say it (a record written before leaks had them).
const Unrecorded = "unrecorded"

// ToolFigures are the agent-loop figures of a row's runs with an outcome
// (the tools protocol): means per run of turns and tool calls, the
// reads, the reads of hidden locations (in the state, outside the view)
// and how many of those were answered as absent (all of them, unless
// the environment is broken), and the steps that ended without a commit
// by code (rundir.StepRecord.Ended). BytesRead is the size of what the
// reads answered (each read result's full length, rundir.ToolCall's
// ResultBytes or its text), and BytesReadPerStep that over the steps of
// the tools protocol.
type ToolFigures struct {
	TurnsPerRun      float64        `json:"turns_per_run"`
	ToolCallsPerRun  float64        `json:"tool_calls_per_run"`
	BytesRead        int64          `json:"bytes_read"`
	BytesReadPerStep float64        `json:"bytes_read_per_step"`
	Steps            int            `json:"steps"`
	Reads            int            `json:"reads"`
	HiddenReads      int            `json:"hidden_reads"`
	HiddenAbsent     int            `json:"hidden_reads_answered_absent"`
	Ended            map[string]int `json:"steps_ended"`
}

// Measured is the number of runs with an outcome (neither error nor
// pending): the denominator of every rate.
func (r Row) Measured() int { return r.Runs - r.Errors - r.Pending }

// Summary is summary.json. RunsExpected and Complete are set by the
// caller that knows the settings (0 and false when unknown);
// RunsExpectedUnknown says that a directory's manifest does not know its
// expected runs (rebuilt by repair), so RunsExpected leaves them out.
// ShardsMissing names the directories read without some shards of their
// series (MarkMissingShards): their runs are not in it, nor expected.
type Summary struct {
	Rows []Row `json:"rows"`
	// Scales are the scales of the runs (rundir.Record.Scale, "1x" for
	// none) when any is not 1x, smallest first; nil when every run is
	// at 1x. With more than one, every table has a Scale column
	// (MultiScale) and the rows are per configuration, actor and scale.
	Scales []string `json:"scales,omitempty"`
	// Attacks are the attacks of the runs (rundir.Record.AttackName,
	// bench.AttackCase for the default) when any is not the default,
	// the default first and the others by name; nil when every run is
	// at the default. With more than one, every table has an Attack
	// column (MultiAttack) and the rows are per configuration, actor,
	// scale and attack.
	Attacks             []string `json:"attacks,omitempty"`
	RunsRecorded        int      `json:"runs_recorded"`
	RunsExpected        int      `json:"runs_expected"`
	RunsExpectedUnknown bool     `json:"runs_expected_unknown,omitempty"`
	ShardsMissing       []string `json:"shards_missing,omitempty"`
	Complete            bool     `json:"complete"`
}

// Summarizer builds the summary of a run directory from its records,
// added one at a time as they are read (rundir.Dir.Each), in the manner of
// vegeta's metrics: per configuration and actor it keeps counts and one
// number per run (tokens, content), never a record.
type Summarizer struct {
	configs  []*bench.Config
	actors   []string
	groups   map[groupKey]*group
	recorded int
	settled  int
	scales   map[string]bool
	attacks  map[string]bool
}

type groupKey struct{ config, actor, scale, attack string }

// group accumulates the runs of one configuration and actor.
type group struct {
	runs, errors, pending               int
	leaked, passed, allCommitted, legal int
	attacked, attackWon, attackPassed   int
	values                              []runValues
	leakedByRound                       map[int]int
	leakedByKind, leakedByMechanism     map[string]int
	leakedByRoute                       map[string]int
	rejections                          scoring.Rejections
	illegal                             scoring.IllegalCommits
	// tools counts the agent-loop figures of runs of the tools protocol
	// (nil when the group has none).
	tools *ToolFigures
	// ended counts the steps ended without a commit, by code, in either
	// protocol (nil when none did).
	ended map[string]int
}

// runValues are the figures of one run that a group averages, with the
// run's place in the order of a run's jobs (round, then the case set's
// order: domain, case id), in which they are summed: floating-point sums
// depend on their order, and records are written in the order runs end.
type runValues struct {
	round           int
	domain, caseID  string
	tokens, content float64
	accepted        bool // every step committed
}

// NewSummarizer starts the summary of the runs of configs (in their
// order) and actorNames (in theirs).
func NewSummarizer(configs []*bench.Config, actorNames []string) *Summarizer {
	return &Summarizer{configs: configs, actors: actorNames, groups: map[groupKey]*group{}}
}

// Add counts one record: the last record of a run (rundir.Latest).
func (s *Summarizer) Add(r *rundir.Record) {
	s.recorded++
	if s.scales == nil {
		s.scales = map[string]bool{}
	}
	s.scales[cmp.Or(r.Scale, "1x")] = true
	if s.attacks == nil {
		s.attacks = map[string]bool{}
	}
	s.attacks[r.AttackName] = true
	if r.Status != rundir.StatusPending {
		s.settled++
	}
	k := groupKey{r.Config, r.Actor, r.Scale, r.AttackName}
	g := s.groups[k]
	if g == nil {
		g = &group{leakedByRound: map[int]int{}, leakedByKind: map[string]int{}, leakedByMechanism: map[string]int{}, leakedByRoute: map[string]int{},
			rejections: scoring.NewRejections(), illegal: scoring.NewIllegalCommits()}
		s.groups[k] = g
	}
	g.add(r)
}

// Recorded is the number of records added; Settled those that are not
// pending (an outcome or an error): a run directory is complete when its
// settled runs reach its expected runs.
func (s *Summarizer) Recorded() int { return s.recorded }

// Settled is the number of records added that are not pending.
func (s *Summarizer) Settled() int { return s.settled }

// Summary is the summary of the records added: one row per configuration
// (in the order of configs), actor (in the order of actorNames) and scale
// (smallest first, 1x as "") that has runs. TokensChangeVsFull, for
// projected configurations, is the relative change of mean tokens
// against the mean of the full-state configurations' means for the same
// actor at the same scale. RunsExpected and Complete are the caller's,
// who knows the settings.
func (s *Summarizer) Summary() Summary {
	var recorded []string
	for k := range s.groups {
		if !slices.Contains(recorded, k.scale) {
			recorded = append(recorded, k.scale)
		}
	}
	SortScales(recorded)
	attacks := slices.Collect(maps.Keys(s.attacks))
	SortAttacks(attacks)
	var rows []Row
	for _, cfg := range s.configs {
		for _, a := range s.actors {
			for _, sc := range recorded {
				for _, at := range attacks {
					if g := s.groups[groupKey{cfg.Name, a, sc, at}]; g != nil {
						row := g.row(cfg, a, sc)
						row.Attack = at
						rows = append(rows, row)
					}
				}
			}
		}
	}
	full := map[[3]string][]float64{}
	for _, r := range rows {
		if r.View == bench.ViewFull && r.Measured() > 0 {
			k := [3]string{r.Actor, r.Scale, r.Attack}
			full[k] = append(full[k], r.TokensMean)
		}
	}
	for i := range rows {
		f := full[[3]string{rows[i].Actor, rows[i].Scale, rows[i].Attack}]
		if rows[i].View != bench.ViewProjected || len(f) == 0 {
			continue
		}
		if base := scoring.Mean(f); base > 0 {
			ch := rows[i].TokensMean/base - 1
			rows[i].TokensChangeVsFull = &ch
		}
	}
	var scales []string
	if len(s.scales) > 1 || len(s.scales) == 1 && !s.scales["1x"] {
		scales = slices.Collect(maps.Keys(s.scales))
		SortScales(scales)
	}
	var named []string
	if len(attacks) > 1 || len(attacks) == 1 && attacks[0] != "" {
		for _, at := range attacks {
			named = append(named, AttackName(at))
		}
	}
	return Summary{Rows: rows, Scales: scales, Attacks: named, RunsRecorded: s.recorded}
}

// add counts one run of the group. Error and pending runs count as runs
// only.
func (g *group) add(r *rundir.Record) {
	g.runs++
	switch r.Status {
	case rundir.StatusError:
		g.errors++
		return
	case rundir.StatusPending:
		g.pending++
		return
	}
	illegal := make([][2]string, len(r.IllegalCommits))
	for i, ic := range r.IllegalCommits {
		illegal[i] = [2]string{ic.Gate, ic.Code}
	}
	g.illegal.AddRun(illegal)
	if r.LegalPass {
		g.legal++
	}
	if r.Attack != nil {
		g.attacked++
		if r.Attack.Succeeded {
			g.attackWon++
		}
		if r.SemanticPass {
			g.attackPassed++
		}
	}
	if _, ok := g.leakedByRound[r.Round]; !ok {
		g.leakedByRound[r.Round] = 0
	}
	if r.Leaked {
		g.leaked++
		g.leakedByRound[r.Round]++
	}
	countOnce(g.leakedByKind, r.Leaks, func(l scoring.Leak) string { return l.Kind })
	countOnce(g.leakedByMechanism, r.Leaks, func(l scoring.Leak) string { return l.Mechanism })
	countOnce(g.leakedByRoute, r.Leaks, leakRoute)
	if r.SemanticPass {
		g.passed++
	}
	all := true
	for _, st := range r.Steps {
		all = all && st.Committed
		if st.Ended != "" {
			if g.ended == nil {
				g.ended = map[string]int{}
			}
			g.ended[st.Ended]++
		}
		for _, at := range st.Earlier {
			g.rejections.Add(at.Decisions)
		}
		g.rejections.Add(st.Decisions)
	}
	if all {
		g.allCommitted++
	}
	g.addTools(r)
	g.values = append(g.values, runValues{round: r.Round, domain: r.Domain, caseID: r.Case,
		tokens: float64(r.Tokens.Prompt + r.Tokens.Completion), content: r.ContentScore, accepted: all})
}

// means returns the group's tokens, content scores and content scores of
// runs whose every step committed, in the order of the runs' jobs, so that
// their means do not depend on the order the records came in.
func (g *group) means() (tokens, content, accepted []float64) {
	slices.SortStableFunc(g.values, func(a, b runValues) int {
		return cmp.Or(cmp.Compare(a.round, b.round), cmp.Compare(a.domain, b.domain), cmp.Compare(a.caseID, b.caseID))
	})
	for _, v := range g.values {
		tokens = append(tokens, v.tokens)
		content = append(content, v.content)
		if v.accepted {
			accepted = append(accepted, v.content)
		}
	}
	return tokens, content, accepted
}

// row computes the group's row: rates with their
// Wilson intervals over the runs with an outcome, means with their t
// intervals, the counts.
func (g *group) row(cfg *bench.Config, actor, scale string) Row {
	row := Row{Config: cfg.Name, Label: cfg.Label, View: cfg.View, Actor: actor, Scale: scale, Runs: g.runs, Errors: g.errors, Pending: g.pending,
		LeakedByRoute: g.leakedByRoute,
		Rejections:    g.rejections.ByCode, RejectionsByGate: g.rejections.ByGate, Blocked: g.rejections.Blocked,
		IllegalByGate: g.illegal.ByGate, IllegalByCode: g.illegal.ByCode, IllegalCommits: g.illegal.Commits,
		LeakedByKind: g.leakedByKind, LeakedByMechanism: g.leakedByMechanism}
	n := row.Measured()
	if n == 0 {
		return row
	}
	row.IllegalRuns = g.illegal.Runs
	row.IllegalCommitRate = float64(g.illegal.Runs) / float64(n)
	row.IllegalCommitCI = scoring.Wilson(g.illegal.Runs, n)
	row.LegalPass = float64(g.legal) / float64(n)
	row.LegalPassCI = scoring.Wilson(g.legal, n)
	if g.attacked > 0 {
		rate, util := float64(g.attackWon)/float64(g.attacked), float64(g.attackPassed)/float64(g.attacked)
		ci, uci := scoring.Wilson(g.attackWon, g.attacked), scoring.Wilson(g.attackPassed, g.attacked)
		row.AttackRuns, row.AttackSuccess, row.AttackSuccessCI = g.attacked, &rate, &ci
		row.UtilityUnderAttack, row.UtilityUnderAttackCI = &util, &uci
	}
	row.LeakRate = float64(g.leaked) / float64(n)
	row.LeakCI = scoring.Wilson(g.leaked, n)
	perRound := make([]float64, 0, len(g.leakedByRound))
	for _, k := range g.leakedByRound {
		perRound = append(perRound, float64(k))
	}
	row.LeakedPerRound = scoring.Mean(perRound)
	tokens, content, accepted := g.means()
	row.TokensMean, row.TokensCI = scoring.MeanCI(tokens)
	row.CommitRate = float64(g.allCommitted) / float64(n)
	row.ContentScore, _ = scoring.MeanCI(content)
	if len(accepted) > 0 {
		m, _ := scoring.MeanCI(accepted)
		row.ContentScoreAccepted = &m
	}
	row.SemanticPass = float64(g.passed) / float64(n)
	row.SemanticPassCI = scoring.Wilson(g.passed, n)
	row.StepsEnded = g.ended
	if g.tools != nil {
		f := *g.tools
		f.TurnsPerRun /= float64(n)
		f.ToolCallsPerRun /= float64(n)
		if f.Steps > 0 {
			f.BytesReadPerStep = float64(f.BytesRead) / float64(f.Steps)
		}
		row.Tools = &f
	}
	return row
}

// addTools counts the turns, calls and reads of a run of the tools
// protocol (one whose steps hold turns); the sums of turns and calls
// are divided by the runs in row.
func (g *group) addTools(r *rundir.Record) {
	for _, st := range r.Steps {
		if len(st.Turns) == 0 {
			continue
		}
		if g.tools == nil {
			g.tools = &ToolFigures{Ended: map[string]int{}}
		}
		f := g.tools
		if st.Ended != "" {
			f.Ended[st.Ended]++
		}
		f.Steps++
		f.TurnsPerRun += float64(len(st.Turns))
		for _, t := range st.Turns {
			f.ToolCallsPerRun += float64(len(t.Calls))
			for _, c := range t.Calls {
				if !c.Read {
					continue
				}
				f.Reads++
				f.BytesRead += max(c.ResultBytes, int64(len(c.Result)))
				if c.Hidden {
					f.HiddenReads++
					if c.Error == "absent" {
						f.HiddenAbsent++
					}
				}
			}
		}
	}
}

// countOnce counts, in m, each value of key among leaks once ("" as
// Unrecorded).
func countOnce(m map[string]int, leaks []scoring.Leak, key func(scoring.Leak) string) {
	var seen []string
	for _, l := range leaks {
		k := cmp.Or(key(l), Unrecorded)
		if !slices.Contains(seen, k) {
			seen = append(seen, k)
			m[k]++
		}
	}
}

// SortScales sorts scales ("1x" or "" first, then "1MB", "10MB" by size:
// bench.ParseScale) in place; a scale it cannot read goes last, by name.
func SortScales(scales []string) {
	size := func(s string) int64 {
		if s == "" {
			return 0
		}
		sc, err := bench.ParseScale(s)
		if err != nil {
			return math.MaxInt64
		}
		return sc.Bytes
	}
	slices.SortStableFunc(scales, func(a, b string) int { return cmp.Or(cmp.Compare(size(a), size(b)), cmp.Compare(a, b)) })
}

// MultiScale reports whether the summary's runs are at more than one
// scale: its tables then have a Scale column.
func (s Summary) MultiScale() bool { return len(s.Scales) > 1 }

// SortAttacks sorts attacks as recorded (rundir.Record.AttackName): the
// default ("") first, the others by name.
func SortAttacks(attacks []string) { slices.Sort(attacks) }

// MultiAttack reports whether the runs are under more than one attack.
func (s Summary) MultiAttack() bool { return len(s.Attacks) > 1 }

// AttackName is an attack as tables show it: bench.AttackCase for the
// default ("").
func AttackName(attack string) string { return cmp.Or(attack, bench.AttackCase) }

// ScaleName is a row's scale as the tables print it: "1x" for "".
func ScaleName(scale string) string { return cmp.Or(scale, "1x") }
