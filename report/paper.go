package report

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

// Rows selects the summary rows a paper figure is computed over: those of
// the configuration named Config, or, when Config is empty, those whose
// configuration shows the actor View ("full" or "projected"). Only rows
// with a measured run count.
type Rows struct {
	Config string
	View   string
}

func (s Rows) match(r Row) bool {
	if r.Measured() == 0 {
		return false
	}
	if s.Config != "" {
		return r.Config == s.Config
	}
	return r.View == s.View
}

// PaperFigure is one result the paper reports (a row of its table of
// results) and how this run's figure for it is computed. Model
// is the paper's model ("" for the no-model stress test); a figure of a
// model is measured per live actor (Live), the others once. Measure
// returns the cell, or false when the run cannot give it.
type PaperFigure struct {
	Result string
	Paper  string
	Model  string
	Live   bool
	// By says what a figure that is not a model's is measured from.
	By      string
	Measure func(in PaperInput, actor string) (string, bool)
}

// PaperInput is what the paper's figures are measured from: the summary
// and, for the stress figure, the no-model stress test's result (nil when
// it was not run).
type PaperInput struct {
	Summary Summary
	Stress  *scoring.StressResult
	// StressConfigs are the configurations of the stress test, for their
	// labels.
	StressConfigs []*bench.Config
	// Map names, per paper model (a PaperModels Key), the actors whose
	// runs fill its rows (patchbench report --paper-map row=label), in
	// place of the actors found to be runs of that model.
	Map map[string][]string
}

// PaperModel is a model the paper reports: its Key (for --paper-map), its
// Name as the paper prints it, and which model names are that model.
type PaperModel struct {
	Key, Name string
	is        func(base, tag string) bool
}

// PaperModels are the paper's two models. A model name is read as a
// provider's or a server's (case ignored): an organisation prefix
// ("mistralai/") dropped, an Ollama tag (":7b", ":latest") apart, and
// its letters and digits alone compared ("GPT-5-mini-2025-08-07" →
// "gpt5mini20250807"). GPT-5-mini: a name that starts with gpt5mini.
// Mistral 7B: Ollama's mistral (every tag of it is the 7B model) or a
// name that starts with mistral7b ("Mistral-7B-Instruct-v0.3"); not
// mistral-nemo, mistral-small or mistral-large.
var PaperModels = []PaperModel{
	{Key: "gpt-5-mini", Name: "GPT-5-mini", is: func(base, _ string) bool { return strings.HasPrefix(compact(base), "gpt5mini") }},
	{Key: "mistral-7b", Name: "Mistral 7B", is: func(base, _ string) bool {
		return strings.ToLower(base) == "mistral" || strings.HasPrefix(compact(base), "mistral7b")
	}},
}

// PaperModelOf returns the paper model whose Key or Name is key (case,
// spaces and punctuation ignored: "Mistral 7B" is mistral-7b).
func PaperModelOf(key string) (PaperModel, bool) {
	for _, m := range PaperModels {
		if compact(key) == compact(m.Key) {
			return m, true
		}
	}
	return PaperModel{}, false
}

// compact is s in lower case with only its letters and digits.
func compact(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return -1
	}, s)
}

// IsModel reports whether a model name (a provider's, or the model part
// of an actor spec) is the paper model m.
func (m PaperModel) IsModel(name string) bool {
	name = strings.TrimSpace(name)
	if i := strings.LastIndex(name, "/"); i >= 0 {
		name = name[i+1:]
	}
	base, tag, _ := strings.Cut(name, ":")
	return base != "" && m.is(base, tag)
}

// RunOf reports whether actor p's runs are runs of model m: every model
// its provider said answered is m, or, when none was recorded, the model
// its spec names ("openai:gpt-5-mini", "ollama:mistral?num_ctx=8192") is.
// A role map (several specs) and an actor whose spec names no model
// (files:, exec:) without recorded models are runs of no paper model:
// --paper-map names them.
func (m PaperModel) RunOf(p Producer) bool {
	if len(p.Models) > 0 {
		for _, name := range p.Models {
			if !m.IsModel(name) {
				return false
			}
		}
		return true
	}
	spec := cmp.Or(p.Spec, p.Actor)
	if i := strings.Index(spec, "@"); i >= 0 {
		spec = spec[:i] // actor@dir, as Combine names it
	}
	spec, _, _ = strings.Cut(spec, "?") // the spec's parameters
	provider, model, ok := strings.Cut(spec, ":")
	if !ok || strings.Contains(spec, "=") || provider == "files" || provider == "exec" {
		return false
	}
	return m.IsModel(model)
}

