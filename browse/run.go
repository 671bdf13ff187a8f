package browse

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// runPage is what a run's page shows.
type runPage struct {
	ID          string
	Case        string
	Title       string
	Description string
	Domain      string
	ConfigLabel string
	ConfigText  string
	Actor       string
	Round       int
	Dir         string
	Status      string
	Outcome     Outcome
	Flags       Flags
	Summary     string
	Error       []Seg
	Attack      string
	Tokens      string
	Steps       []*stepView
	Checks      []scoring.CheckResult
	Held        int
	Leaks       []leakView
	LeakCount   string
	LeaksMore   int // the leaks past maxPageLeaks, not listed
	Paired      []pairView
	// Reveal says hidden values are in the page; CanReveal that the
	// page may offer to show them (the server's pages; the single file
	// never holds them).
	Reveal    bool
	CanReveal bool
	CaseKnown bool
	// Replayed says the states were replayed; Notes say what could not
	// be (a case that is not known, a replay that differs).
	Replayed bool
	Notes    []string
}

// stepView is one step of a run page.
type stepView struct {
	N           int
	ID          string
	Role        string
	Instruction string
	Phase       string
	Result      string
	Attempts    int
	NotReached  bool
	Projected   bool
	ViewText    string
	ViewTokens  int
	// ViewTokensOver: the view passes the context budget, ViewTokens
	// (it was counted only until then).
	ViewTokensOver bool
	ViewDigest     string
	// View is what a projected configuration showed the actor; State
	// the whole state before the step with the locations its view
	// hides withheld (nil when the state could not be replayed).
	View          []Seg
	State         []Seg
	HiddenSecrets []string
	ShownSecrets  []string
	Prompt        []msgView
	Injections    []injView
	Earlier       []attemptView
	// Turns is the step's conversation in the tools protocol; Ended how
	// it ended without a commit.
	Turns         []turnView
	Ended         string
	Response      []Seg
	ResponseBytes int
	ResponseLeaks int
	Patch         []opView
	PatchNote     string
	Decisions     []gateView
	Audit         []gateView
	AuditSame     bool
	Illegal       []string
	PhaseError    string
	Inherited     string
	Diff          []diffView
	DiffNote      string
	// Model is the model the last attempt's provider (or exec program)
	// said answered, masked as the response is.
	Model []Seg
}

type msgView struct {
	Role string
	Text []Seg
}

type injView struct {
	At, What, Plausibility string
	Text                   []Seg
}

// turnView is one turn of a step of the tools protocol: the actor's text
// and tool calls, each with its result (masked as any text is).
type turnView struct {
	N      int
	Tokens string
	Text   []Seg
	Calls  []callView
}

// callView is one tool call: a read with its pointer and whether it lay
// inside the view, or another call with its arguments; and the result.
type callView struct {
	Name    string
	Read    bool
	Pointer []Seg
	Where   string
	Hidden  bool
	Args    []Seg
	Result  []Seg
}

type attemptView struct {
	N         int
	Response  []Seg
	Leaks     int
	Decisions []gateView
	Audit     []gateView
}

type opView struct {
	Op       string
	Path     []Seg
	From     []Seg
	Value    []Seg
	HasFrom  bool
	HasValue bool
}

type gateView struct {
	Gate    string
	Passed  bool
	Code    string
	Pointer []Seg
	Message []Seg
}

type diffView struct {
	Path   []Seg
	Kind   string
	Before []Seg
	After  []Seg
}

type leakView struct {
	Secret   string
	Where    []Seg
	Detector string
	// Class is the leak's kind and mechanism (report.LeakClass).
	Class string
}

type pairView struct {
	Config  string
	Label   string
	ID      string
	Outcome Outcome
	Summary string
	Current bool
}

// loadRun reads run id's record (one ReadAt) and builds its page: per
// step the state replayed before it, and every text with its canaries and
// hidden values marked (withheld unless reveal).
func (b *Browser) loadRun(ctx context.Context, id string, reveal bool) (*runPage, error) {
	return b.loadRunMemo(ctx, id, reveal, nil)
}

