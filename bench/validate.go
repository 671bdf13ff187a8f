package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// categoryCodes are the rejection codes that fit each artifact category
// under all gates.
var categoryCodes = map[string][]string{
	// A move whose from is outside W fails scope as a write first.
	CategoryHiddenSource:    {runtime.CodeSourceOutside, runtime.CodeWriteOutside},
	CategoryOutOfScopeWrite: {runtime.CodeWriteOutside},
	CategoryPhase:           {runtime.CodePhaseNotAllowed},
	CategorySchema:          {runtime.CodeSchemaViolation, runtime.CodeOutputSchema},
	CategoryInvariant:       {runtime.CodeInvariantViolated},
	CategoryMalformed:       {runtime.CodeMalformed},
	CategoryApply:           {runtime.CodeDoesNotApply, runtime.CodeTestFailed},
}

// Canaries returns the case's secrets as scoring canaries.
func (c *Case) Canaries() []scoring.Canary {
	out := make([]scoring.Canary, len(c.Secrets))
	for i, s := range c.Secrets {
		out[i] = scoring.Canary{ID: s.ID, Value: s.Value, Path: s.Path}
	}
	return out
}

// Validate checks a loaded case set against the semantic rules of
// bench/README.md ("What patchbench validate checks") with each
// configuration, and returns every problem found, each naming the file,
// the line where one applies and the case. The JSON Schema and the strict
// loader are checked when the cases are loaded (ParseCase).
func Validate(ctx context.Context, cases []*Case, configs []*Config) (Problems, error) {
	var ps Problems
	ids := map[string]*Case{}
	canaries := map[string]string{} // value → case id/secret id
	for _, c := range cases {
		if prev, ok := ids[c.ID]; ok {
			ps = append(ps, Problem{File: c.File, Line: c.Line(runtime.MustPointer("/id")), Case: c.ID, Msg: "id also used by " + prev.File})
		}
		ids[c.ID] = c
	}
	for _, c := range cases {
		for i, s := range c.Secrets {
			if prev, ok := canaries[s.Value]; ok {
				ps = append(ps, Problem{File: c.File, Line: c.Line(ptr("/secrets/%d/value", i)), Case: c.ID,
					Msg: fmt.Sprintf("secret %s: canary already used by %s", s.ID, prev)})
				continue
			}
			canaries[s.Value] = c.ID + "/" + s.ID
		}
	}
	// Each case's canaries in another case's state, as written or
	// normalised (case, spacing and separators ignored): one pass over
	// each state, whatever the number of canaries.
	ix := newCanaryIndex(cases)
	for _, o := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, h := range ix.scan(o) {
			ps = append(ps, Problem{File: h.owner.File, Line: h.owner.Line(ptr("/secrets")), Case: h.owner.ID,
				Msg: fmt.Sprintf("secret %s: canary also appears in the state of case %s at %s", h.secret, o.ID, h.at)})
		}
	}
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		cps, err := validateCase(ctx, c, configs)
		if err != nil {
			return nil, err
		}
		ps = append(ps, cps...)
	}
	return ps, nil
}

func ptr(format string, args ...any) runtime.Pointer {
	return runtime.MustPointer(fmt.Sprintf(format, args...))
}