// PaperFigures are every figure of the paper (docs/reproduce.md), in
// its order. The configurations each compares are data here: the tables'
// code names none.
var PaperFigures = []PaperFigure{
	{Result: "leak rate, full-state configurations", Paper: "31.5 % (14.5 per round of 46)", Model: "GPT-5-mini", Live: true,
		Measure: measureRows(Rows{View: bench.ViewFull}, nil, leakPerRound)},
	{Result: "leak rate, PatchOptic", Paper: "0.2 % (0.1 per round)", Model: "GPT-5-mini", Live: true,
		Measure: measureRows(Rows{Config: "patchoptic"}, nil, leakRate)},
	{Result: "tokens per run, projected vs full-state", Paper: "11 to 13 % fewer", Model: "GPT-5-mini", Live: true,
		Measure: measureRows(Rows{View: bench.ViewProjected}, &Rows{View: bench.ViewFull}, fewerTokens)},
	{Result: "content score of accepted outputs (PatchOptic; full-state)", Paper: "about 0.927, unchanged by projection", Model: "GPT-5-mini", Live: true,
		Measure: measureRows(Rows{Config: "patchoptic"}, &Rows{View: bench.ViewFull}, contentAccepted)},
	{Result: "semantic pass, Unconstrained → PatchOptic", Paper: "0.61 → 0.78 to 0.80", Model: "GPT-5-mini", Live: true,
		Measure: measureRows(Rows{Config: "patchoptic"}, &Rows{Config: "unconstrained"}, semanticChange)},
	{Result: "no-model stress, hidden-source artifacts accepted", Paper: "PatchOptic and Verify Only 0/9; FSM+ACL 8/9",
		By: "patchbench stress on this run's case set", Measure: stressFigure},
	{Result: "semantic pass, PatchOptic (rank of six)", Paper: "0.690, the best of the six", Model: "Mistral 7B", Live: true,
		Measure: semanticRank},
	{Result: "declared phase and scope violations committed (PatchOptic, Verify Only)", Paper: "none: all blocked before commit",
		By: "every actor of this run", Measure: violationsBlocked},
}

// measureRows measures a figure over the rows of one actor that of and
// against select.
func measureRows(of Rows, against *Rows, f func(of, against []Row) (string, bool)) func(PaperInput, string) (string, bool) {
	return func(in PaperInput, actor string) (string, bool) {
		var ag []Row
		if against != nil {
			ag = selectRows(in.Summary.Rows, actor, *against)
		}
		return f(selectRows(in.Summary.Rows, actor, of), ag)
	}
}

// leakPerRound is the mean leak rate of the rows, with their mean leaked
// runs per round.
func leakPerRound(of, _ []Row) (string, bool) {
	if len(of) == 0 {
		return "", false
	}
	rate, perRound := make([]float64, len(of)), make([]float64, len(of))
	for i, r := range of {
		rate[i], perRound[i] = r.LeakRate, r.LeakedPerRound
	}
	return fmt.Sprintf("%.1f %% (%.1f per round)", 100*scoring.Mean(rate), scoring.Mean(perRound)), true
}

// leakRate is the leak rate of the row, with its leaked runs per round.
func leakRate(of, _ []Row) (string, bool) {
	if len(of) == 0 {
		return "", false
	}
	return fmt.Sprintf("%.1f %% (%.1f per round)", 100*of[0].LeakRate, of[0].LeakedPerRound), true
}

// fewerTokens is how much fewer tokens per run the rows use than the rows
// against, on their means.
func fewerTokens(of, against []Row) (string, bool) {
	tokens := func(rows []Row) float64 {
		xs := make([]float64, len(rows))
		for i, r := range rows {
			xs[i] = r.TokensMean
		}
		return scoring.Mean(xs)
	}
	if len(of) == 0 || len(against) == 0 || !(tokens(against) > 0) {
		return "", false
	}
	return fmt.Sprintf("%.1f %% fewer", 100*(1-tokens(of)/tokens(against))), true
}

// contentAccepted is the content score of accepted runs of the row, then
// the mean of the rows against.
func contentAccepted(of, against []Row) (string, bool) {
	if len(of) == 0 || of[0].ContentScoreAccepted == nil {
		return "", false
	}
	var full []float64
	for _, r := range against {
		if r.ContentScoreAccepted != nil {
			full = append(full, *r.ContentScoreAccepted)
		}
	}
	if len(full) == 0 {
		return fmt.Sprintf("%.3f", *of[0].ContentScoreAccepted), true
	}
	return fmt.Sprintf("%.3f; full-state %.3f", *of[0].ContentScoreAccepted, scoring.Mean(full)), true
}