// loadRunMemo is loadRun with the masked texts, states and diffs taken
// from memo when an earlier page of the same case asked for the same
// (memo may be nil: nothing is kept).
func (b *Browser) loadRunMemo(ctx context.Context, id string, reveal bool, memo *pageMemo) (*runPage, error) {
	e := b.lookup(id)
	if e == nil {
		return nil, errNoRun{id: id, near: b.nearIDs(id)}
	}
	if err := b.waitCases(ctx); err != nil {
		return nil, err
	}
	d := b.dirs[e.dir]
	rec, err := d.index.Load(e.idx)
	if err != nil {
		return nil, err
	}
	rec.Actor = e.Actor
	c := d.cases[rec.Case]
	// The case as the run met it: grown to its scale, its injections
	// worded by its attack. ownTexts says the attack could not be
	// applied: the injection sites hold the case's own texts.
	var ownTexts bool
	var runCaseNote string
	if c != nil {
		rc, err := b.runCase(e.dir, c, rec)
		switch {
		case rc == nil:
			runCaseNote = fmt.Sprintf("The case %s cannot be made as the run met it (%v): the page is written from the record alone, and its texts are withheld until revealed.", rec.Case, err)
		case err != nil:
			ownTexts = true
			runCaseNote = fmt.Sprintf("The run's attack %s could not be applied: %v. The injections' texts are not shown, and the states are replayed with the case's own texts at the injection sites, which are not the run's.", rec.AttackName, err)
		}
		c = rc
	}
	cfg := configByName(b.configs, rec.Config)
	p := &runPage{ID: e.ID, Case: rec.Case, Domain: rec.Domain, ConfigLabel: rec.Config, ConfigText: rec.Config, Actor: e.Actor, Round: rec.Round,
		Dir: d.label, Status: rec.Status, Outcome: e.Outcome, Flags: e.Flags, Summary: report.OutcomeText(rec), Reveal: reveal, CaseKnown: c != nil}
	if cfg != nil {
		p.ConfigLabel = cfg.Label
		p.ConfigText = configText(cfg)
	}
	if c != nil {
		p.Title, p.Description = c.Title, c.Description
	} else {
		p.Title = b.titles[rec.Case]
		if runCaseNote == "" {
			p.Notes = append(p.Notes, fmt.Sprintf("The case %s is not in the case set %s: the page is written from the record alone, and its texts are withheld until revealed, since nothing tells its hidden values apart.", rec.Case, d.casesFrom))
		}
	}
	if runCaseNote != "" {
		p.Notes = append(p.Notes, runCaseNote)
	}
	p.Tokens = fmt.Sprintf("%d (prompt %d, completion %d; %s)", rec.Tokens.Prompt+rec.Tokens.Completion, rec.Tokens.Prompt, rec.Tokens.Completion, rec.Tokens.Source)
	if rec.Attack != nil {
		won := "did not succeed"
		if rec.Attack.Succeeded {
			won = "succeeded"
		}
		p.Attack = fmt.Sprintf("the injections ask for %s; the attack %s", strings.Join(rec.Attack.Secrets, ", "), won)
		if rec.AttackName != "" {
			p.Attack = "(" + rec.AttackName + ") " + p.Attack
		}
	}
	var det *scoring.Detector
	if c != nil {
		det = scoring.NewDetector(scoring.Canaries(c))
	}
	// The run's own texts (its error, its leaks' paths) are masked as
	// the first step's would be.
	// caseKey names the case for memo: its id in its case set (two
	// directories may hold different cases under one id), the run's
	// scale and its attack.
	caseKey := d.casesFrom + "\x00" + rec.Case + "\x00" + rec.Scale + "\x00" + rec.AttackName
	if ownTexts {
		caseKey += "\x00own texts"
	}
	base := &masker{det: det, reveal: reveal, unknown: c == nil, memo: memo, caseKey: caseKey}
	if c != nil && len(c.Steps) > 0 {
		base.key = memoKey(reveal, caseKey, "base")
		base.hidden = memo.hidden(base.key, func() []string {
			region := c.Steps[0].Contract.ViewRegion()
			return hiddenStrings(c.State.Value(), &region, stepTexts(c.Steps[0])...)
		})
	}
	if rec.Error != nil {
		p.Error = base.text(*rec.Error)
	}
	if err := b.steps(ctx, p, rec, c, ownTexts, cfg, det, memo, caseKey); err != nil {
		return nil, err
	}
	p.Checks = rec.Checks
	for _, k := range rec.Checks {
		if k.Held {
			p.Held++
		}
	}
	for i, l := range rec.Leaks {
		if i == maxPageLeaks {
			p.LeaksMore = len(rec.Leaks) - i
			break
		}
		p.Leaks = append(p.Leaks, leakView{Secret: l.Secret, Where: base.text(l.Place()), Detector: l.Detector, Class: strings.TrimPrefix(report.LeakClass(l), "; ")})
	}
	p.LeakCount = report.Plural(len(rec.Leaks), "leak")
	for _, cf := range b.configs {
		pv := pairView{Config: cf.Name, Label: cf.Label, Current: cf.Name == rec.Config}
		if o := b.byID[rundir.RunIDOf(rec.Case, cf.Name, e.Actor, rec.Round, rec.Scale, rec.AttackName)]; o != nil {
			pv.ID, pv.Outcome = o.ID, o.Outcome
			pv.Summary = entrySummary(o)
		}
		p.Paired = append(p.Paired, pv)
	}
	return p, nil
}

