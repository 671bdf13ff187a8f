// Package check validates and analyses PatchBench case sets: Validate checks
// a loaded case set against the semantic rules of docs/cases.md ("What
// patchbench validate checks"), each problem with a stable code
// (bench.Problem*); Analyze and CheckPairs give the static footprints,
// delegations and commutation certificates of a case's steps and run
// certified pairs in both orders, starting from the case's reference run
// (bench.RunReference). What an invariant reads comes from the runtime
// (runtime.InvariantConjunctReads, the invariants' footprint).
package check

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Validate checks a loaded case set against the semantic rules of
// docs/cases.md ("What patchbench validate checks") with each
// configuration, and returns every problem found, each naming the file,
// the line where one applies, the case and the problem's code. The JSON
// Schema and the strict loader are checked when the cases are loaded
// (bench.ParseCase). The error is for a cancelled context only.
func Validate(ctx context.Context, cases []*bench.Case, configs []*bench.Config) (bench.Problems, error) {
	ps := setProblems(cases)
	// Each case's canaries in another case's state, as written or
	// normalised (case, spacing and separators ignored): one pass over
	// each state, whatever the number of canaries.
	ix := newCanaryIndex(cases)
	for _, o := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		for _, h := range ix.scan(o) {
			ps = append(ps, bench.Problem{File: h.owner.File, Line: h.owner.Line(ptr("/secrets")), Case: h.owner.ID, Code: bench.ProblemCanaryElsewhere,
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

// setProblems checks the rules across the cases of a set: ids and canary
// values are unique.
func setProblems(cases []*bench.Case) bench.Problems {
	var ps bench.Problems
	ids := map[string]*bench.Case{}
	canaries := map[string]string{} // value → case id/secret id
	for _, c := range cases {
		if prev, ok := ids[c.ID]; ok {
			ps = append(ps, bench.Problem{File: c.File, Line: c.Line(ptr("/id")), Case: c.ID, Code: bench.ProblemCaseID, Msg: "id also used by " + prev.File})
		}
		ids[c.ID] = c
	}
	for _, c := range cases {
		for i, s := range c.Secrets {
			if prev, ok := canaries[s.Value]; ok {
				ps = append(ps, bench.Problem{File: c.File, Line: c.Line(ptr("/secrets/%d/value", i)), Case: c.ID, Code: bench.ProblemCanaryReused,
					Msg: fmt.Sprintf("secret %s: canary already used by %s", s.ID, prev)})
				continue
			}
			canaries[s.Value] = c.ID + "/" + s.ID
		}
	}
	return ps
}

// problems collects the problems of one case.
type problems struct {
	c  *bench.Case
	ps bench.Problems
}

// add records a problem with its code at the line of at in the case file.
func (p *problems) add(code string, at runtime.Pointer, format string, args ...any) {
	p.ps = append(p.ps, bench.Problem{File: p.c.File, Line: p.c.Line(at), Case: p.c.ID, Code: code, Msg: fmt.Sprintf(format, args...)})
}

// sorted returns the problems by line, in the order found within a line.
func (p *problems) sorted() bench.Problems {
	sort.SliceStable(p.ps, func(i, j int) bool { return p.ps[i].Line < p.ps[j].Line })
	return p.ps
}

func ptr(format string, args ...any) runtime.Pointer {
	return runtime.MustPointer(fmt.Sprintf(format, args...))
}

// validateCase checks the rules that concern one case, in the order of
// docs/cases.md: the file's place, the workflow, the steps, the
// secrets and the texts, the pairs; then, when the initial phase is
// valid, the reference run and what depends on it.
func validateCase(ctx context.Context, c *bench.Case, configs []*bench.Config) (bench.Problems, error) {
	p := &problems{c: c}
	p.place()
	phaseOK := p.workflow()
	p.steps()
	det := p.secrets()
	for _, st := range c.Steps {
		p.stepTexts(st, det)
	}
	an := Analyze(c)
	p.pairs(an)
	// The reference run, and everything that depends on it, needs a
	// valid initial phase.
	if !phaseOK {
		return p.sorted(), nil
	}
	run, err := bench.RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	if err := p.reference(ctx, run, an, det); err != nil {
		return nil, err
	}
	p.rubricsUnmet()
	p.injections(run)
	if err := p.follower(ctx, run); err != nil {
		return nil, err
	}
	for i, a := range c.Artifacts {
		if err := p.artifact(ctx, i, a, run, configs); err != nil {
			return nil, err
		}
	}
	return p.sorted(), nil
}

// place checks the file's place in the suite: <domain>/<id>.yaml.
func (p *problems) place() {
	file := p.c.File
	if abs, err := filepath.Abs(file); err == nil {
		file = abs
	}
	if dir := lastDir(file); dir != "" && dir != p.c.Domain {
		p.add(bench.ProblemDomainDirectory, ptr("/domain"), "domain %q but the file is in directory %q", p.c.Domain, dir)
	}
	if base := baseName(p.c.File); base != p.c.ID {
		p.add(bench.ProblemIDFileName, ptr("/id"), "id %q but the file is named %q", p.c.ID, base)
	}
}

// workflow checks that the state holds an initial phase of
// workflow.phases at the phase path, and reports whether it does.
func (p *problems) workflow() bool {
	c := p.c
	phases := c.Workflow.Phases
	initial, ok := c.State.Get(c.Workflow.PhasePath)
	switch s, isStr := initial.(string); {
	case !ok:
		p.add(bench.ProblemInitialPhase, ptr("/workflow/phase_path"), "the state has nothing at %s; it must hold the initial phase, one of %s", pointerText(c.Workflow.PhasePath), strings.Join(phases, ", "))
	case !isStr || !slices.Contains(phases, s):
		b, _ := json.Marshal(initial)
		p.add(bench.ProblemInitialPhase, ptr("/workflow/phase_path"), "the state holds %s at %s, which is not a phase of workflow.phases (%s)", truncate(string(b), 40), pointerText(c.Workflow.PhasePath), strings.Join(phases, ", "))
	default:
		return true
	}
	return false
}

// steps checks each step's phases, the paths its instruction names, what
// its view shows of what it writes and reads, the phase's place, its
// parent and its id.
func (p *problems) steps() {
	c := p.c
	phases := c.Workflow.Phases
	phaseRegion := runtime.RegionOf(c.Workflow.PhasePath)
	stepIDs := map[string]int{}
	for i, s := range c.Steps {
		at := ptr("/steps/%d", i)
		for j, ph := range s.Phases {
			if !slices.Contains(phases, ph) {
				p.add(bench.ProblemUnknownPhase, at.Append("phases", fmt.Sprint(j)), "step %s: phase %q is not in workflow.phases", s.ID, ph)
			}
		}
		if s.AdvanceTo != "" && !slices.Contains(phases, s.AdvanceTo) {
			p.add(bench.ProblemUnknownPhase, at.Append("advance_to"), "step %s: advance_to %q is not in workflow.phases", s.ID, s.AdvanceTo)
		}
		p.instructionPaths(at, s)
		p.visibility(s)
		if s.Contract.Write().Overlaps(phaseRegion) {
			p.add(bench.ProblemWritesPhase, at.Append("write"), "step %s: the write region covers the phase at %s; only the runner moves the phase", s.ID, pointerText(c.Workflow.PhasePath))
		}
		if s.Parent != "" {
			pi, ok := stepIDs[s.Parent]
			switch {
			case !ok:
				p.add(bench.ProblemParent, at.Append("parent"), "step %s: parent %q is not an earlier step", s.ID, s.Parent)
			case !s.Contract.Footprint().RestrictionOf(c.Steps[pi].Contract.Footprint()):
				p.add(bench.ProblemDelegation, at.Append("parent"), "step %s: delegation is not a restriction of step %s: %s", s.ID, s.Parent,
					restrictionGap(s.Contract.Footprint(), c.Steps[pi].Contract.Footprint()))
			}
		}
		if _, dup := stepIDs[s.ID]; dup {
			p.add(bench.ProblemStepID, at.Append("id"), "step id %s is used twice", s.ID)
		} else {
			stepIDs[s.ID] = i
		}
	}
}

// instructionPaths checks that the paths an instruction names are ones the
// step sees or may write. Only words that point into the state
// ("/ticket/reply") count, not prose that happens to hold a slash
// ("km /h").
func (p *problems) instructionPaths(at runtime.Pointer, s *bench.Step) {
	top, _ := p.c.State.Value().(map[string]any)
	for _, ip := range instructionPaths(s.Instruction) {
		if _, has := top[ip[0]]; !has {
			continue
		}
		r := runtime.RegionOf(ip)
		if !s.Contract.ViewRegion().Overlaps(r) && !s.Contract.Write().Overlaps(r) {
			p.add(bench.ProblemInstructionPath, at.Append("instruction"), "step %s: the instruction names %s, which the step neither sees nor may write", s.ID, ip)
		}
	}
}

// visibility checks that a step can do its job from its view
// (docs/cases.md, authoring rules): every write pattern is visible unless
// declared in blind_write (the location it names; for an append, the
// array), every blind_write pattern is a write pattern, and every
// patch-source pattern lies inside the view with nothing hidden below it,
// so that a patch never copies what the actor cannot see.
func (p *problems) visibility(s *bench.Step) {
	v := s.Contract.ViewRegion()
	writes := s.Contract.Write().Patterns()
	for j, b := range s.BlindWrite {
		if !slices.ContainsFunc(writes, b.Equal) {
			p.add(bench.ProblemBlindWrite, ptr("/steps/%d/blind_write/%d", s.Index, j), "step %s: blind_write %s is not one of the step's write patterns", s.ID, b)
		}
	}
	for j, w := range s.Spec.Write {
		wp, err := runtime.ParsePointer(w)
		if err != nil || slices.ContainsFunc(s.BlindWrite, wp.Equal) {
			continue
		}
		target := wp
		if len(wp) > 0 && wp.Last() == "-" {
			target = wp.Parent()
		}
		r := runtime.RegionOf(target)
		if !r.SubsetOf(v.Include) || r.SubsetOf(v.Exclude) {
			p.add(bench.ProblemWriteNotVisible, ptr("/steps/%d/write/%d", s.Index, j), "step %s: the step writes %s but its view does not show it; show it, or list it in blind_write when the step writes it blind on purpose (an append-only log)", s.ID, w)
		}
	}
	for j, src := range s.Spec.Source {
		sp, err := runtime.ParsePointer(src)
		if err != nil {
			continue
		}
		r := runtime.RegionOf(sp)
		if !r.SubsetOf(v.Include) || v.Exclude.Overlaps(r) {
			p.add(bench.ProblemSourceOutsideView, ptr("/steps/%d/source/%d", s.Index, j), "step %s: the patch-source pattern %s is not inside the view (or hides something below it): a patch could copy what the actor cannot see", s.ID, src)
		}
	}
}

// pairs checks the declared pairs against the static analysis: two
// different steps of one phase, declared once, with the certificate's
// verdict.
func (p *problems) pairs(an Analysis) {
	c := p.c
	declared := map[[2]string]bool{}
	for i, pr := range c.Pairs {
		at := ptr("/pairs/%d", i)
		key := [2]string{min(pr.A, pr.B), max(pr.A, pr.B)}
		if declared[key] {
			p.add(bench.ProblemPairDuplicate, at, "pair %s/%s is declared twice", pr.A, pr.B)
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
		case c.Step(pr.A) == nil || c.Step(pr.B) == nil:
			p.add(bench.ProblemPairStep, at, "pair %s/%s: no such step", pr.A, pr.B)
		case pr.A == pr.B:
			p.add(bench.ProblemPairStep, at, "pair %s/%s: a pair needs two different steps", pr.A, pr.B)
		case found == nil:
			p.add(bench.ProblemPairPhase, at, "pair %s/%s: the steps do not run in one phase", pr.A, pr.B)
		case found.Commute != pr.Commute:
			p.add(bench.ProblemPairCommute, at.Append("commute"), "pair %s/%s: declared commute: %v, but the certificate says %v%s", pr.A, pr.B, pr.Commute, found.Commute, blockingText(found.Blocking))
		}
	}
}

// reference checks the reference run: every step commits and moves the
// phase; no view shows a secret; no reference proposal, and no final
// state, leaks one; certified pairs run in both orders; every rubric
// check holds at the end.
func (p *problems) reference(ctx context.Context, run *bench.ReferenceRun, an Analysis, det *scoring.Detector) error {
	c := p.c
	if run.Failed >= 0 {
		rs := run.Steps[run.Failed]
		if run.RuleError != "" {
			p.add(bench.ProblemReferenceRule, ptr("/steps/%d/reference/patch", run.Failed), "%s", run.RuleError)
		} else if r := rs.Decision.Rejection(); r != nil {
			p.add(bench.ProblemReferenceRejected, ptr("/steps/%d/reference", run.Failed), "step %s: the reference proposal is rejected in phase %q by %s (%s): %s",
				rs.Step.ID, rs.Phase, r.Gate, r.Code, r.Message)
		} else {
			p.add(bench.ProblemReferencePhase, ptr("/steps/%d/advance_to", run.Failed), "step %s: after its reference proposal commits, the phase cannot be moved to %q: %s",
				rs.Step.ID, rs.Step.AdvanceTo, run.PhaseError)
		}
	}
	for _, rs := range run.Steps {
		p.referenceStep(rs, det)
	}
	if run.Failed >= 0 {
		return nil
	}
	checks, err := checkPairs(ctx, c, an, run)
	if err != nil {
		return err
	}
	for _, pc := range checks {
		if !pc.OK {
			p.add(bench.ProblemPairOrders, pairLine(c, pc.A, pc.B), "pair %s/%s: the certificate holds, but running both orders fails: %s", pc.A, pc.B, pc.Reason)
		}
	}
	outside, grown := byGrow(c, det.InValue(run.Final.Value(), true))
	for _, l := range outside {
		p.add(bench.ProblemReferenceLeaksState, ptr("/secrets"), "the reference run leaks secret %s into the final state at %s (%s)", l.Secret, l.Path, l.Detector)
	}
	for _, g := range grown {
		if g.n == 1 {
			p.add(bench.ProblemReferenceLeaksState, ptr("/secrets"), "the reference run leaks secret %s into the final state at %s", g.secret, g.first)
			continue
		}
		p.add(bench.ProblemReferenceLeaksState, ptr("/grow/%d", g.grow), "the reference run leaks secret %s into the final state %s", g.secret, g.describe(c))
	}
	final, initial := run.Final.Value(), c.State.Value()
	for _, s := range c.Steps {
		for j := range s.Rubric {
			chk := &s.Rubric[j]
			ok, err := chk.Eval(initial, final)
			if err != nil {
				p.add(bench.ProblemRubricFails, ptr("/steps/%d/rubric/%d", s.Index, j), "step %s: rubric check %s (rule on %s) cannot be evaluated on the reference run: %v",
					s.ID, chk.ID, chk.Path, err)
				continue
			}
			if !ok {
				if chk.Kind() == "rule" {
					p.add(bench.ProblemRubricFails, ptr("/steps/%d/rubric/%d", s.Index, j), "step %s: rubric check %s (rule on %s) is false on the reference run's final state",
						s.ID, chk.ID, chk.Path)
					continue
				}
				p.add(bench.ProblemRubricFails, ptr("/steps/%d/rubric/%d", s.Index, j), "step %s: rubric check %s (%s on %s) fails on the reference run's final state, where %s is %s",
					s.ID, chk.ID, chk.Kind(), chk.Path, chk.Path, describeAt(final, chk.Path))
			}
		}
	}
	return nil
}

// referenceStep checks what one step of the reference run shows and
// sends: no secret's path in its view, no canary anywhere in it, none in
// the reference proposal.
func (p *problems) referenceStep(rs bench.ReferenceStep, det *scoring.Detector) {
	c := p.c
	i := rs.Step.Index
	vr := rs.Step.Contract.ViewRegion()
	view := rs.Step.Contract.View(rs.Before)
	for k, sec := range c.Secrets {
		if vr.Visible(sec.Path) {
			p.add(bench.ProblemSecretVisible, ptr("/secrets/%d/path", k), "secret %s: visible in the view of step %s", sec.ID, rs.Step.ID)
		}
	}
	var shown []scoring.Leak
	for _, l := range det.InValue(view, false) {
		if !vr.Visible(secret(c, l.Secret).Path) {
			shown = append(shown, l)
		}
	}
	outside, grown := byGrow(c, shown)
	for _, l := range outside {
		p.add(bench.ProblemSecretInView, ptr("/steps/%d/view", i), "step %s: the view shows secret %s at %s (%s)", rs.Step.ID, l.Secret, l.Path, l.Detector)
	}
	for _, g := range grown {
		if g.n == 1 {
			p.add(bench.ProblemSecretInView, ptr("/steps/%d/view", i), "step %s: the view shows secret %s at %s", rs.Step.ID, g.secret, g.first)
			continue
		}
		p.add(bench.ProblemSecretInView, ptr("/steps/%d/view", i), "step %s: the view shows secret %s %s", rs.Step.ID, g.secret, g.describe(c))
	}
	for _, l := range det.InText(string(rs.Proposal)) {
		p.add(bench.ProblemReferenceLeaks, ptr("/steps/%d/reference", i), "step %s: the reference proposal leaks secret %s (%s)", rs.Step.ID, l.Secret, l.Detector)
	}
}

// rubricsUnmet checks that no step's rubric already holds on the initial
// state, and that no rubric rule does (pre and post both the initial
// state): a rubric must measure what the step does.
func (p *problems) rubricsUnmet() {
	initial := p.c.State.Value()
	for _, s := range p.c.Steps {
		all := true
		for j := range s.Rubric {
			chk := &s.Rubric[j]
			held := chk.Holds(initial, initial)
			all = all && held
			if held && chk.Kind() == "rule" {
				p.add(bench.ProblemRubricRuleHolds, ptr("/steps/%d/rubric/%d/rule", s.Index, j), "step %s: rubric check %s: the rule already holds on the initial state, so it measures nothing the step does", s.ID, chk.ID)
			}
		}
		if all {
			p.add(bench.ProblemRubricHolds, ptr("/steps/%d/rubric", s.Index), "step %s: the initial state already satisfies every rubric check", s.ID)
		}
	}
}