// validateCase checks the rules that concern one case.
func validateCase(ctx context.Context, c *Case, configs []*Config) (Problems, error) {
	var ps Problems
	add := func(at runtime.Pointer, format string, args ...any) {
		ps = append(ps, Problem{File: c.File, Line: c.Line(at), Case: c.ID, Msg: fmt.Sprintf(format, args...)})
	}
	// The file's place in the suite.
	file := c.File
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if dir := lastDir(file); dir != "" && dir != c.Domain {
		add(ptr("/domain"), "domain %q but the file is in directory %q", c.Domain, dir)
	}
	if base := baseName(c.File); base != c.ID {
		add(ptr("/id"), "id %q but the file is named %q", c.ID, base)
	}

	// Workflow.
	phases := c.Workflow.Phases
	initial, ok := c.State.Get(c.Workflow.PhasePath)
	phaseOK := false
	switch s, isStr := initial.(string); {
	case !ok:
		add(ptr("/workflow/phase_path"), "the state has nothing at %s; it must hold the initial phase, one of %s", pointerText(c.Workflow.PhasePath), strings.Join(phases, ", "))
	case !isStr || !slices.Contains(phases, s):
		b, _ := json.Marshal(initial)
		add(ptr("/workflow/phase_path"), "the state holds %s at %s, which is not a phase of workflow.phases (%s)", truncate(string(b), 40), pointerText(c.Workflow.PhasePath), strings.Join(phases, ", "))
	default:
		phaseOK = true
	}
	phaseRegion := runtime.RegionOf(c.Workflow.PhasePath)

	// Steps.
	stepIDs := map[string]int{}
	for i, s := range c.Steps {
		at := ptr("/steps/%d", i)
		for j, p := range s.Phases {
			if !slices.Contains(phases, p) {
				add(at.Append("phases", fmt.Sprint(j)), "step %s: phase %q is not in workflow.phases", s.ID, p)
			}
		}
		if s.AdvanceTo != "" && !slices.Contains(phases, s.AdvanceTo) {
			add(at.Append("advance_to"), "step %s: advance_to %q is not in workflow.phases", s.ID, s.AdvanceTo)
		}
		for _, p := range instructionPaths(s.Instruction) {
			// Only words that point into the state ("/ticket/reply"),
			// not prose that happens to hold a slash ("km /h").
			top, _ := c.State.Value().(map[string]any)
			if _, has := top[p[0]]; !has {
				continue
			}
			r := runtime.RegionOf(p)
			if !s.Contract.ViewRegion().Overlaps(r) && !s.Contract.Write().Overlaps(r) {
				add(at.Append("instruction"), "step %s: the instruction names %s, which the step neither sees nor may write", s.ID, p)
			}
		}
		ps = append(ps, visibilityProblems(c, s)...)
		if s.Contract.Write().Overlaps(phaseRegion) {
			add(at.Append("write"), "step %s: the write region covers the phase at %s; only the runner moves the phase", s.ID, pointerText(c.Workflow.PhasePath))
		}
		if s.Parent != "" {
			pi, ok := stepIDs[s.Parent]
			switch {
			case !ok:
				add(at.Append("parent"), "step %s: parent %q is not an earlier step", s.ID, s.Parent)
			case !s.Contract.Footprint().RestrictionOf(c.Steps[pi].Contract.Footprint()):
				add(at.Append("parent"), "step %s: delegation is not a restriction of step %s: %s", s.ID, s.Parent,
					restrictionGap(s.Contract.Footprint(), c.Steps[pi].Contract.Footprint()))
			}
		}
		if _, dup := stepIDs[s.ID]; dup {
			add(at.Append("id"), "step id %s is used twice", s.ID)
		} else {
			stepIDs[s.ID] = i
		}
	}

	// Secrets: at their path, not elsewhere in the state.
	var planted []scoring.Canary
	secretIDs := map[string]bool{}
	for i, s := range c.Secrets {
		if secretIDs[s.ID] {
			add(ptr("/secrets/%d/id", i), "secret id %s is used twice", s.ID)
		}
		secretIDs[s.ID] = true
		v, ok := c.State.Get(s.Path)
		// The value is the string at the path, or a distinctive part of
		// it (a token inside a log line, a number a customer pasted into
		// a message): what a leak detector can find whatever else is
		// copied with it.
		if str, isStr := v.(string); !ok || !isStr || !strings.Contains(str, s.Value) {
			add(ptr("/secrets/%d/path", i), "secret %s: the state does not hold its value at %s (the string there, or a part of it)", s.ID, s.Path)
		} else {
			planted = append(planted, scoring.Canary{ID: s.ID, Value: s.Value, Path: s.Path})
		}
		for j, o := range c.Secrets {
			if j != i && strings.Contains(o.Value, s.Value) {
				add(ptr("/secrets/%d/value", i), "secret %s: its value is inside secret %s's", s.ID, o.ID)
			}
		}
	}
	// Secrets not at their path are left out of leak detection: their
	// problem is reported once, above.
	det := scoring.NewDetector(planted)
	for _, l := range det.InValue(c.State.Value(), true) {
		if !isSecretPath(c, l.Path) {
			add(ptr("/secrets"), "secret %s: the canary also appears in the state at %s (%s)", l.Secret, l.Path, l.Detector)
		}
	}

	// Canaries in the text an actor is shown, or that scoring compares
	// with: the instructions, titles and rubric operands.
	for _, l := range det.InText(c.Title) {
		add(ptr("/title"), "secret %s appears in the case's title (%s)", l.Secret, l.Detector)
	}
	for _, l := range det.InText(c.Description) {
		add(ptr("/description"), "secret %s appears in the case's description (%s)", l.Secret, l.Detector)
	}
	for _, st := range c.Steps {
		for _, l := range det.InText(st.Instruction) {
			add(ptr("/steps/%d/instruction", st.Index), "step %s: the instruction shows secret %s to the actor (%s)", st.ID, l.Secret, l.Detector)
		}
		for _, h := range instructionHints(c, st) {
			add(ptr("/steps/%d/instruction", st.Index), "step %s: the instruction %s; an instruction is the same in every configuration and must not hint at hidden data (a duty of care belongs in the scenario's own documents)", st.ID, h)
		}
		for j, pl := range st.Pulls {
			at := ptr("/steps/%d/pulls/%d", st.Index, j)
			switch pl.Kind {
			case PullDisclosure:
				sec := c.secret(pl.Secret)
				switch {
				case sec.ID == "":
					add(at.Append("secret"), "step %s: pull: no secret %q", st.ID, pl.Secret)
				case !sec.Path.HasPrefix(pl.Record) || sec.Path.Equal(pl.Record):
					add(at.Append("record"), "step %s: pull: secret %s (%s) is not inside the record %s", st.ID, sec.ID, sec.Path, pl.Record)
				case !st.Contract.ViewRegion().Visible(pl.Record):
					add(at.Append("record"), "step %s: pull: the record %s is not in the step's view; a disclosure pull is a record the step works with", st.ID, pl.Record)
				}
				if _, ok := c.State.Get(pl.Record); !ok {
					add(at.Append("record"), "step %s: pull: the state has no record at %s", st.ID, pl.Record)
				}
			case PullRule:
				known := pl.Rule == "schema"
				for _, inv := range c.Invariants {
					known = known || inv.Name == pl.Rule
				}
				if !known {
					add(at.Append("rule"), "step %s: pull: no invariant is named %q (name one of the case's invariants, or \"schema\")", st.ID, pl.Rule)
				}
			case PullWrite:
				if st.Contract.Write().Contains(pl.Path) {
					add(at.Append("path"), "step %s: pull: %s is inside the step's write region; a write pull names what the step may not write", st.ID, pl.Path)
				}
				if _, ok := c.State.Get(pl.Path); !ok && !pl.Path.Parent().Equal(pl.Path) {
					if _, ok := c.State.Get(pl.Path.Parent()); !ok {
						add(at.Append("path"), "step %s: pull: the state has nothing at %s or its parent", st.ID, pl.Path)
					}
				}
			}
		}
		for j := range st.Rubric {
			b, _ := json.Marshal(st.Rubric[j])
			for _, l := range det.InText(string(b)) {
				add(ptr("/steps/%d/rubric/%d", st.Index, j), "step %s: rubric[%d] quotes secret %s (%s)", st.ID, j, l.Secret, l.Detector)
			}
		}
	}

	// Pairs.
	an := Analyze(c)
	declared := map[[2]string]bool{}
	for i, p := range c.Pairs {
		at := ptr("/pairs/%d", i)
		key := [2]string{min(p.A, p.B), max(p.A, p.B)}
		if declared[key] {
			add(at, "pair %s/%s is declared twice", p.A, p.B)
			continue
		}
		declared[key] = true
		var found *PairAnalysis
		for k := range an.Pairs {
			if an.Pairs[k].Declared == &c.Pairs[i] {
				found = &an.Pairs[k]
			}
		}
		switch {
		case c.Step(p.A) == nil || c.Step(p.B) == nil:
			add(at, "pair %s/%s: no such step", p.A, p.B)
		case p.A == p.B:
			add(at, "pair %s/%s: a pair needs two different steps", p.A, p.B)
		case found == nil:
			add(at, "pair %s/%s: the steps do not run in one phase", p.A, p.B)
		case found.Commute != p.Commute:
			add(at.Append("commute"), "pair %s/%s: declared commute: %v, but the certificate says %v%s", p.A, p.B, p.Commute, found.Commute, blockingText(found.Blocking))
		}
	}

	// The reference run, and everything that depends on it, needs a
	// valid initial phase.
	if !phaseOK {
		sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
		return ps, nil
	}
	run, err := RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	if run.Failed >= 0 {
		rs := run.Steps[run.Failed]
		if r := rs.Decision.Rejection(); r != nil {
			add(ptr("/steps/%d/reference", run.Failed), "step %s: the reference proposal is rejected in phase %q by %s (%s): %s",
				rs.Step.ID, rs.Phase, r.Gate, r.Code, r.Message)
		} else {
			add(ptr("/steps/%d/advance_to", run.Failed), "step %s: after its reference proposal commits, the phase cannot be moved to %q: %s",
				rs.Step.ID, rs.Step.AdvanceTo, run.PhaseError)
		}
	}
	for _, rs := range run.Steps {
		i := rs.Step.Index
		view := rs.Step.Contract.View(rs.Before)
		for k, sec := range c.Secrets {
			if rs.Step.Contract.ViewRegion().Visible(sec.Path) {
				add(ptr("/secrets/%d/path", k), "secret %s: visible in the view of step %s", sec.ID, rs.Step.ID)
			}
		}
		for _, l := range det.InValue(view, false) {
			if !rs.Step.Contract.ViewRegion().Visible(c.secret(l.Secret).Path) {
				add(ptr("/steps/%d/view", i), "step %s: the view shows secret %s at %s (%s)", rs.Step.ID, l.Secret, l.Path, l.Detector)
			}
		}
		for _, l := range det.InText(string(rs.Step.Reference)) {
			add(ptr("/steps/%d/reference", i), "step %s: the reference proposal leaks secret %s (%s)", rs.Step.ID, l.Secret, l.Detector)
		}
	}
	if run.Failed < 0 {
		checks, err := checkPairs(ctx, c, an, run)
		if err != nil {
			return nil, err
		}
		for _, pc := range checks {
			if !pc.OK {
				add(pairLine(c, pc.A, pc.B), "pair %s/%s: the certificate holds, but running both orders fails: %s", pc.A, pc.B, pc.Reason)
			}
		}
		for _, l := range det.InValue(run.Final.Value(), true) {
			add(ptr("/secrets"), "the reference run leaks secret %s into the final state at %s (%s)", l.Secret, l.Path, l.Detector)
		}
		for _, s := range c.Steps {
			for j := range s.Rubric {
				if !s.Rubric[j].Holds(run.Final.Value()) {
					add(ptr("/steps/%d/rubric/%d", s.Index, j), "step %s: rubric[%d] (%s on %s) fails on the reference run's final state, where %s is %s",
						s.ID, j, s.Rubric[j].Kind(), s.Rubric[j].Path, s.Rubric[j].Path, describeAt(run.Final.Value(), s.Rubric[j].Path))
				}
			}
		}
	}
	for _, s := range c.Steps {
		all := true
		for j := range s.Rubric {
			all = all && s.Rubric[j].Holds(c.State.Value())
		}
		if all {
			add(ptr("/steps/%d/rubric", s.Index), "step %s: the initial state already satisfies every rubric check", s.ID)
		}
	}

	// Injections.
	for i, inj := range c.Injections {
		at := ptr("/injections/%d", i)
		s := c.Step(inj.Step)
		if s == nil {
			add(at.Append("step"), "injection: no step %q", inj.Step)
			continue
		}
		before := c.State
		if rs := run.At(s.ID); rs != nil {
			before = rs.Before
		}
		vr := s.Contract.ViewRegion()
		if v, ok := before.Get(inj.At); !ok || !vr.Visible(inj.At) {
			add(at.Append("at"), "injection: %s is not in the view of step %s", inj.At, s.ID)
		} else if !namesTarget(v, inj.Target) {
			add(at.Append("at"), "injection: the text at %s does not name its target %s (its pointer or its last member name)", inj.At, inj.Target)
		}
		if _, ok := before.Get(inj.Target); !ok {
			add(at.Append("target"), "injection: target %s does not exist", inj.Target)
		} else if vr.Visible(inj.Target) {
			add(at.Append("target"), "injection: target %s is visible to step %s", inj.Target, s.ID)
		}
		holds := false
		for _, sec := range c.Secrets {
			holds = holds || sec.Path.HasPrefix(inj.Target)
		}
		if !holds {
			add(at.Append("target"), "injection: target %s holds no secret; an injection asks for a secret (or a record holding one), so that its success can be measured", inj.Target)
		}
		if (inj.Op == InjectCopy || inj.Op == InjectMove) && !s.Contract.Write().Contains(inj.Into) {
			add(at.Append("into"), "injection: into %s is outside the write region of step %s; name where the injected text asks the value to go among the places the step may write", inj.Into, s.ID)
		}
	}
	// What an actor that obeys every injection of a step sends (the
	// follower) must apply to the full state when no gate runs: the
	// attack is measured by what the gates then do.
	for _, s := range c.Steps {
		injs := c.StepInjections(s.ID)
		rs := run.At(s.ID)
		if len(injs) == 0 || rs == nil {
			continue
		}
		prop, err := FollowerProposal(s, injs, rs.Before.Value())
		if err != nil {
			add(ptr("/steps/%d/reference", s.Index), "step %s: %v", s.ID, err)
			continue
		}
		d, err := s.Contract.Verify(ctx, rs.Before, prop, runtime.VerifyOptions{Phase: rs.Phase})
		if err != nil {
			return nil, err
		}
		if r := d.Rejection(); r != nil {
			first := 0
			for i, inj := range c.Injections {
				if inj.Step == s.ID {
					first = i
					break
				}
			}
			add(ptr("/injections/%d", first), "step %s: the follower's answer (the reference patch plus what the injections ask) does not commit with no gate: %s: %s", s.ID, r.Code, r.Message)
		}
	}

	// Artifacts.
	artIDs := map[string]bool{}
	for i, a := range c.Artifacts {
		at := ptr("/artifacts/%d", i)
		if artIDs[a.ID] {
			add(at.Append("id"), "artifact id %s is used twice", a.ID)
		}
		artIDs[a.ID] = true
		s := c.Step(a.Step)
		if s == nil {
			add(at.Append("step"), "artifact %s: no step %q", a.ID, a.Step)
			continue
		}
		rs := run.At(s.ID)
		if rs == nil {
			add(at.Append("step"), "artifact %s: the reference run never reaches step %s", a.ID, s.ID)
			continue
		}
		phase := rs.Phase
		if a.SubmitPhase != "" {
			phase = a.SubmitPhase
			if !slices.Contains(phases, phase) {
				add(at.Append("submit_phase"), "artifact %s: submit_phase %q is not in workflow.phases", a.ID, phase)
				continue
			}
		}
		if a.Raw && a.Category != CategoryMalformed {
			add(at.Append("raw"), "artifact %s: raw text is only for malformed artifacts", a.ID)
		}
		// caught_by is exactly the set of gates that reject the artifact
		// on their own, so that it predicts the decision of any
		// configuration, not only of those loaded.
		alone, err := gatesAlone(ctx, s, rs.Before, a.Proposal, phase)
		if err != nil {
			return nil, err
		}
		perGate := len(ps)
		for _, g := range gateOrder {
			listed := slices.Contains(a.CaughtBy, g)
			switch {
			case alone[g] != "" && !listed:
				add(at.Append("caught_by"), "artifact %s: gate %s on its own rejects it (%s); add %s to caught_by", a.ID, g, alone[g], g)
			case alone[g] == "" && listed:
				add(at.Append("caught_by"), "artifact %s: caught_by lists %s, but gate %s on its own accepts it", a.ID, g, g)
			}
		}
		if len(ps) == perGate {
			for _, cfg := range configs {
				d, err := s.Contract.Verify(ctx, rs.Before, a.Proposal, runtime.VerifyOptions{Gates: cfg.GateSet, Phase: phase})
				if err != nil {
					return nil, err
				}
				want := false
				for _, g := range a.CaughtBy {
					want = want || cfg.Runs(g)
				}
				switch {
				case want && d.Committed:
					add(at.Append("caught_by"), "artifact %s: configuration %s commits it, but caught_by [%s] says one of its gates rejects it", a.ID, cfg.Name, strings.Join(a.CaughtBy, ", "))
				case !want && !d.Committed:
					r := d.Rejection()
					add(at.Append("caught_by"), "artifact %s: configuration %s rejects it by %s (%s), which caught_by [%s] does not list", a.ID, cfg.Name, r.Gate, r.Code, strings.Join(a.CaughtBy, ", "))
				}
			}
		}
		d, err := s.Contract.Verify(ctx, rs.Before, a.Proposal, runtime.VerifyOptions{Gates: AllGates, Phase: phase})
		if err != nil {
			return nil, err
		}
		if r := d.Rejection(); r == nil {
			add(at, "artifact %s: all gates accept it", a.ID)
		} else if !slices.Contains(categoryCodes[a.Category], r.Code) {
			add(at.Append("category"), "artifact %s: category %s, but all gates reject it first with %s", a.ID, a.Category, r.Code)
		}
		if a.Category == CategoryHiddenSource && !citesSource(s, d.Proposal, false) {
			add(at.Append("category"), "artifact %s: a hidden-source artifact must cite, by copy, test or move from, a location outside the step's source region", a.ID)
		}
		if a.PaperSet {
			if a.Category != CategoryHiddenSource {
				add(at.Append("paper_set"), "artifact %s: a paper_set artifact must be hidden-source", a.ID)
			} else if !citesSource(s, d.Proposal, true) {
				add(at.Append("paper_set"), "artifact %s: a paper_set artifact must cite, by copy, test or move from, a location outside the step's view and source region", a.ID)
			}
		}
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps, nil
}

var instructionPath = regexp.MustCompile(`(?:^|[\s("'])(/[A-Za-z0-9_~.-]+(?:/[A-Za-z0-9_~.*-]+)*)`)

// instructionPaths returns the JSON Pointers an instruction names: words
// that start with "/", trailing punctuation removed.
func instructionPaths(text string) []runtime.Pointer {
	var out []runtime.Pointer
	for _, m := range instructionPath.FindAllStringSubmatch(text, -1) {
		if p, err := runtime.ParsePointer(strings.TrimRight(m[1], ".,;:)")); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// visibilityProblems checks that a step can do its job from its view
// (bench/README.md, authoring rules): every write pattern is visible unless
// declared in blind_write (the location it names; for an append, the
// array), every blind_write pattern is a write pattern, and every
// patch-source pattern lies inside the view with nothing hidden below it,
// so that a patch never copies what the actor cannot see.
func visibilityProblems(c *Case, s *Step) Problems {
	var ps Problems
	add := func(at runtime.Pointer, format string, args ...any) {
		ps = append(ps, Problem{File: c.File, Line: c.Line(at), Case: c.ID, Msg: fmt.Sprintf(format, args...)})
	}
	v := s.Contract.ViewRegion()
	writes := s.Contract.Write().Patterns()
	for j, b := range s.BlindWrite {
		if !slices.ContainsFunc(writes, b.Equal) {
			add(ptr("/steps/%d/blind_write/%d", s.Index, j), "step %s: blind_write %s is not one of the step's write patterns", s.ID, b)
		}
	}
	for j, w := range s.Spec.Write {
		p, err := runtime.ParsePointer(w)
		if err != nil || slices.ContainsFunc(s.BlindWrite, p.Equal) {
			continue
		}
		target := p
		if len(p) > 0 && p.Last() == "-" {
			target = p.Parent()
		}
		r := runtime.RegionOf(target)
		if !r.SubsetOf(v.Include) || r.SubsetOf(v.Exclude) {
			add(ptr("/steps/%d/write/%d", s.Index, j), "step %s: the step writes %s but its view does not show it; show it, or list it in blind_write when the step writes it blind on purpose (an append-only log)", s.ID, w)
		}
	}
	for j, src := range s.Spec.Source {
		p, err := runtime.ParsePointer(src)
		if err != nil {
			continue
		}
		r := runtime.RegionOf(p)
		if !r.SubsetOf(v.Include) || v.Exclude.Overlaps(r) {
			add(ptr("/steps/%d/source/%d", s.Index, j), "step %s: the patch-source pattern %s is not inside the view (or hides something below it): a patch could copy what the actor cannot see", s.ID, src)
		}
	}
	return ps
}

// warning matches an instruction that warns the actor off some data: an
// instruction is identical in every configuration, and under PatchOptic
// the actor never sees the hidden data, so a warning is a hint that only
// the full-state configurations get (bench/README.md, authoring rules).
var warning = regexp.MustCompile(`(?i)\b(never|do not|don't|must not|should not|avoid|without)\b[^.;:]{0,60}\b(include|includ|copy|copying|share|sharing|quote|quoting|disclose|disclosing|reveal|revealing|mention|mentioning|expose|exposing|paste|pasting|leak|leaking|forward|forwarding|credentials?|secrets?|passwords?|tokens?|keys?|confidential|sensitive|personal|private|pii)`)

// secretKinds matches words that name a kind of secret.
var secretKinds = regexp.MustCompile(`(?i)\b(credentials?|secrets?|passwords?|passcodes?|api[ _-]?keys?|confidential|sensitive data|pii|personal data)\b`)

// instructionHints reports an instruction that warns against hidden data,
// names a kind of secret, or names a secret's own member name.
func instructionHints(c *Case, s *Step) []string {
	var out []string
	if m := warning.FindString(s.Instruction); m != "" {
		out = append(out, fmt.Sprintf("warns the actor off data (%q)", m))
	}
	if m := secretKinds.FindString(s.Instruction); m != "" {
		out = append(out, fmt.Sprintf("names a kind of secret (%q)", m))
	}
	lower := strings.ToLower(s.Instruction)
	for _, sec := range c.Secrets {
		name := strings.ToLower(sec.Path.Last())
		if len(name) < 4 || genericMember[name] {
			continue
		}
		for _, form := range []string{name, strings.ReplaceAll(name, "_", " ")} {
			if regexp.MustCompile(`\b` + regexp.QuoteMeta(form) + `\b`).MatchString(lower) {
				out = append(out, fmt.Sprintf("names the member %q of secret %s", sec.Path.Last(), sec.ID))
				break
			}
		}
	}
	return out
}

// genericMember lists member names too common to hint at a secret.
var genericMember = map[string]bool{
	"value": true, "values": true, "notes": true, "note": true, "comment": true, "comments": true, "body": true,
	"text": true, "name": true, "code": true, "data": true, "details": true, "number": true, "email": true,
	"phone": true, "address": true, "reference": true, "summary": true, "description": true, "message": true,
	"status": true, "title": true, "label": true, "contact": true, "owner": true, "detail": true,
}

// namesTarget reports whether an injection's text names its target: the
// pointer itself, or its last member name (also with "_" read as a
// space), case-insensitively.
func namesTarget(v any, target runtime.Pointer) bool {
	text, ok := v.(string)
	if !ok {
		b, _ := json.Marshal(v)
		text = string(b)
	}
	low := strings.ToLower(text)
	last := strings.ToLower(target.Last())
	return strings.Contains(low, strings.ToLower(target.String())) ||
		(last != "" && (strings.Contains(low, last) || strings.Contains(low, strings.ReplaceAll(last, "_", " "))))
}

// describeAt describes the value at p for a message: its JSON, cut to 80
// characters, or "nothing".
func describeAt(v any, p runtime.Pointer) string {
	got, ok := runtime.Lookup(v, p)
	if !ok {
		return "nothing"
	}
	b, err := runtime.EncodeIndent(got, "")
	if err != nil {
		return "a value"
	}
	return truncate(strings.Join(strings.Fields(string(b)), " "), 80)
}

// pointerText writes a pointer for a message; the empty pointer, which is
// easy to miss, as `"" (the whole state)`.
func pointerText(p runtime.Pointer) string {
	if len(p) == 0 {
		return `"" (the whole state)`
	}
	return p.String()
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// pairLine is the location of the declared pair a/b, or of the pairs key.
func pairLine(c *Case, a, b string) runtime.Pointer {
	for i, p := range c.Pairs {
		if (p.A == a && p.B == b) || (p.A == b && p.B == a) {
			return ptr("/pairs/%d", i)
		}
	}
	return ptr("/steps/%d", c.Step(b).Index)
}

// gateOrder lists the gates caught_by may name, in pipeline order.
var gateOrder = []string{
	runtime.GateParse, runtime.GateScope, runtime.GateACL, runtime.GatePhase,
	runtime.GateApply, runtime.GateSchema, runtime.GateInvariants,
}

// gatesAlone verifies a proposal once with no optional gate and once with
// each optional gate on its own, and returns, for each gate that rejects
// it, the rejection code. Parse and apply are judged from the run with no
// optional gate.
func gatesAlone(ctx context.Context, s *Step, state *runtime.Document, proposal []byte, phase string) (map[string]string, error) {
	out := map[string]string{}
	none, err := s.Contract.Verify(ctx, state, proposal, runtime.VerifyOptions{Phase: phase})
	if err != nil {
		return nil, err
	}
	for _, g := range none.Gates {
		if !g.Passed {
			out[g.Gate] = g.Code
		}
	}
	if out[runtime.GateParse] != "" {
		return out, nil
	}
	for _, name := range []string{runtime.GateScope, runtime.GateACL, runtime.GatePhase, runtime.GateSchema, runtime.GateInvariants} {
		gs, err := runtime.GatesFromList([]string{name})
		if err != nil {
			return nil, err
		}
		d, err := s.Contract.Verify(ctx, state, proposal, runtime.VerifyOptions{Gates: gs, Phase: phase})
		if err != nil {
			return nil, err
		}
		if r := d.Gate(name); r != nil && !r.Passed {
			out[name] = r.Code
		}
	}
	return out, nil
}

// citesSource reports whether a proposal cites a source the step may not
// cite: a copy or move from, or a test path, outside the source region
// and, when hidden is true, outside the view too.
func citesSource(s *Step, p *runtime.Proposal, hidden bool) bool {
	if p == nil {
		return false
	}
	vr, src := s.Contract.ViewRegion(), s.Contract.Source()
	for _, op := range p.Patch {
		var at runtime.Pointer
		switch op.Op {
		case runtime.OpCopy, runtime.OpMove:
			at = op.From
		case runtime.OpTest:
			at = op.Path
		default:
			continue
		}
		if !src.Contains(at) && !(hidden && vr.Visible(at)) {
			return true
		}
	}
	return false
}

func (c *Case) secret(id string) Secret {
	for _, s := range c.Secrets {
		if s.ID == id {
			return s
		}
	}
	return Secret{}
}

func isSecretPath(c *Case, p string) bool {
	for _, s := range c.Secrets {
		if s.Path.String() == p {
			return true
		}
	}
	return false
}

// restrictionGap says which part of a child footprint exceeds the parent's.
func restrictionGap(child, parent runtime.Footprint) string {
	var parts []string
	if !child.Read.SubsetOf(parent.Read) {
		parts = append(parts, "view")
	}
	if !child.Write.SubsetOf(parent.Write) {
		parts = append(parts, "write")
	}
	if !child.Source.SubsetOf(parent.Source) {
		parts = append(parts, "source")
	}
	return "its " + strings.Join(parts, ", ") + " exceeds the parent's"
}

func blockingText(bs []runtime.Conflict) string {
	if len(bs) == 0 {
		return ""
	}
	var parts []string
	for _, b := range bs {
		parts = append(parts, b.Kind+" on "+strings.Join(b.Paths.Strings(), ", "))
	}
	return " (blocked by " + strings.Join(parts, "; ") + ")"
}

func lastDir(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	i := strings.LastIndex(file, "/")
	if i < 0 {
		return ""
	}
	dir := file[:i]
	if j := strings.LastIndex(dir, "/"); j >= 0 {
		dir = dir[j+1:]
	}
	if dir == "." {
		return ""
	}
	return dir
}

func baseName(file string) string {
	file = strings.ReplaceAll(file, "\\", "/")
	if i := strings.LastIndex(file, "/"); i >= 0 {
		file = file[i+1:]
	}
	if i := strings.LastIndex(file, "."); i > 0 {
		file = file[:i]
	}
	return file
}

// canaryIndex finds every case's canaries in a state in one pass: the
// normalised canaries (letters and digits, lower-cased; at least
// minIndexed of them) are indexed by their first minIndexed characters,
// and each position of a normalised string is one map lookup. Canaries
// shorter than that once normalised are looked for as written.
type canaryIndex struct {
	byPrefix map[string][]indexedCanary
	short    []indexedCanary
}

type indexedCanary struct {
	owner  *Case
	secret string
	value  string
	norm   string
	path   runtime.Pointer
}

type canaryHit struct {
	owner  *Case
	secret string
	at     string
}

const minIndexed = 6

func newCanaryIndex(cases []*Case) *canaryIndex {
	ix := &canaryIndex{byPrefix: map[string][]indexedCanary{}}
	for _, c := range cases {
		for _, s := range c.Secrets {
			ic := indexedCanary{owner: c, secret: s.ID, value: s.Value, norm: scoring.Normalise(s.Value), path: s.Path}
			if len(ic.norm) >= minIndexed {
				ix.byPrefix[ic.norm[:minIndexed]] = append(ix.byPrefix[ic.norm[:minIndexed]], ic)
			} else {
				ix.short = append(ix.short, ic)
			}
		}
	}
	return ix
}

// scan returns the canaries of other cases found in o's state, in its
// strings and member names, once per (secret, location).
func (ix *canaryIndex) scan(o *Case) []canaryHit {
	var out []canaryHit
	seen := map[string]bool{}
	hit := func(ic indexedCanary, at runtime.Pointer) {
		key := ic.owner.ID + "\x00" + ic.secret + "\x00" + at.String()
		if ic.owner != o && !seen[key] {
			seen[key] = true
			out = append(out, canaryHit{owner: ic.owner, secret: ic.secret, at: pointerText(at)})
		}
	}
	check := func(s string, at runtime.Pointer) {
		norm := scoring.Normalise(s)
		for i := 0; i+minIndexed <= len(norm); i++ {
			for _, ic := range ix.byPrefix[norm[i:i+minIndexed]] {
				if strings.HasPrefix(norm[i:], ic.norm) {
					hit(ic, at)
				}
			}
		}
		for _, ic := range ix.short {
			if strings.Contains(s, ic.value) {
				hit(ic, at)
			}
		}
	}
	scoring.WalkStrings(o.State.Value(), check)
	sort.Slice(out, func(i, j int) bool {
		if out[i].owner.ID != out[j].owner.ID {
			return out[i].owner.ID < out[j].owner.ID
		}
		return out[i].secret+out[i].at < out[j].secret+out[j].at
	})
	return out
}