// steps builds the page's steps, replaying the committed patches from the
// case's initial state through a runtime.Session (c is the case as the
// run met it; ownTexts says that its injection sites hold the case's
// own texts, not the run's: their texts are not shown, and the final
// state is not compared with the run's).
func (b *Browser) steps(ctx context.Context, p *runPage, rec *rundir.Record, c *bench.Case, ownTexts bool, cfg *bench.Config, det *scoring.Detector, memo *pageMemo, caseKey string) error {
	var sess *runtime.Session
	// prior names the state before a step for memo: the patches
	// committed before it, in order ("init" once the replay broke and
	// the initial state stands in).
	var prior strings.Builder
	if c != nil {
		sess = runtime.NewSession(c.State, c.Workflow.PhasePath)
		p.Replayed = true
	}
	projected := cfg != nil && cfg.Projected()
	for i := range rec.Steps {
		s := &rec.Steps[i]
		sv := &stepView{N: i + 1, ID: s.Step, Phase: s.Phase, Attempts: s.Attempts, NotReached: s.NotReached, Projected: projected,
			ViewTokens: s.ViewTokens, ViewTokensOver: s.ViewTokensOver, ViewDigest: s.ViewDigest, PhaseError: s.PhaseError, Inherited: s.InheritedViolation}
		p.Steps = append(p.Steps, sv)
		var st *bench.Step
		if c != nil {
			st = c.Step(s.Step)
		}
		m := &masker{det: det, reveal: p.Reveal, unknown: st == nil, memo: memo, caseKey: caseKey}
		var region *runtime.ViewRegion
		var before *runtime.Document
		if st != nil {
			sv.Role, sv.Instruction = st.Role, st.Instruction
			r := st.Contract.ViewRegion()
			region = &r
			stateKey := prior.String()
			if sess != nil {
				before = sess.State()
			} else {
				before = c.State // the replay broke: mask as the initial state would
				stateKey = "init"
			}
			m.key = memoKey(p.Reveal, caseKey, s.Step, stateKey)
			m.hidden = memo.hidden(m.key, func() []string { return hiddenStrings(before.Value(), region, stepTexts(st)...) })
			sv.ShownSecrets, sv.HiddenSecrets = secretsBy(c.Secrets, region)
		}
		sv.ViewText = viewText(projected, st)
		if sess != nil && st != nil {
			sv.State = memo.segs(m.key, "state", func() []Seg { return m.json(before.Value(), region, nil) })
			if projected {
				// What the actor was shown: only canaries are
				// marked (one an earlier step copied into view).
				vm := &masker{det: det, reveal: p.Reveal, memo: memo, caseKey: caseKey}
				sv.View = memo.segs(m.key, "view", func() []Seg { return vm.json(st.Contract.View(before), nil, nil) })
			}
		}
		// The model the provider or program says answered is what the
		// actor sent too: masked as the response is.
		sv.Model = m.text(s.Model)
		if s.NotReached {
			sv.Result = "not reached"
			continue
		}
		switch {
		case s.Committed:
			sv.Result = "committed"
		case s.Attempts == 0:
			sv.Result = "no answer"
		default:
			sv.Result = "rejected"
		}
		if c != nil {
			sv.Injections = injections(c, s.Step, m, !ownTexts)
		}
		for _, msg := range s.Prompt {
			sv.Prompt = append(sv.Prompt, msgView{Role: msg.Role, Text: m.text(msg.Content)})
		}
		sv.Ended = s.Ended
		sv.Turns = turnViews(s.Turns, m)
		for k, at := range s.Earlier {
			av := attemptView{N: k + 1, Response: m.text(at.RawResponse), Decisions: gates(at.Decisions, m), Audit: gates(at.Audit, m)}
			av.Leaks = countLeaks(av.Response)
			sv.Earlier = append(sv.Earlier, av)
		}
		if s.Attempts > 0 {
			b.lastAttempt(sv, s, rec, m)
		}
		if sess == nil || st == nil {
			if s.Committed {
				sv.DiffNote = "Not replayed: the case is not known."
			}
			continue
		}
		if !s.Committed {
			sv.DiffNote = "The state did not change: nothing was committed."
			continue
		}
		patch, err := json.Marshal(s.Patch)
		if err != nil || s.Patch == nil {
			patch = []byte("[]")
		}
		res, err := sess.Step(ctx, st.Contract, patch, runtime.StepOptions{AdvanceTo: st.AdvanceTo})
		if err != nil {
			return err
		}
		diffKey := string(patch)
		prior.Write(patch)
		prior.WriteByte(0)
		if !res.Committed {
			why := "it does not apply"
			if g := res.Rejection(); g != nil {
				why = g.Code
			}
			p.Notes = append(p.Notes, fmt.Sprintf("The replay stopped at step %s: its recorded patch no longer commits on the replayed state (%s); the case set may have changed since the run. The states after it are not shown.", s.Step, why))
			sv.DiffNote = "Not replayed (see the note at the top)."
			sess = nil
			continue
		}
		sv.Diff = memo.diff(m.key, diffKey, func() []diffView { return diffViews(before, sess.State(), region, m) })
		if len(sv.Diff) == 0 {
			sv.DiffNote = "Committed, with no change to the state."
		}
	}
	if sess != nil && len(rec.FinalState) > maxComparedFinalState && rec.HasOutcome() {
		p.Notes = append(p.Notes, fmt.Sprintf("The final state the run recorded (%d bytes) is not compared with the replayed one: a page compares those of at most %d bytes.", len(rec.FinalState), maxComparedFinalState))
	} else if sess != nil && len(rec.FinalState) > 0 && rec.HasOutcome() && !ownTexts {
		if final, err := runtime.ParseDocument(rec.FinalState); err == nil && !runtime.EqualJSON(final.Value(), sess.State().Value()) {
			p.Notes = append(p.Notes, "The replayed final state differs from the one the run recorded: the case set may have changed since the run, so the states shown may not be the run's.")
		}
	}
	return nil
}

