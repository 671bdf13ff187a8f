package browse

import (
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// Filter is what the overview shows: the query parameters domain,
// config, actor, outcome, round, scale ("1x", "1MB": the runs at that
// scale), kind and mechanism (runs with a leak of a
// secret of that kind, or answering a pull of that mechanism; "none" for
// a leak no pull answers) and q (a search by case or run id: a
// case-insensitive part of the run id, whose configuration may be written
// as its label). The zero Filter shows everything.
type Filter struct {
	Domain    string
	Config    string
	Actor     string
	Outcome   Outcome
	Round     int
	Scale     string
	Kind      string
	Mechanism string
	Q         string
}

// ParseFilter reads a Filter from query parameters; values it does not
// know are kept and match nothing.
func ParseFilter(q url.Values) Filter {
	f := Filter{Domain: q.Get("domain"), Config: q.Get("config"), Actor: q.Get("actor"), Outcome: Outcome(q.Get("outcome")),
		Scale: strings.TrimSpace(q.Get("scale")), Kind: q.Get("kind"), Mechanism: q.Get("mechanism"), Q: strings.TrimSpace(q.Get("q"))}
	f.Round, _ = strconv.Atoi(q.Get("round"))
	return f
}

// Query is the filter as query parameters (those set only), with extra
// parameters (name, value pairs) overriding.
func (f Filter) Query(extra ...string) string {
	v := url.Values{}
	set := func(k, x string) {
		if x != "" && x != "0" {
			v.Set(k, x)
		} else {
			v.Del(k)
		}
	}
	set("domain", f.Domain)
	set("config", f.Config)
	set("actor", f.Actor)
	set("outcome", string(f.Outcome))
	set("round", strconv.Itoa(f.Round))
	set("scale", f.Scale)
	set("kind", f.Kind)
	set("mechanism", f.Mechanism)
	set("q", f.Q)
	for i := 0; i+1 < len(extra); i += 2 {
		set(extra[i], extra[i+1])
	}
	return v.Encode()
}

// search is a filter's q ready to compare with run ids: lower case, the
// configuration's label written as its name.
func (b *Browser) search(q string) string {
	q = strings.ToLower(strings.TrimSpace(q))
	parts := strings.Split(q, "/")
	if len(parts) > 1 {
		for _, c := range b.configs {
			if parts[1] == strings.ToLower(c.Label) {
				parts[1] = c.Name
			}
		}
	}
	return strings.Join(parts, "/")
}

// matchRun reports whether a run passes the filter but its outcome (the
// grid dims the cells whose runs lack the outcome instead of leaving them
// out); q is the search as b.search gives it.
func (f Filter) matchRun(r *runEntry, q string) bool {
	return (f.Domain == "" || r.Domain == f.Domain) && (f.Config == "" || r.Config == f.Config) &&
		(f.Actor == "" || r.Actor == f.Actor) && f.matchInCell(r, q)
}

// matchInCell reports whether a run passes the filters a grid cell applies
// to its runs: round, scale, leak kind, leak mechanism and search.
func (f Filter) matchInCell(r *runEntry, q string) bool {
	return (f.Round == 0 || r.Round == f.Round) && (f.Scale == "" || r.Scale == f.Scale) &&
		(f.Kind == "" || slices.Contains(r.Kinds, f.Kind)) &&
		(f.Mechanism == "" || slices.Contains(r.Mechanisms, f.Mechanism)) &&
		(q == "" || strings.Contains(strings.ToLower(r.ID), q))
}

// narrows reports whether the filter leaves out runs within a grid cell
// (then a row without a kept run is hidden).
func (f Filter) narrows(q string) bool {
	return f.Outcome != "" || q != "" || f.Round != 0 || f.Scale != "" || f.Kind != "" || f.Mechanism != ""
}

// mechanismOption is an option of the mechanism filter.
type mechanismOption struct{ Value, Label string }

// overview is the overview page's data.
type overview struct {
	Dirs     []dirView
	Filter   Filter
	Domains  []string
	Configs  []*bench.Config
	Actors   []string
	Outcomes []Outcome
	Rounds   []int
	// Scales are the runs' scales, smallest first; the scale filter
	// and the main table's Scale column show when there are several.
	Scales []string
	// Kinds are the secret kinds the kind filter offers (the closed list,
	// then those the runs' leaks add); Mechanisms the mechanisms.
	Kinds      []string
	Mechanisms []mechanismOption
	// Labels maps each configuration's label (lower case) to its name,
	// for the script's search.
	Labels   string
	Main     []mainRow
	Tables   []report.Table
	Notes    []string
	Grids    []grid
	Runs     []runRow
	Matched  int
	Capped   bool
	Static   bool
	Warnings []string
	// Unknown says which filter values name nothing the runs have
	// (UnknownFilters).
	Unknown  []string
	Total    int
	Expected int
	Complete bool
}

type dirView struct {
	Label, Path, CaseSet, Started, Finished string
	Runs, Expected, Rounds                  int
	Actors                                  string
	Interrupted                             bool
}

// mainRow is a row of the main table, with the runs of each outcome.
type mainRow struct {
	report.Row
	// ScaleName is the row's scale as the tables print it ("1x").
	ScaleName                      string
	Measured                       int
	Leak, Illegal, Pass            rate
	Legal, Content, Tokens, Attack string
	Counts                         []outcomeCount
	Query                          string
	Hidden                         bool
}

type outcomeCount struct {
	Outcome Outcome
	N       int
	Query   string
}

type grid struct {
	Actor   string
	Configs []*bench.Config
	Rows    []gridRow
	// Shown counts the rows the filter keeps.
	Shown  int
	Hidden bool
}

type gridRow struct {
	Case, Domain, Title string
	Cells               []gridCell
	Hidden              bool
}

// gridCell is the runs of one case × configuration × actor that the
// filter keeps: the most severe outcome among them, how many runs had it,
// and every outcome's count (the cell's title).
type gridCell struct {
	Config  string
	Outcome Outcome
	Count   int
	N       int
	Flags   Flags
	// Also are the failure families the cell's runs show beside its
	// outcome (leaked, illegal), as symbols.
	Also  []Outcome
	Title string
	// RunID is the run when there is one; Query the run list of the
	// cell's runs otherwise.
	RunID  string
	Query  string
	Dim    bool
	Hidden bool
	// Data lists the cell's runs for the single file's script
	// (id|round|flags, comma-separated); empty on the server.
	Data string
}

type runRow struct {
	*runEntry
	Title  string
	Hidden bool
}

// maxListed is how many runs the server's run list shows.
const maxListed = 300

// overview builds the overview for a filter. The single file (static)
// has everything in it, with the filter applied by its script.
func (b *Browser) overview(f Filter, static bool) *overview {
	o := &overview{Filter: f, Domains: b.domains, Configs: b.configs, Actors: b.actors, Outcomes: Outcomes, Static: static,
		Total: len(b.runs), Expected: b.expected, Complete: b.report.Summary.Complete, Notes: b.report.Notes}
	titles := map[string]string{}
	if b.casesReady() {
		o.Warnings, titles = b.warnings, b.titles
	}
	for r := 1; r <= b.rounds; r++ {
		o.Rounds = append(o.Rounds, r)
	}
	o.Kinds = b.kinds
	o.Scales = b.scales
	for _, m := range bench.LeakMechanisms {
		label := m
		if m == bench.MechanismNone {
			label = "no pull"
		}
		o.Mechanisms = append(o.Mechanisms, mechanismOption{m, label})
	}
	var labels []string
	for _, c := range b.configs {
		labels = append(labels, strings.ToLower(c.Label)+"="+c.Name)
	}
	o.Labels = strings.Join(labels, ";")
	for _, d := range b.dirs {
		m := d.manifest
		o.Dirs = append(o.Dirs, dirView{Label: d.label, Path: d.path, CaseSet: d.casesFrom, Started: m.Started, Finished: m.Finished,
			Runs: d.index.Len(), Expected: d.expected, Rounds: m.Rounds, Actors: actorList(m), Interrupted: m.Interrupted})
	}
	q := b.search(f.Q)
	keep := func(r *runEntry) bool { return static || f.matchRun(r, q) }
	o.Main = b.mainRows(f, static)
	for _, t := range b.report.Tables {
		if t.Name != "main" {
			o.Tables = append(o.Tables, t)
		}
	}
	// The grids: one per actor, cases × configurations.
	for _, a := range b.actors {
		if g, ok := b.grid(a, f, q, titles, static); ok {
			o.Grids = append(o.Grids, g)
		}
	}
	// The run list.
	for _, r := range b.runs {
		match := keep(r) && (f.Outcome == "" || r.Flags.Has(f.Outcome))
		if static {
			match = f.matchRun(r, q) && (f.Outcome == "" || r.Flags.Has(f.Outcome))
			o.Runs = append(o.Runs, runRow{runEntry: r, Title: titles[r.Case], Hidden: !match})
			if match {
				o.Matched++
			}
			continue
		}
		if !match {
			continue
		}
		o.Matched++
		if len(o.Runs) < maxListed {
			o.Runs = append(o.Runs, runRow{runEntry: r, Title: titles[r.Case]})
		}
	}
	o.Capped = o.Matched > len(o.Runs) && !static
	return o
}

// mainRows are the main table's rows: every configuration and actor, with
// the runs of each outcome (a run that leaked and committed illegally
// counts in both, as the outcome filter finds it under both).
func (b *Browser) mainRows(f Filter, static bool) []mainRow {
	var out []mainRow
	// Counted per configuration, actor and scale, as the summary's
	// rows are.
	type rowKey struct{ config, actor, scale string }
	counts := map[rowKey]map[Outcome]int{}
	for _, r := range b.runs {
		k := rowKey{r.Config, r.Actor, r.Scale}
		if counts[k] == nil {
			counts[k] = map[Outcome]int{}
		}
		for _, o := range r.Flags.List() {
			counts[k][o]++
		}
	}
	scaled := len(b.scales) > 1
	for _, row := range b.report.Summary.Rows {
		sc := report.ScaleName(row.Scale)
		rowScale := ""
		if scaled {
			rowScale = sc
		}
		mr := mainRow{Row: row, ScaleName: sc, Measured: row.Measured(), Query: Filter{Config: row.Config, Actor: row.Actor, Scale: rowScale}.Query(),
			Hidden: !static && ((f.Config != "" && f.Config != row.Config) || (f.Actor != "" && f.Actor != row.Actor) || (f.Scale != "" && f.Scale != sc))}
		mr.Leak = rateOf(row.LeakRate, row.LeakCI)
		mr.Illegal = rateOf(row.IllegalCommitRate, row.IllegalCommitCI)
		mr.Pass = rateOf(row.SemanticPass, row.SemanticPassCI)
		mr.Legal = fmt.Sprintf("%.3f", row.LegalPass)
		mr.Content = "-"
		if row.ContentScoreAccepted != nil {
			mr.Content = fmt.Sprintf("%.3f", *row.ContentScoreAccepted)
		}
		mr.Tokens = fmt.Sprintf("%.0f", row.TokensMean)
		mr.Attack = "-"
		if row.AttackSuccess != nil {
			mr.Attack = fmt.Sprintf("%.3f (%d)", *row.AttackSuccess, row.AttackRuns)
		}
		for _, oc := range Outcomes {
			if n := counts[rowKey{row.Config, row.Actor, sc}][oc]; n > 0 {
				mr.Counts = append(mr.Counts, outcomeCount{Outcome: oc, N: n, Query: Filter{Config: row.Config, Actor: row.Actor, Scale: rowScale, Outcome: oc}.Query()})
			}
		}
		out = append(out, mr)
	}
	return out
}

// grid is actor a's grid of cases × configurations under the filter; ok
// is false when the filter hides it (and the page is not static).
func (b *Browser) grid(a string, f Filter, q string, titles map[string]string, static bool) (grid, bool) {
	g := grid{Actor: a, Hidden: f.Actor != "" && f.Actor != a}
	if g.Hidden && !static {
		return g, false
	}
	for _, c := range b.configs {
		if static || f.Config == "" || f.Config == c.Name {
			g.Configs = append(g.Configs, c)
		}
	}
	for _, id := range b.caseIDs {
		row := gridRow{Case: id, Domain: b.domainOf[id], Title: titles[id]}
		row.Hidden = f.Domain != "" && row.Domain != f.Domain
		any := false
		for _, c := range g.Configs {
			cell := b.cell(cellKey{id, c.Name, a}, f, q, static)
			cell.Hidden = f.Config != "" && f.Config != c.Name
			if cell.N > 0 && !cell.Dim && !cell.Hidden {
				any = true
			}
			row.Cells = append(row.Cells, cell)
		}
		if f.narrows(q) && !any {
			row.Hidden = true
		}
		if row.Hidden && !static {
			continue
		}
		g.Rows = append(g.Rows, row)
		if !row.Hidden {
			g.Shown++
		}
	}
	return g, true
}

// cell gathers the runs of one grid cell that the filter keeps (round
// and search).
func (b *Browser) cell(k cellKey, f Filter, q string, static bool) gridCell {
	c := gridCell{Config: k.config}
	counts := map[Outcome]int{}
	var data []string
	for _, r := range b.byCell[k] {
		if static {
			data = append(data, fmt.Sprintf("%s|%d|%d|%s|%s|%s", r.ID, r.Round, r.Flags, strings.Join(r.Kinds, " "), strings.Join(r.Mechanisms, " "), r.Scale))
		}
		if !f.matchInCell(r, q) {
			continue
		}
		c.N++
		c.Flags |= r.Flags
		counts[r.Outcome]++
		if c.N == 1 {
			c.RunID = r.ID
		} else {
			c.RunID = ""
		}
	}
	c.Data = strings.Join(data, ",")
	if c.N == 0 {
		c.Title = "no run"
		return c
	}
	var parts []string
	for _, o := range Outcomes {
		if n := counts[o]; n > 0 {
			if c.Outcome == "" {
				c.Outcome, c.Count = o, n
			}
			parts = append(parts, fmt.Sprintf("%s %d", o.Word(), n))
		}
	}
	c.Title = fmt.Sprintf("%s · %s · %s: %s", k.kase, k.config, k.actor, strings.Join(parts, ", "))
	if c.N > 1 {
		c.Title += fmt.Sprintf(" (%d runs)", c.N)
	}
	for _, o := range []Outcome{OutcomeLeaked, OutcomeIllegal} {
		if o != c.Outcome && c.Flags.Has(o) {
			c.Also = append(c.Also, o)
		}
	}
	c.Query = Filter{Round: f.Round, Scale: f.Scale, Outcome: f.Outcome, Kind: f.Kind, Mechanism: f.Mechanism, Q: k.kase + "/" + k.config + "/" + k.actor + "/"}.Query()
	c.Dim = f.Outcome != "" && !c.Flags.Has(f.Outcome)
	return c
}

// UnknownFilters names the filter values of a query that nothing in the
// comparison has (a domain, configuration, actor, outcome, round, scale, secret
// kind or leak mechanism no run has), each with the values there are: such a filter matches no run,
// and the overview says why.
func (b *Browser) UnknownFilters(q url.Values) []string {
	var out []string
	check := func(key string, known []string) {
		v := strings.TrimSpace(q.Get(key))
		if v != "" && !slices.Contains(known, v) {
			out = append(out, fmt.Sprintf("No run has %s %q: the filter matches nothing (%ss: %s).", key, v, key, strings.Join(known, ", ")))
		}
	}
	check("domain", b.domains)
	var configs []string
	for _, c := range b.configs {
		configs = append(configs, c.Name)
	}
	check("config", configs)
	check("actor", b.actors)
	var outcomes []string
	for _, o := range Outcomes {
		outcomes = append(outcomes, string(o))
	}
	check("outcome", outcomes)
	var rounds []string
	for r := 1; r <= b.rounds; r++ {
		rounds = append(rounds, strconv.Itoa(r))
	}
	check("round", rounds)
	check("scale", b.scales)
	check("kind", b.kinds)
	check("mechanism", bench.LeakMechanisms)
	return out
}

// rate is a rate and its 95 % interval, as the main table prints them.
type rate struct{ Value, CI string }

func rateOf(x float64, ci scoring.Interval) rate {
	return rate{fmt.Sprintf("%.3f", x), fmt.Sprintf("[%.3f, %.3f]", ci.Low, ci.High)}
}

// actorList is a directory's actors in words: their names, each given a
// display name followed by its spec ("my-agent (exec:/tmp/x/agent.sh)").
func actorList(m *rundir.Manifest) string {
	var out []string
	for _, a := range m.Actors {
		if spec, ok := m.ActorSpecs[a]; ok {
			a += " (" + spec + ")"
		}
		out = append(out, a)
	}
	return strings.Join(out, ", ")
}
