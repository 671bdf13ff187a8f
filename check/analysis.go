package check

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// StepFootprint is a step's static footprint (R, W, P; paper §3.4) and the
// phase the reference run executes it in.
type StepFootprint struct {
	ID     string             `json:"id"`
	Phase  string             `json:"phase"`
	Read   runtime.ViewRegion `json:"read"`
	Write  runtime.Region     `json:"write"`
	Source runtime.Region     `json:"source"`
}

// PairAnalysis is the commutation certificate of two steps that run in
// one phase: Commute, or the overlapping paths that block it. Declared is
// the case's own analysis of the pair, when it has one.
type PairAnalysis struct {
	A        string             `json:"a"`
	B        string             `json:"b"`
	Phase    string             `json:"phase"`
	Commute  bool               `json:"commute"`
	Blocking []runtime.Conflict `json:"blocking"`
	Declared *bench.Pair        `json:"declared,omitempty"`
}

// Delegation is a step that names a parent, and whether its footprint is
// a restriction of the parent's (view ⊆, write ⊆, source ⊆; paper §3.4).
type Delegation struct {
	Child  string `json:"child"`
	Parent string `json:"parent"`
	OK     bool   `json:"ok"`
}

// Analysis is the static analysis of one case: each step's footprint,
// each pair of steps in one phase, each delegation.
type Analysis struct {
	ID          string          `json:"id"`
	Steps       []StepFootprint `json:"steps"`
	Pairs       []PairAnalysis  `json:"pairs"`
	Delegations []Delegation    `json:"delegations"`
}

// stepPhases returns the phase each step runs in: the phase the workflow
// is in when the steps run in order and each advance_to is taken. It
// needs no actor: the phase moves only through advance_to.
func stepPhases(c *bench.Case) []string {
	out := make([]string, len(c.Steps))
	phase := c.InitialPhase()
	for i, s := range c.Steps {
		out[i] = phase
		if s.AdvanceTo != "" {
			phase = s.AdvanceTo
		}
	}
	return out
}

// Analyze computes the static analysis of c. Pairs are the steps that run
// in one phase, in step order.
func Analyze(c *bench.Case) Analysis {
	a := Analysis{ID: c.ID, Steps: []StepFootprint{}, Pairs: []PairAnalysis{}, Delegations: []Delegation{}}
	phases := stepPhases(c)
	for i, s := range c.Steps {
		fp := s.Contract.Footprint()
		a.Steps = append(a.Steps, StepFootprint{ID: s.ID, Phase: phases[i], Read: fp.Read, Write: fp.Write, Source: fp.Source})
	}
	for i, s := range c.Steps {
		for j := i + 1; j < len(c.Steps); j++ {
			if phases[i] != phases[j] {
				continue
			}
			t := c.Steps[j]
			cert := runtime.Commutation(s.Contract.Footprint(), t.Contract.Footprint())
			pa := PairAnalysis{A: s.ID, B: t.ID, Phase: phases[i], Commute: cert.Commute, Blocking: cert.Blocking}
			for k := range c.Pairs {
				p := &c.Pairs[k]
				if pa.Declared == nil && ((p.A == s.ID && p.B == t.ID) || (p.A == t.ID && p.B == s.ID)) {
					pa.Declared = p
				}
			}
			a.Pairs = append(a.Pairs, pa)
		}
	}
	for _, s := range c.Steps {
		if s.Parent == "" {
			continue
		}
		d := Delegation{Child: s.ID, Parent: s.Parent}
		// The parent must be an earlier step; a step is not its own.
		if p := c.Step(s.Parent); p != nil && p.Index < s.Index {
			d.OK = s.Contract.Footprint().RestrictionOf(p.Contract.Footprint())
		}
		a.Delegations = append(a.Delegations, d)
	}
	return a
}

// PairCheck is the outcome of running a certified pair in both orders.
type PairCheck struct {
	A     string `json:"a"`
	B     string `json:"b"`
	Phase string `json:"phase"`
	// OK is true when both orders commit both reference proposals and
	// end in equal states.
	OK     bool   `json:"ok"`
	Reason string `json:"reason,omitempty"`
}

// CheckPairs runs each certified pair of c in both orders, A then B and B
// then A, from the state the reference run reaches before the earlier of
// the two, with the reference proposals under all gates and the pair's
// phase held (the runner moves phases only between phases). It is the
// empirical side of the commutation certificate (paper §3.4).
func CheckPairs(ctx context.Context, c *bench.Case, an Analysis) ([]PairCheck, error) {
	run, err := bench.RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	return checkPairs(ctx, c, an, run)
}

func checkPairs(ctx context.Context, c *bench.Case, an Analysis, run *bench.ReferenceRun) ([]PairCheck, error) {
	var out []PairCheck
	for _, pa := range an.Pairs {
		if !pa.Commute {
			continue
		}
		pc := PairCheck{A: pa.A, B: pa.B, Phase: pa.Phase}
		first := run.At(pa.A)
		if first == nil {
			pc.Reason = fmt.Sprintf("the reference run stopped before step %s", pa.A)
			out = append(out, pc)
			continue
		}
		a, b := c.Step(pa.A), c.Step(pa.B)
		ab, why1, err := runSeq(ctx, first.Before, pa.Phase, a, b)
		if err != nil {
			return nil, err
		}
		ba, why2, err := runSeq(ctx, first.Before, pa.Phase, b, a)
		if err != nil {
			return nil, err
		}
		switch {
		case why1 != "":
			pc.Reason = "order " + pa.A + ", " + pa.B + ": " + why1
		case why2 != "":
			pc.Reason = "order " + pa.B + ", " + pa.A + ": " + why2
		case !runtime.EqualJSON(ab.Value(), ba.Value()):
			pc.Reason = "the two orders end in different states"
		default:
			pc.OK = true
		}
		out = append(out, pc)
	}
	return out, nil
}

// runSeq runs the reference proposals of steps in order from state, in
// a session with no phase path held in phase: the pair check of
// CheckPairs. It returns the final state, or why a step was rejected.
func runSeq(ctx context.Context, state *runtime.Document, phase string, steps ...*bench.Step) (*runtime.Document, string, error) {
	sess := runtime.NewSession(state, nil)
	for _, s := range steps {
		ref, err := s.ReferenceAt(sess.State())
		if err != nil {
			return nil, err.Error(), nil
		}
		res, err := sess.Step(ctx, s.Contract, ref, runtime.StepOptions{Gates: bench.AllGates, SubmitPhase: phase})
		if err != nil {
			return nil, "", err
		}
		if !res.Committed {
			r := res.Rejection()
			return nil, fmt.Sprintf("step %s rejected by %s (%s): %s", s.ID, r.Gate, r.Code, r.Message), nil
		}
	}
	return sess.State(), "", nil
}