// turnViews are a step's turns in the tools protocol, masked: each
// turn's text and tool calls (reads with where they looked, other calls
// with their arguments).
func turnViews(turns []rundir.Turn, m *masker) []turnView {
	var out []turnView
	for k, t := range turns {
		tv := turnView{N: k + 1, Tokens: fmt.Sprintf("%d prompt + %d completion tokens", t.Tokens.Prompt, t.Tokens.Completion), Text: m.text(t.Text)}
		for _, c := range t.Calls {
			cv := callView{Name: c.Name, Read: c.Read, Hidden: c.Hidden, Result: m.text(c.Result)}
			switch {
			case c.Read:
				cv.Pointer, cv.Where = m.text(c.Pointer), "inside the view"
				if c.Hidden {
					cv.Where = "hidden from the view: answered as absent"
				} else if c.Error != "" {
					cv.Where = "absent"
				}
			default:
				cv.Args = m.text(c.Arguments)
			}
			tv.Calls = append(tv.Calls, cv)
		}
		out = append(out, tv)
	}
	return out
}

// viewText says what the step's actor saw: the full state, or the
// projected view with the step's include and exclude patterns (st nil:
// the step is not in the case).
func viewText(projected bool, st *bench.Step) string {
	if !projected {
		return "the full state"
	}
	if st == nil {
		return "the step's projected view"
	}
	text := "projected: include " + strings.Join(st.Spec.View.Include, ", ")
	if len(st.Spec.View.Exclude) > 0 {
		text += "; exclude " + strings.Join(st.Spec.View.Exclude, ", ")
	}
	return text
}

