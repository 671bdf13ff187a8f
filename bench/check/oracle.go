package check

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"

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
// never the step's illegal commit (PatchBench design §6), so the
// benchmark cannot count a step that misses the goal; the goal belongs in
// the step's rubric. It returns one warning per step and invariant, at the
// invariant's line; steps the reference run does not reach are not
// judged. The error is for a cancelled context only.
func InvariantsFalseBefore(ctx context.Context, c *bench.Case) (bench.Problems, error) {
	if len(c.Invariants) == 0 {
		return nil, nil
	}
	run, err := RunReference(ctx, c)
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
	run, err := RunReference(ctx, c)
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
			conj, err := invariantConjuncts(inv.Rule, state)
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

// readKind says how much of a location a rule reads.
type readKind int

const (
	// readValue: the value with everything below it.
	readValue readKind = iota
	// readShape: how many members or elements it has (size(), the range
	// of a comprehension).
	readShape
	// readPresence: whether it is there (has()).
	readPresence
)

// read is a location an invariant reads: a JSON Pointer pattern into pre
// or post ("*" where the rule indexes with a computed key; newElement for
// an element a patch may add to an all()'s range).
type read struct {
	path runtime.Pointer
	kind readKind
}

// newElement stands, in a read's path, for an element a patch adds to the
// range of an all(): the patch's own data, never hidden.
const newElement = "\x00new"

func (r read) String() string {
	s := r.path.String()
	if s == "" {
		s = "the whole state"
	}
	switch r.kind {
	case readShape:
		s = "the size of " + s
	case readPresence:
		s = "whether " + s + " exists"
	}
	return s
}

var (
	parseEnvOnce sync.Once
	parseEnv     *cel.Env
	parseEnvErr  error
)

// invariantConjuncts parses a CEL invariant (declared as the runtime
// declares it: pre, post, phase) and returns the reads of each of its
// conjuncts; an all() over a location of state is split by element.
func invariantConjuncts(rule string, state any) ([][]read, error) {
	parseEnvOnce.Do(func() {
		parseEnv, parseEnvErr = cel.NewEnv(
			cel.Variable("pre", cel.DynType), cel.Variable("post", cel.DynType), cel.Variable("phase", cel.StringType))
	})
	if parseEnvErr != nil {
		return nil, parseEnvErr
	}
	a, iss := parseEnv.Parse(rule)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	w := &readWalker{state: state}
	return w.conjuncts(a.NativeRep().Expr(), nil), nil
}

// scope binds comprehension variables to the locations they stand for
// (nil: a variable that stands for no location, shadowing pre or post).
type scope map[string]runtime.Pointer

func (s scope) with(name string, p runtime.Pointer) scope {
	out := make(scope, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	out[name] = p
	return out
}

type readWalker struct {
	state any
	reads []read
}

// conjuncts returns the reads of each conjunct of e.
func (w *readWalker) conjuncts(e celast.Expr, sc scope) [][]read {
	if e.Kind() == celast.CallKind && e.AsCall().FunctionName() == operators.LogicalAnd && len(e.AsCall().Args()) == 2 {
		args := e.AsCall().Args()
		return append(w.conjuncts(args[0], sc), w.conjuncts(args[1], sc)...)
	}
	if comp, pred, ok := allMacro(e); ok {
		if p, ok := w.path(comp.IterRange(), sc); ok {
			shared := w.collect(func() { w.indexArgs(comp.IterRange(), sc) })
			var out [][]read
			for _, tok := range w.elements(p) {
				inner := sc.with(comp.IterVar(), p.Append(tok)).with(comp.AccuVar(), nil)
				if comp.HasIterVar2() {
					inner = inner.with(comp.IterVar2(), p.Append(tok))
				}
				for _, c := range w.conjuncts(pred, inner) {
					out = append(out, append(c, shared...))
				}
			}
			return out
		}
	}
	return [][]read{w.collect(func() { w.walk(e, sc) })}
}

// collect returns the reads f records.
func (w *readWalker) collect(f func()) []read {
	saved := w.reads
	w.reads = nil
	f()
	got := w.reads
	w.reads = saved
	return got
}

// allMacro recognises the expansion of x.all(v, pred): an accumulator
// starting true, stepped by accu && pred.
func allMacro(e celast.Expr) (celast.ComprehensionExpr, celast.Expr, bool) {
	if e.Kind() != celast.ComprehensionKind {
		return nil, nil, false
	}
	comp := e.AsComprehension()
	init, step := comp.AccuInit(), comp.LoopStep()
	if init.Kind() != celast.LiteralKind || init.AsLiteral() != types.True || step.Kind() != celast.CallKind {
		return nil, nil, false
	}
	call := step.AsCall()
	if call.FunctionName() != operators.LogicalAnd || len(call.Args()) != 2 {
		return nil, nil, false
	}
	if a := call.Args()[0]; a.Kind() != celast.IdentKind || a.AsIdent() != comp.AccuVar() {
		return nil, nil, false
	}
	return comp, call.Args()[1], true
}

// elements returns the tokens of the elements an all() over p ranges
// over: the indexes or member names p holds in the state, and newElement
// for those a patch may add; "*" alone when p is not a concrete location
// of the state.
func (w *readWalker) elements(p runtime.Pointer) []string {
	if slices.Contains(p, runtime.Wildcard) || slices.Contains(p, newElement) {
		return []string{runtime.Wildcard}
	}
	v, ok := runtime.Lookup(w.state, p)
	if !ok {
		return []string{runtime.Wildcard}
	}
	var toks []string
	switch x := v.(type) {
	case []any:
		for i := range x {
			toks = append(toks, strconv.Itoa(i))
		}
	case map[string]any:
		for k := range x {
			toks = append(toks, k)
		}
		slices.Sort(toks)
	default:
		return []string{runtime.Wildcard}
	}
	return append(toks, newElement)
}

func (w *readWalker) add(p runtime.Pointer, k readKind) {
	w.reads = append(w.reads, read{path: p, kind: k})
}

// path returns the location an expression denotes when it is a chain of
// selections and indexes from pre, post or a bound comprehension variable.
func (w *readWalker) path(e celast.Expr, sc scope) (runtime.Pointer, bool) {
	switch e.Kind() {
	case celast.IdentKind:
		name := e.AsIdent()
		if p, bound := sc[name]; bound {
			return p, p != nil
		}
		if name == "pre" || name == "post" {
			return runtime.Pointer{}, true
		}
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() {
			return nil, false
		}
		if p, ok := w.path(sel.Operand(), sc); ok {
			return p.Append(sel.FieldName()), true
		}
	case celast.CallKind:
		call := e.AsCall()
		if (call.FunctionName() != operators.Index && call.FunctionName() != operators.OptIndex) || len(call.Args()) != 2 {
			return nil, false
		}
		p, ok := w.path(call.Args()[0], sc)
		if !ok {
			return nil, false
		}
		tok := runtime.Wildcard
		if k := call.Args()[1]; k.Kind() == celast.IdentKind {
			// m[k], k ranging over the members of the map m: the
			// member k stands for.
			if q := sc[k.AsIdent()]; len(q) == len(p)+1 && q.Parent().Equal(p) {
				if v, ok := runtime.Lookup(w.state, p); ok {
					if _, isMap := v.(map[string]any); isMap {
						tok = q.Last()
					}
				}
			}
		} else if k.Kind() == celast.LiteralKind {
			switch v := k.AsLiteral().(type) {
			case types.String:
				tok = string(v)
			case types.Int:
				tok = strconv.FormatInt(int64(v), 10)
			case types.Uint:
				tok = strconv.FormatUint(uint64(v), 10)
			}
		}
		return p.Append(tok), true
	}
	return nil, false
}

// walk records every read of e.
func (w *readWalker) walk(e celast.Expr, sc scope) {
	if p, ok := w.path(e, sc); ok {
		w.add(p, readValue)
		w.indexArgs(e, sc)
		return
	}
	switch e.Kind() {
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() { // has(x.f): whether x holds f
			if p, ok := w.path(sel.Operand(), sc); ok {
				w.add(p.Append(sel.FieldName()), readPresence)
				w.indexArgs(sel.Operand(), sc)
				return
			}
		}
		w.walk(sel.Operand(), sc)
	case celast.CallKind:
		call := e.AsCall()
		args := call.Args()
		if call.IsMemberFunction() {
			args = append([]celast.Expr{call.Target()}, args...)
		}
		if call.FunctionName() == "size" && len(args) == 1 {
			if p, ok := w.path(args[0], sc); ok {
				w.add(p, readShape)
				w.indexArgs(args[0], sc)
				return
			}
		}
		for _, a := range args {
			w.walk(a, sc)
		}
	case celast.ListKind:
		for _, el := range e.AsList().Elements() {
			w.walk(el, sc)
		}
	case celast.MapKind:
		for _, en := range e.AsMap().Entries() {
			w.walk(en.AsMapEntry().Key(), sc)
			w.walk(en.AsMapEntry().Value(), sc)
		}
	case celast.StructKind:
		for _, f := range e.AsStruct().Fields() {
			w.walk(f.AsStructField().Value(), sc)
		}
	case celast.ComprehensionKind:
		comp := e.AsComprehension()
		var inner scope
		if p, ok := w.path(comp.IterRange(), sc); ok {
			// The range's shape; its elements are read through the
			// variables.
			w.add(p, readShape)
			w.indexArgs(comp.IterRange(), sc)
			inner = sc.with(comp.IterVar(), p.Append(runtime.Wildcard))
			if comp.HasIterVar2() {
				inner = inner.with(comp.IterVar2(), p.Append(runtime.Wildcard))
			}
		} else {
			w.walk(comp.IterRange(), sc)
			inner = sc.with(comp.IterVar(), nil)
			if comp.HasIterVar2() {
				inner = inner.with(comp.IterVar2(), nil)
			}
		}
		w.walk(comp.AccuInit(), sc)
		inner = inner.with(comp.AccuVar(), nil)
		w.walk(comp.LoopCondition(), inner)
		w.walk(comp.LoopStep(), inner)
		w.walk(comp.Result(), inner)
	}
}

// indexArgs records the reads inside the index expressions of a chain
// (post.items[post.chosen]). A bare comprehension variable used as an
// index is a key or position its range's shape already gives.
func (w *readWalker) indexArgs(e celast.Expr, sc scope) {
	for {
		switch e.Kind() {
		case celast.SelectKind:
			e = e.AsSelect().Operand()
			continue
		case celast.CallKind:
			args := e.AsCall().Args()
			if len(args) != 2 {
				return
			}
			if k := args[1]; k.Kind() != celast.LiteralKind && !(k.Kind() == celast.IdentKind && sc[k.AsIdent()] != nil) {
				w.walk(k, sc)
			}
			e = args[0]
			continue
		}
		return
	}
}

// oracleReads returns, for the conjuncts that read both a location the
// view hides and one the step may write, the hidden reads as text.
func oracleReads(conj [][]read, v runtime.ViewRegion, writable runtime.Region, state any) []string {
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
func readHidden(r read, v runtime.ViewRegion, state any) bool {
	if slices.Contains(r.path, newElement) {
		return false // the patch's own data
	}
	reg := runtime.RegionOf(r.path)
	excludedAbove := false
	for _, q := range v.Exclude.Patterns() {
		if len(q) <= len(r.path) && runtime.RegionOf(q).Overlaps(reg) {
			excludedAbove = true
		}
	}
	switch r.kind {
	case readValue:
		return !reg.SubsetOf(v.Include) || v.Exclude.Overlaps(reg)
	case readPresence:
		return excludedAbove || !v.Include.Overlaps(reg)
	}
	if excludedAbove {
		return true
	}
	if val, ok := runtime.Lookup(state, r.path); ok {
		if _, isArray := val.([]any); isArray {
			return !v.Include.Overlaps(reg)
		}
	}
	for _, q := range v.Exclude.Patterns() {
		if len(q) == len(r.path)+1 && runtime.RegionOf(q).Overlaps(reg) {
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
func readWritable(r read, writable runtime.Region) bool {
	p, kind := r.path, r.kind
	if i := slices.Index(p, newElement); i >= 0 {
		p, kind = append(slices.Clone(p[:i]), "-"), readValue
	}
	reg := runtime.RegionOf(p)
	depth := len(p) // presence
	switch kind {
	case readValue:
		return writable.Overlaps(reg)
	case readShape:
		depth++
	}
	for _, q := range writable.Patterns() {
		if len(q) <= depth && runtime.RegionOf(q).Overlaps(reg) {
			return true
		}
	}
	return false
}
