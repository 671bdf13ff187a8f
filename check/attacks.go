package check

import (
	"context"
	"encoding/json"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// categoryCodes are the rejection codes that fit each artifact category
// under all gates.
var categoryCodes = map[string][]string{
	// A move whose from is outside W fails scope as a write first.
	bench.CategoryHiddenSource:    {runtime.CodeSourceOutside, runtime.CodeWriteOutside},
	bench.CategoryOutOfScopeWrite: {runtime.CodeWriteOutside},
	bench.CategoryPhase:           {runtime.CodePhaseNotAllowed},
	bench.CategorySchema:          {runtime.CodeSchemaViolation, runtime.CodeOutputSchema},
	bench.CategoryInvariant:       {runtime.CodeInvariantViolated},
	bench.CategoryMalformed:       {runtime.CodeMalformed},
	bench.CategoryApply:           {runtime.CodeDoesNotApply, runtime.CodeTestFailed},
}

// injections checks each declared injection (docs/cases.md, "An
// injection"): its text is in its step's view and names its target; the
// target exists, is hidden from the step and holds a secret; a copy or
// move goes where the step may write.
func (p *problems) injections(run *bench.ReferenceRun) {
	c := p.c
	for i, inj := range c.Injections {
		at := ptr("/injections/%d", i)
		s := c.Step(inj.Step)
		if s == nil {
			p.add(bench.ProblemInjectionStep, at.Append("step"), "injection: no step %q", inj.Step)
			continue
		}
		before := c.State
		if rs := run.At(s.ID); rs != nil {
			before = rs.Before
		}
		vr := s.Contract.ViewRegion()
		if v, ok := before.Get(inj.At); !ok || !vr.Visible(inj.At) {
			p.add(bench.ProblemInjectionHidden, at.Append("at"), "injection: %s is not in the view of step %s", inj.At, s.ID)
		} else if !namesTarget(v, inj.Target) {
			p.add(bench.ProblemInjectionText, at.Append("at"), "injection: the text at %s does not name its target %s (its pointer or its last member name)", inj.At, inj.Target)
		}
		if _, ok := before.Get(inj.Target); !ok {
			p.add(bench.ProblemInjectionTargetMissing, at.Append("target"), "injection: target %s does not exist", inj.Target)
		} else if vr.Visible(inj.Target) {
			p.add(bench.ProblemInjectionTargetVisible, at.Append("target"), "injection: target %s is visible to step %s", inj.Target, s.ID)
		}
		holds := false
		for _, sec := range c.Secrets {
			holds = holds || sec.Path.HasPrefix(inj.Target)
		}
		if !holds {
			p.add(bench.ProblemInjectionNoSecret, at.Append("target"), "injection: target %s holds no secret; an injection asks for a secret (or a record holding one), so that its success can be measured", inj.Target)
		}
		if (inj.Op == bench.InjectCopy || inj.Op == bench.InjectMove) && !s.Contract.Write().Contains(inj.Into) {
			p.add(bench.ProblemInjectionInto, at.Append("into"), "injection: into %s is outside the write region of step %s; name where the injected text asks the value to go among the places the step may write", inj.Into, s.ID)
		}
	}
}

// follower checks that what an actor that obeys every injection of a step
// sends (the follower) applies to the full state when no gate runs: the
// attack is measured by what the gates then do.
func (p *problems) follower(ctx context.Context, run *bench.ReferenceRun) error {
	c := p.c
	for _, s := range c.Steps {
		injs := c.StepInjections(s.ID)
		rs := run.At(s.ID)
		if len(injs) == 0 || rs == nil || rs.Proposal == nil {
			continue
		}
		prop, err := bench.InjectedProposal(s, rs.Proposal, injs, rs.Before.Value())
		if err != nil {
			p.add(bench.ProblemProposal, ptr("/steps/%d/reference", s.Index), "step %s: %v", s.ID, err)
			continue
		}
		d, err := s.Submit(ctx, rs.Before, prop, runtime.GateSet{}, rs.Phase)
		if err != nil {
			return err
		}
		if r := d.Rejection(); r != nil {
			first := 0
			for i, inj := range c.Injections {
				if inj.Step == s.ID {
					first = i
					break
				}
			}
			p.add(bench.ProblemFollower, ptr("/injections/%d", first), "step %s: the follower's answer (the reference patch plus what the injections ask) does not commit with no gate: %s: %s", s.ID, r.Code, r.Message)
		}
	}
	return nil
}

// artifact checks the i-th artifact of the case (docs/cases.md, "An
// artifact"): a unique id; a step the reference run reaches; a known
// submit phase; raw text only when malformed; caught_by exactly the gates
// that reject it on their own, so that it predicts every configuration's
// decision; a first rejection under all gates that fits its category; and
// the paper set's rule.
func (p *problems) artifact(ctx context.Context, i int, a *bench.Artifact, run *bench.ReferenceRun, configs []*bench.Config) error {
	c := p.c
	at := ptr("/artifacts/%d", i)
	for _, o := range c.Artifacts[:i] {
		if o.ID == a.ID {
			p.add(bench.ProblemArtifactID, at.Append("id"), "artifact id %s is used twice", a.ID)
			break
		}
	}
	s := c.Step(a.Step)
	if s == nil {
		p.add(bench.ProblemArtifactStep, at.Append("step"), "artifact %s: no step %q", a.ID, a.Step)
		return nil
	}
	rs := run.At(s.ID)
	if rs == nil {
		p.add(bench.ProblemArtifactStep, at.Append("step"), "artifact %s: the reference run never reaches step %s", a.ID, s.ID)
		return nil
	}
	phase := rs.Phase
	if a.SubmitPhase != "" {
		phase = a.SubmitPhase
		if !slices.Contains(c.Workflow.Phases, phase) {
			p.add(bench.ProblemUnknownPhase, at.Append("submit_phase"), "artifact %s: submit_phase %q is not in workflow.phases", a.ID, phase)
			return nil
		}
	}
	if a.Raw && a.Category != bench.CategoryMalformed {
		p.add(bench.ProblemArtifactRaw, at.Append("raw"), "artifact %s: raw text is only for malformed artifacts", a.ID)
	}
	if err := p.caughtBy(ctx, at, a, rs, phase, configs); err != nil {
		return err
	}
	d, err := s.Submit(ctx, rs.Before, a.Proposal, bench.AllGates, phase)
	if err != nil {
		return err
	}
	if r := d.Rejection(); r == nil {
		p.add(bench.ProblemArtifactAccepted, at, "artifact %s: all gates accept it", a.ID)
	} else if !slices.Contains(categoryCodes[a.Category], r.Code) {
		p.add(bench.ProblemArtifactCategory, at.Append("category"), "artifact %s: category %s, but all gates reject it first with %s", a.ID, a.Category, r.Code)
	}
	if a.Category == bench.CategoryHiddenSource && !citesSource(s, d.Proposal, false) {
		p.add(bench.ProblemArtifactCategory, at.Append("category"), "artifact %s: a hidden-source artifact must cite, by copy, test or move from, a location outside the step's source region", a.ID)
	}
	if a.PaperSet {
		if a.Category != bench.CategoryHiddenSource {
			p.add(bench.ProblemArtifactPaperSet, at.Append("paper_set"), "artifact %s: a paper_set artifact must be hidden-source", a.ID)
		} else if !citesSource(s, d.Proposal, true) {
			p.add(bench.ProblemArtifactPaperSet, at.Append("paper_set"), "artifact %s: a paper_set artifact must cite, by copy, test or move from, a location outside the step's view and source region", a.ID)
		}
	}
	return nil
}

// caughtBy checks that an artifact's caught_by is exactly the set of
// gates that reject it on their own, and, when it is, that every
// configuration decides as caught_by predicts.
func (p *problems) caughtBy(ctx context.Context, at runtime.Pointer, a *bench.Artifact, rs *bench.ReferenceStep, phase string, configs []*bench.Config) error {
	alone, err := rs.Step.GatesAlone(ctx, rs.Before, a.Proposal, phase)
	if err != nil {
		return err
	}
	perGate := len(p.ps)
	for _, g := range bench.GateOrder {
		listed := slices.Contains(a.CaughtBy, g)
		switch {
		case alone[g] != "" && !listed:
			p.add(bench.ProblemArtifactCaughtBy, at.Append("caught_by"), "artifact %s: gate %s on its own rejects it (%s); add %s to caught_by", a.ID, g, alone[g], g)
		case alone[g] == "" && listed:
			p.add(bench.ProblemArtifactCaughtBy, at.Append("caught_by"), "artifact %s: caught_by lists %s, but gate %s on its own accepts it", a.ID, g, g)
		}
	}
	if len(p.ps) > perGate {
		return nil
	}
	for _, cfg := range configs {
		d, err := rs.Step.Submit(ctx, rs.Before, a.Proposal, cfg.GateSet, phase)
		if err != nil {
			return err
		}
		want := false
		for _, g := range a.CaughtBy {
			want = want || cfg.Runs(g)
		}
		switch {
		case want && d.Committed:
			p.add(bench.ProblemArtifactCaughtBy, at.Append("caught_by"), "artifact %s: configuration %s commits it, but caught_by [%s] says one of its gates rejects it", a.ID, cfg.Name, strings.Join(a.CaughtBy, ", "))
		case !want && !d.Committed:
			r := d.Rejection()
			p.add(bench.ProblemArtifactCaughtBy, at.Append("caught_by"), "artifact %s: configuration %s rejects it by %s (%s), which caught_by [%s] does not list", a.ID, cfg.Name, r.Gate, r.Code, strings.Join(a.CaughtBy, ", "))
		}
	}
	return nil
}

// citesSource reports whether a proposal cites a source the step may not
// cite: a copy or move from, or a test path, outside the source region
// and, when hidden is true, outside the view too.
func citesSource(s *bench.Step, p *runtime.Proposal, hidden bool) bool {
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
