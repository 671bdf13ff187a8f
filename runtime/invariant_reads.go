package runtime

// The invariants' footprint: what a CEL invariant reads of the state, from
// its syntax (PatchBench's validate uses it to find the invariants that
// tell an actor about data its view hides).

import (
	"slices"
	"strconv"

	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/operators"
	"cel.dev/cel-go/common/types"
)

// ReadKind says how much of a location an invariant reads.
type ReadKind int

const (
	// ReadValue: the value with everything below it.
	ReadValue ReadKind = iota
	// ReadShape: how many members or elements it has (size(), the range
	// of a comprehension).
	ReadShape
	// ReadPresence: whether it is there (has()).
	ReadPresence
)

// InvariantRead is a location an invariant reads: a JSON Pointer pattern
// into pre or post (Wildcard where the rule indexes with a computed key;
// NewElement for an element a patch may add to an all()'s range), and how
// much of it.
type InvariantRead struct {
	Path Pointer
	Kind ReadKind
}

// NewElement stands, in an InvariantRead's path, for an element a patch
// adds to the range of an all(): the patch's own data. It is no JSON
// Pointer token a state can hold (it starts with a NUL).
const NewElement = "\x00new"

// String says what the read reads: "/a/b", "the size of /a", "whether
// /a/b exists", "the whole state".
func (r InvariantRead) String() string {
	s := r.Path.String()
	if s == "" {
		s = "the whole state"
	}
	switch r.Kind {
	case ReadShape:
		s = "the size of " + s
	case ReadPresence:
		s = "whether " + s + " exists"
	}
	return s
}

// InvariantConjunctReads is the read footprint of one invariant: it
// parses the CEL rule in the invariants' environment (pre, post, phase;
// CompileInvariants) and returns the reads of each of its conjuncts (&&,
// and the elements of an all() over a location, taken from state: an
// element per index or member it holds there, plus NewElement for one a
// patch may add). Each chain of selections and indexes from pre or post
// is a read of that location and everything below it (an index that is
// not a literal reads "*"), except size(), has() and the range of a
// comprehension, which read only a location's shape or presence; phase
// is no location. A rule that does not parse is an error (CEL's).
func InvariantConjunctReads(rule string, state any) ([][]InvariantRead, error) {
	env, err := invariantEnv()
	if err != nil {
		return nil, err
	}
	a, iss := env.Parse(rule)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	w := &readWalker{state: state}
	return w.conjuncts(a.NativeRep().Expr(), nil), nil
}

// readScope binds comprehension variables to the locations they stand for
// (nil: a variable that stands for no location, shadowing pre or post).
type readScope map[string]Pointer

func (s readScope) with(name string, p Pointer) readScope {
	out := make(readScope, len(s)+1)
	for k, v := range s {
		out[k] = v
	}
	out[name] = p
	return out
}

type readWalker struct {
	state any
	reads []InvariantRead
}

// conjuncts returns the reads of each conjunct of e.
func (w *readWalker) conjuncts(e celast.Expr, sc readScope) [][]InvariantRead {
	if e.Kind() == celast.CallKind && e.AsCall().FunctionName() == operators.LogicalAnd && len(e.AsCall().Args()) == 2 {
		args := e.AsCall().Args()
		return append(w.conjuncts(args[0], sc), w.conjuncts(args[1], sc)...)
	}
	if comp, pred, ok := allMacro(e); ok {
		if p, ok := w.path(comp.IterRange(), sc); ok {
			shared := w.collect(func() { w.indexArgs(comp.IterRange(), sc) })
			var out [][]InvariantRead
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
	return [][]InvariantRead{w.collect(func() { w.walk(e, sc) })}
}

// collect returns the reads f records.
func (w *readWalker) collect(f func()) []InvariantRead {
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
// over: the indexes or member names p holds in the state, and NewElement
// for those a patch may add; "*" alone when p is not a concrete location
// of the state.
func (w *readWalker) elements(p Pointer) []string {
	if slices.Contains(p, Wildcard) || slices.Contains(p, NewElement) {
		return []string{Wildcard}
	}
	v, ok := Lookup(w.state, p)
	if !ok {
		return []string{Wildcard}
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
		return []string{Wildcard}
	}
	return append(toks, NewElement)
}

func (w *readWalker) add(p Pointer, k ReadKind) {
	w.reads = append(w.reads, InvariantRead{Path: p, Kind: k})
}

// path returns the location an expression denotes when it is a chain of
// selections and indexes from pre, post or a bound comprehension variable.
func (w *readWalker) path(e celast.Expr, sc readScope) (Pointer, bool) {
	switch e.Kind() {
	case celast.IdentKind:
		name := e.AsIdent()
		if p, bound := sc[name]; bound {
			return p, p != nil
		}
		if name == "pre" || name == "post" {
			return Pointer{}, true
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
		tok := Wildcard
		if k := call.Args()[1]; k.Kind() == celast.IdentKind {
			// m[k], k ranging over the members of the map m: the
			// member k stands for.
			if q := sc[k.AsIdent()]; len(q) == len(p)+1 && q.Parent().Equal(p) {
				if v, ok := Lookup(w.state, p); ok {
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
func (w *readWalker) walk(e celast.Expr, sc readScope) {
	if p, ok := w.path(e, sc); ok {
		w.add(p, ReadValue)
		w.indexArgs(e, sc)
		return
	}
	switch e.Kind() {
	case celast.SelectKind:
		sel := e.AsSelect()
		if sel.IsTestOnly() { // has(x.f): whether x holds f
			if p, ok := w.path(sel.Operand(), sc); ok {
				w.add(p.Append(sel.FieldName()), ReadPresence)
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
				w.add(p, ReadShape)
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
		var inner readScope
		if p, ok := w.path(comp.IterRange(), sc); ok {
			// The range's shape; its elements are read through the
			// variables.
			w.add(p, ReadShape)
			w.indexArgs(comp.IterRange(), sc)
			inner = sc.with(comp.IterVar(), p.Append(Wildcard))
			if comp.HasIterVar2() {
				inner = inner.with(comp.IterVar2(), p.Append(Wildcard))
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
func (w *readWalker) indexArgs(e celast.Expr, sc readScope) {
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