// semanticChange is the semantic pass of the row against, then of the
// row.
func semanticChange(of, against []Row) (string, bool) {
	if len(of) == 0 || len(against) == 0 {
		return "", false
	}
	return fmt.Sprintf("%.2f → %.2f", against[0].SemanticPass, of[0].SemanticPass), true
}

// semanticRank is PatchOptic's semantic pass for the actor and its rank
// among the configurations measured.
func semanticRank(in PaperInput, actor string) (string, bool) {
	var po *Row
	var all []Row
	for _, r := range in.Summary.Rows {
		if r.Actor != actor || r.Measured() == 0 {
			continue
		}
		all = append(all, r)
		if r.Config == "patchoptic" {
			po = &r
		}
	}
	if po == nil {
		return "", false
	}
	above, tied := 0, 0
	for _, r := range all {
		switch {
		case r.SemanticPass > po.SemanticPass:
			above++
		case r.SemanticPass == po.SemanticPass:
			tied++ // PatchOptic among them
		}
	}
	return fmt.Sprintf("%.3f, %s of %d", po.SemanticPass, Rank(above+1, above+tied), len(all)), true
}

// Rank writes a rank from first to last: "1st" when they are the same,
// "tied 1st–6th" when several share it.
func Rank(first, last int) string {
	if first == last {
		return Ordinal(first)
	}
	return "tied " + Ordinal(first) + "–" + Ordinal(last)
}

// Ordinal writes n as an English ordinal: 1st, 2nd, 3rd, 4th, 11th, 21st.
func Ordinal(n int) string {
	suffix := "th"
	if n%100 < 11 || n%100 > 13 {
		switch n % 10 {
		case 1:
			suffix = "st"
		case 2:
			suffix = "nd"
		case 3:
			suffix = "rd"
		}
	}
	return fmt.Sprintf("%d%s", n, suffix)
}

// stressFigure is the paper set's accepted/total of PatchOptic, Verify
// Only and FSM+ACL in the stress test.
func stressFigure(in PaperInput, _ string) (string, bool) {
	if in.Stress == nil {
		return "", false
	}
	labels := map[string]string{}
	for _, c := range in.StressConfigs {
		labels[c.Name] = c.Label
	}
	var parts []string
	for _, name := range []string{"patchoptic", "verify-only", "fsm-acl"} {
		for _, p := range in.Stress.PaperSet {
			if p.Config == name && p.Total > 0 {
				parts = append(parts, fmt.Sprintf("%s %d/%d", labels[name], p.Accepted, p.Total))
			}
		}
	}
	if len(parts) == 0 {
		// A case set without the paper's hidden-source artifacts (a
		// subset of the suite, a set of one's own) measures nothing.
		return "not measured: no hidden-source artifact of the paper's set in this case set", true
	}
	return strings.Join(parts, "; "), true
}

// violationsBlocked counts, over every actor, the illegal commits (scope
// and phase among them) of PatchOptic and Verify Only, and the proposals
// their gates blocked.
func violationsBlocked(in PaperInput, _ string) (string, bool) {
	illegal, scopePhase, blocked, runs := 0, 0, 0, 0
	for _, r := range in.Summary.Rows {
		if r.Measured() == 0 || (r.Config != "patchoptic" && r.Config != "verify-only") {
			continue
		}
		runs += r.Measured()
		illegal += r.IllegalCommits
		scopePhase += r.IllegalByGate["scope"] + r.IllegalByGate["phase"]
		blocked += r.Blocked
	}
	if runs == 0 {
		return "", false
	}
	return fmt.Sprintf("%d committed (%d scope or phase) in %s; %s blocked", illegal, scopePhase, Plural(runs, "run"), Plural(blocked, "proposal")), true
}

// Producer says what produced an actor's figures: the actor's spec, the
// models the provider said answered (a live actor's), and the run's
// rounds and settings.
type Producer struct {
	// Actor is the actor's name in the report (its spec, or the display
	// name it was given).
	Actor string
	// Spec is the actor's spec when Actor is a display name, else "".
	Spec string
	// Models are the models the provider said answered (at most four).
	Models []string
	Rounds int
	// Temperature is the run's --temperature (nil: the server's
	// default); a spec's own ?temperature= is part of Actor.
	Temperature *float64
	// MaxOutputTokens is the run's --max-output-tokens (0: the server's).
	MaxOutputTokens int
	MaxAttempts     int
	Structured      bool
	// Dir names the run directory (its base name, say).
	Dir string
}

// Live reports whether the actor is a live model (openai:, ollama:) or
// answers through the file actor (files:, a person or a model called
// elsewhere), rather than one of the no-model actors.
func (p Producer) Live() bool { return IsLiveActor(cmp.Or(p.Spec, p.Actor)) }