// secretsBy splits a case's secrets into those the step's view region
// shows and those it hides, each as "ID at POINTER".
func secretsBy(secrets []bench.Secret, region *runtime.ViewRegion) (shown, hidden []string) {
	for _, sec := range secrets {
		where := sec.ID + " at " + sec.Path.String()
		if region.Visible(sec.Path) {
			shown = append(shown, where)
		} else {
			hidden = append(hidden, where)
		}
	}
	return shown, hidden
}

// diffViews are the changes from before to after, masked as the step's
// view region masks them.
func diffViews(before, after *runtime.Document, region *runtime.ViewRegion, m *masker) []diffView {
	var out []diffView
	for _, ch := range diff(before.Value(), after.Value()) {
		dv := diffView{Path: m.text(ch.Path.String()), Kind: ch.Kind}
		if ch.Kind != "added" {
			dv.Before = m.json(ch.Before, region, ch.Path)
		}
		if ch.Kind != "removed" {
			dv.After = m.json(ch.After, region, ch.Path)
		}
		out = append(out, dv)
	}
	return out
}

// lastAttempt fills in a step's last attempt: the response, the patch,
// the decisions and the audit's, the illegal commits.
func (b *Browser) lastAttempt(sv *stepView, s *rundir.StepRecord, rec *rundir.Record, m *masker) {
	sv.Response = m.text(s.RawResponse)
	sv.ResponseBytes = len(s.RawResponse)
	sv.ResponseLeaks = countLeaks(sv.Response)
	switch {
	case len(s.Patch) > 0:
		for _, op := range s.Patch {
			ov := opView{Op: op.Op, Path: m.text(op.Path.String())}
			if op.Op == runtime.OpMove || op.Op == runtime.OpCopy {
				ov.HasFrom, ov.From = true, m.text(op.From.String())
			}
			switch op.Op {
			case runtime.OpAdd, runtime.OpReplace, runtime.OpTest:
				ov.HasValue, ov.Value = true, m.json(op.Value, nil, nil)
			}
			sv.Patch = append(sv.Patch, ov)
		}
	case len(s.Decisions) > 0 && s.Decisions[0].Passed:
		sv.PatchNote = "Empty (no operation)."
	default:
		sv.PatchNote = "None decoded (the response is malformed)."
	}
	sv.Decisions = gates(s.Decisions, m)
	sv.AuditSame = slices.Equal(s.Decisions, s.Audit)
	if !sv.AuditSame {
		sv.Audit = gates(s.Audit, m)
	}
	for _, ic := range rec.IllegalCommits {
		if ic.Step == s.Step {
			text := ic.Gate + " " + ic.Code
			if ic.Pointer != "" {
				text += " at " + ic.Pointer
			}
			sv.Illegal = append(sv.Illegal, text)
		}
	}
}

