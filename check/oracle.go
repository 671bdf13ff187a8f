package check

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// Warnings returns the warnings of a loaded case set: findings that do
// not make a case invalid but that a policy author should weigh, each a
// bench.Problem with Warning set and a stable code:
// bench.WarningInvariantReadsHidden (HiddenInvariantReads) and
// bench.WarningInvariantFalseBefore (InvariantsFalseBefore). patchbench
// validate prints them and still succeeds. The error is for a cancelled
// context only.
func Warnings(ctx context.Context, cases []*bench.Case, configs []*bench.Config) (bench.Problems, error) {
	var ps bench.Problems
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		w, err := HiddenInvariantReads(ctx, c, configs)
		if err != nil {
			return nil, err
		}
		ps = append(ps, w...)
		w, err = InvariantsFalseBefore(ctx, c)
		if err != nil {
			return nil, err
		}
		ps = append(ps, w...)
	}
	return ps, nil
}

// InvariantsFalseBefore finds the invariants of case c that do not hold
// on the state a step starts from in the reference run, in the step's
// phase, evaluated as if the step did nothing (pre and post both that
// state). Such a rule is a goal, not an invariant: an empty patch breaks
// it, and a violation the state before a step already has is inherited,
// never the step's illegal commit (docs/run.md, illegal commits), so the
// benchmark cannot count a step that misses the goal; the goal belongs in
// the step's rubric. It returns one warning per step and invariant, at the
// invariant's line; steps the reference run does not reach are not
// judged. The error is for a cancelled context only.
func InvariantsFalseBefore(ctx context.Context, c *bench.Case) (bench.Problems, error) {
	if len(c.Invariants) == 0 {
		return nil, nil
	}
	run, err := bench.RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	line := map[string]int{}
	for i, inv := range c.Invariants {
		line[inv.Name] = c.Line(ptr("/invariants/%d/rule", i))
	}
	var ps bench.Problems
	for _, rs := range run.Steps {
		failing, err := rs.Step.Contract.FailingInvariants(ctx, rs.Before, rs.Before, rs.Phase)
		if err != nil {
			return nil, err
		}
		for _, o := range failing {
			ps = append(ps, bench.Problem{
				File: c.File, Line: line[o.Name], Case: c.ID, Code: bench.WarningInvariantFalseBefore, Warning: true,
				Msg: fmt.Sprintf("invariant %q does not hold (%s) on the state step %s starts from in the reference run: a step that does nothing breaks it, so no step can be counted for it (the violation is inherited); a goal belongs in the step's rubric",
					o.Name, o.Result.Code, rs.Step.ID),
			})
		}
	}
	return ps, nil
}

// HiddenInvariantReads finds the invariants of case c that are a one-bit
// oracle on hidden data (the residual risk the paper leaves to the policy
// author): for a step, in a configuration that shows it a projected view
// and enforces the invariants gate, a conjunct of an invariant that reads
// a location the step's view hides and also one the step may write. Such a
// conjunct passes or fails depending on both the hidden value and the
// patch, so an actor that proposes patches and reads the rejections learns
// about a value it cannot see (fin-portfolio-rebalance's propose-trades
// may empty the trades only while /compliance_review/approved is false).
//
// The analysis reads the rules' CEL syntax. A rule is split into its
// conjuncts (&& and the elements of an all() over a location, taken from
// the state the reference run reaches before the step); a conjunct that
// reads no writable location cannot be made to fail by a patch, and one
// that reads nothing hidden tells nothing hidden. Each chain of selections
// and indexes from pre or post is a read of that location and everything
// below it (an index that is not a literal matches any member), except
// size(), has() and the range of a comprehension, which read only a
// location's shape or presence. Where a configuration runs neither the
// scope nor the ACL gate, the step may write anywhere.
//
// It returns one warning per step and invariant, at the invariant's line,
// naming the hidden locations and the configurations; nil when there is
// none. The error is for a cancelled context only.
func HiddenInvariantReads(ctx context.Context, c *bench.Case, configs []*bench.Config) (bench.Problems, error) {
	var oracleConfigs []*bench.Config
	for _, cfg := range configs {
		if cfg.Projected() && cfg.GateSet.Invariants {
			oracleConfigs = append(oracleConfigs, cfg)
		}
	}
	if len(oracleConfigs) == 0 || len(c.Invariants) == 0 {
		return nil, nil
	}
	run, err := bench.RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	var ps bench.Problems
	for _, s := range c.Steps {
		state := c.State.Value()
		for _, rs := range run.Steps {
			if rs.Step == s {
				state = rs.Before.Value()
			}
		}
		view := s.Contract.ViewRegion()
		for i, inv := range c.Invariants {
			conj, err := runtime.InvariantConjunctReads(inv.Rule, state)
			if err != nil {
				continue // a rule that does not parse is a load problem
			}
			var hidden, in []string
			for _, cfg := range oracleConfigs {
				writable := runtime.MustRegion("")
				if cfg.GateSet.Scope || cfg.GateSet.ACL {
					writable = s.Contract.Write()
				}
				h := oracleReads(conj, view, writable, state)
				if len(h) > 0 {
					in = append(in, cfg.Label)
					for _, x := range h {
						if !slices.Contains(hidden, x) {
							hidden = append(hidden, x)
						}
					}
				}
			}
			if len(in) == 0 {
				continue
			}
			slices.Sort(hidden)
			if len(hidden) > 6 {
				hidden = append(hidden[:6], fmt.Sprintf("and %d more", len(hidden)-6))
			}
			ps = append(ps, bench.Problem{
				File: c.File, Line: c.Line(ptr("/invariants/%d/rule", i)), Case: c.ID, Code: bench.WarningInvariantReadsHidden, Warning: true,
				Msg: fmt.Sprintf("invariant %q reads %s, hidden from step %s, beside what the step may write: in %s its rejections tell the actor about data it cannot see (give that part to a step that sees it, or accept the risk)",
					inv.Name, strings.Join(hidden, ", "), s.ID, strings.Join(in, ", ")),
			})
		}
	}
	return ps, nil
}