// IsLiveActor reports whether an actor spec names a live model (openai:,
// ollama:) or the file actor (files:), in itself or in a role map.
func IsLiveActor(spec string) bool {
	for _, k := range []string{"openai:", "ollama:", "files:"} {
		if strings.Contains(spec, k) {
			return true
		}
	}
	return false
}

// String is the producer in words: "openai:gpt-5-mini (gpt-5-mini-2025-08-07),
// 3 rounds, the server's temperature, 1 attempt per step, results/run-…".
func (p Producer) String() string {
	s := p.Actor
	if len(p.Models) > 0 {
		s += " (" + strings.Join(p.Models, ", ") + ")"
	}
	s += ", " + Plural(p.Rounds, "round")
	if p.Live() {
		if p.Temperature != nil {
			s += fmt.Sprintf(", temperature %g", *p.Temperature)
		} else {
			s += ", the server's temperature"
		}
	}
	if p.MaxOutputTokens > 0 {
		s += fmt.Sprintf(", at most %d output tokens", p.MaxOutputTokens)
	}
	s += ", " + PluralOf(p.MaxAttempts, "attempt per step", "attempts per step")
	if p.Structured {
		s += ", structured"
	}
	if p.Dir != "" {
		s += ", " + p.Dir
	}
	return s
}

// PaperTable puts every figure of the paper (PaperFigures) beside this
// run's: a figure of a model once per actor whose runs are runs of that
// model (PaperModel.RunOf, or the actors in.Map names for it), with the
// model, rounds and settings that produced it, or "not measured" when no
// actor is; the stress and violation figures once. producers holds each
// actor of the summary (a missing one is described by its name).
//
// The paper's runs are at 1x (the states as the cases write them): when
// the summary holds runs at another scale, only its rows at 1x are
// measured, and the title says so.
func PaperTable(in PaperInput, producers map[string]Producer) Table {
	t := Table{Name: "paper", Title: "The paper's figures beside this run's",
		Header: []string{"Result", "Paper", "Paper's model", "This run", "Produced by"},
		Data:   &Data{Columns: []string{"result", "paper", "paper_model", "this_run", "actor", "produced_by"}}}
	if len(in.Summary.Scales) > 0 {
		var base []Row
		for _, r := range in.Summary.Rows {
			if r.Scale == "" {
				base = append(base, r)
			}
		}
		in.Summary.Rows = base
		t.Title += " (the paper's rows are at 1x: this run's rows at 1x only, its rows at " + strings.Join(slices.DeleteFunc(slices.Clone(in.Summary.Scales), func(s string) bool { return s == "1x" }), ", ") + " left out)"
	}
	producer := func(a string) Producer {
		if p, ok := producers[a]; ok {
			return p
		}
		return Producer{Actor: a}
	}
	var actors, live []string
	for _, r := range in.Summary.Rows {
		if !slices.Contains(actors, r.Actor) {
			actors = append(actors, r.Actor)
			if producer(r.Actor).Live() {
				live = append(live, r.Actor)
			}
		}
	}
	add := func(f PaperFigure, cell, actor, by string) {
		model := f.Model
		if model == "" {
			model = "no model"
		}
		t.Rows = append(t.Rows, []string{f.Result, f.Paper, model, cell, by})
		t.Data.add(f.Result, f.Paper, model, cell, actor, by)
	}
	for _, f := range PaperFigures {
		var of []string
		if f.Live {
			m, _ := PaperModelOf(f.Model)
			if mapped, ok := in.Map[m.Key]; ok {
				of = mapped
			} else {
				for _, a := range live {
					if m.RunOf(producer(a)) {
						of = append(of, a)
					}
				}
			}
		}
		switch {
		case f.Live && len(of) == 0 && len(live) == 0:
			add(f, "not measured", "", "no live model in this run (actors: "+strings.Join(actors, ", ")+")")
		case f.Live && len(of) == 0:
			m, _ := PaperModelOf(f.Model)
			add(f, "not measured", "", fmt.Sprintf("no run of %s (actors: %s; --paper-map %s=ACTOR names one)", m.Name, strings.Join(actors, ", "), m.Key))
		case f.Live:
			for _, a := range of {
				cell, ok := f.Measure(in, a)
				if !ok {
					cell = "not measured"
				}
				add(f, cell, a, producer(a).String())
			}
		default:
			cell, ok := f.Measure(in, "")
			if !ok {
				cell = "not measured"
			}
			add(f, cell, "", f.By)
		}
	}
	return t
}

// selectRows returns the rows of actor a that sel selects, in order.
func selectRows(rows []Row, a string, sel Rows) []Row {
	var out []Row
	for _, r := range rows {
		if r.Actor == a && sel.match(r) {
			out = append(out, r)
		}
	}
	return out
}