func gates(gs []runtime.GateResult, m *masker) []gateView {
	var out []gateView
	for _, g := range gs {
		out = append(out, gateView{Gate: g.Gate, Passed: g.Passed, Code: g.Code, Pointer: m.text(g.Pointer), Message: m.text(g.Message)})
	}
	return out
}

// injections are the prompt injections planted for a step: where, what
// they ask, how plausible, and their text when withText.
func injections(c *bench.Case, step string, m *masker, withText bool) []injView {
	var out []injView
	for _, inj := range c.StepInjections(step) {
		what := inj.Op + " " + inj.Target.String()
		if inj.Into != nil {
			what += " into " + inj.Into.String()
		}
		iv := injView{At: inj.At.String(), What: what, Plausibility: inj.Plausibility}
		if v, ok := c.State.Get(inj.At); ok && withText {
			if s, isStr := v.(string); isStr {
				iv.Text = m.text(s)
			}
		}
		out = append(out, iv)
	}
	return out
}

func countLeaks(segs []Seg) int {
	n := 0
	for _, s := range segs {
		if s.Kind == SegLeak {
			n++
		}
	}
	return n
}

// entrySummary is a run's outcome in a few words, from its index entry.
func entrySummary(e *runEntry) string {
	switch e.Status {
	case rundir.StatusError, rundir.StatusPending:
		return e.Status
	}
	parts := []string{e.Status}
	if e.Leaks > 0 {
		parts = append(parts, report.Plural(e.Leaks, "leak"))
	}
	if e.Illegal > 0 {
		parts = append(parts, report.Plural(e.Illegal, "illegal commit"))
	}
	parts = append(parts, fmt.Sprintf("content %.2f", e.Content))
	return strings.Join(parts, ", ")
}

// configText describes a configuration: its label, name, view and gates.
func configText(cfg *bench.Config) string {
	gates := "none"
	if len(cfg.Gates) > 0 {
		gates = strings.Join(cfg.Gates, ", ")
	}
	view := "the full state"
	if cfg.Projected() {
		view = "the step's projected view"
	}
	return fmt.Sprintf("%s (%s): the actor sees %s; gates: %s", cfg.Label, cfg.Name, view, gates)
}

// errNoRun is a run id the comparison does not hold; near lists runs of
// the same case.
type errNoRun struct {
	id   string
	near []string
}

func (e errNoRun) Error() string {
	msg := fmt.Sprintf("no run %s", e.id)
	if len(e.near) > 0 {
		msg += "; runs of the same case: " + strings.Join(e.near, ", ")
	}
	return msg
}

// nearIDs lists a few runs of the case an id names.
func (b *Browser) nearIDs(id string) []string {
	kase, _, _ := strings.Cut(id, "/")
	var out []string
	for _, r := range b.runs {
		if r.Case == kase {
			out = append(out, r.ID)
			if len(out) == 5 {
				break
			}
		}
	}
	return out
}

// stepTexts are the texts of a step the page shows anyway: its
// instruction and its view, write and source patterns.
func stepTexts(st *bench.Step) []string {
	out := []string{st.Instruction}
	out = append(out, st.Spec.View.Include...)
	out = append(out, st.Spec.View.Exclude...)
	out = append(out, st.Spec.Write...)
	return append(out, st.Spec.Source...)
}

// maxPageLeaks bounds the leaks a run page lists (200); the rest are
// counted ("and N more"), and patchbench show RUN_ID lists them all: a
// record of 99,000 leaks made a page of megabytes, and the HTML report
// of 200 such runs took 4 GB.
const maxPageLeaks = 200

// maxComparedFinalState bounds the recorded final state a run page builds
// to compare with the replayed one (4 MiB of text; a case's states are a
// few KB): built, a final state of 31 million zeros in a 62 MB line took
// a page to 2.7 GB and the HTML report to 2.9 GB.
const maxComparedFinalState = 4 << 20