// oracleReads returns, for the conjuncts that read both a location the
// view hides and one the step may write, the hidden reads as text.
func oracleReads(conj [][]runtime.InvariantRead, v runtime.ViewRegion, writable runtime.Region, state any) []string {
	var out []string
	for _, c := range conj {
		var hidden []string
		w := false
		for _, r := range c {
			if readHidden(r, v, state) {
				hidden = append(hidden, r.String())
			}
			w = w || readWritable(r, writable)
		}
		if w {
			for _, h := range hidden {
				if !slices.Contains(out, h) {
					out = append(out, h)
				}
			}
		}
	}
	return out
}

// readHidden reports whether the view hides what a read reads: for a
// value, anything at or below the location; for a presence, the location
// itself; for a shape, the members of an object (an array keeps its
// positions in a view, hidden elements becoming null, so its length shows
// wherever anything in it does).
func readHidden(r runtime.InvariantRead, v runtime.ViewRegion, state any) bool {
	if slices.Contains(r.Path, runtime.NewElement) {
		return false // the patch's own data
	}
	reg := runtime.RegionOf(r.Path)
	excludedAbove := false
	for _, q := range v.Exclude.Patterns() {
		if len(q) <= len(r.Path) && runtime.RegionOf(q).Overlaps(reg) {
			excludedAbove = true
		}
	}
	switch r.Kind {
	case runtime.ReadValue:
		return !reg.SubsetOf(v.Include) || v.Exclude.Overlaps(reg)
	case runtime.ReadPresence:
		return excludedAbove || !v.Include.Overlaps(reg)
	}
	if excludedAbove {
		return true
	}
	if val, ok := runtime.Lookup(state, r.Path); ok {
		if _, isArray := val.([]any); isArray {
			return !v.Include.Overlaps(reg)
		}
	}
	for _, q := range v.Exclude.Patterns() {
		if len(q) == len(r.Path)+1 && runtime.RegionOf(q).Overlaps(reg) {
			return true // an excluded member
		}
	}
	return !reg.SubsetOf(v.Include)
}

// readWritable reports whether a patch the step may commit can change
// what a read reads: for a value, the write region overlaps the location;
// for a shape, a write pattern at, above or just below it (a member added
// or removed); for a presence, one at or above it. An element a patch adds
// to an all()'s range is written when the step may append to the range.
func readWritable(r runtime.InvariantRead, writable runtime.Region) bool {
	p, kind := r.Path, r.Kind
	if i := slices.Index(p, runtime.NewElement); i >= 0 {
		p, kind = append(slices.Clone(p[:i]), "-"), runtime.ReadValue
	}
	reg := runtime.RegionOf(p)
	depth := len(p) // presence
	switch kind {
	case runtime.ReadValue:
		return writable.Overlaps(reg)
	case runtime.ReadShape:
		depth++
	}
	for _, q := range writable.Patterns() {
		if len(q) <= depth && runtime.RegionOf(q).Overlaps(reg) {
			return true
		}
	}
	return false
}
