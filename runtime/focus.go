package runtime

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"

	"github.com/patchbench/patchbench/internal/jsonskip"
	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// The footprint path: apply a patch at its foci, not to the whole state.
//
// A focus is a subtree a patch reads or writes: the container each
// operation changes (the parent of an add, remove or replace path, of a
// copy or move target and of a move's from), or only the value it
// replaces when the container keeps its members (planFoci), and the value
// each copy's from and each test's path reads. The foci of a patch are
// the outermost of these; no two overlap, no operation changes the
// members of a container above a focus, and every operation's pointers
// lie in a focus. Then:
//
//  1. the reference semantics (simulate) run on the foci alone, with the
//     patch's own pointers, so decisions, messages and the footprint are
//     those of the whole document;
//  2. evanphx/json-patch applies the patch, its pointers rewritten to a
//     small document holding just the foci, under the same options and in
//     the same batches as on the whole document;
//  3. the reference result is checked against the library's at each
//     focus, and the state after the patch is the state before with the
//     foci put back: its value shares everything else (overlays), and its
//     text is the old text with the foci's spans replaced, which is what
//     the library writes for the whole document when the containers above
//     the foci spell their member names as the library does;
//  4. schema and invariants run on that state, schema incrementally when
//     the contract's schema allows it (internal/schemaindex).
//
// Every case this does not cover takes the whole-document path, today's
// code, unchanged: a target of the whole document (""), an operation the
// library does not apply (libraryOp), a patch that adds, removes or moves
// a member of the root container (one that only replaces root members'
// values has them as foci), a focus that does not exist in the state,
// member names above a focus that the library would re-encode, a state
// nested deeper than the contract allows or whose text and value could
// differ (NewDocument with strings that are not UTF-8), an error of the
// library, and a disagreement between the library and the reference.
// pathChoice names the reason.

// pathChoice says which path a verification took, and why.
type pathChoice string

const (
	pathFootprint      pathChoice = "footprint"
	pathWholeDisabled  pathChoice = "whole: footprint path disabled"
	pathWholeOp        pathChoice = "whole: an operation the apply library does not apply"
	pathWholeRoot      pathChoice = "whole: the patch changes the root container"
	pathWholeState     pathChoice = "whole: the state's text cannot be spliced"
	pathWholeDepth     pathChoice = "whole: the state nests deeper than the contract allows"
	pathWholeFocus     pathChoice = "whole: a focus does not exist in the state"
	pathWholeNames     pathChoice = "whole: member names above a focus would be re-encoded"
	pathWholeLibrary   pathChoice = "whole: the apply library failed on the foci"
	pathWholeMismatch  pathChoice = "whole: the library and the reference disagree at a focus"
	pathWholeMalformed pathChoice = "whole: the library's result could not be split"
)

// focus is one subtree of the state that a patch reads or writes.
type focus struct {
	path    Pointer
	written bool // an operation changes something in it
	lib     bool // an operation the library applies reads or writes in it
	pre     any  // its value before the patch (plain)
	value   any  // its value in the reference simulation
	oldText []byte
	newText []byte
	got     any // the library's result, decoded
}

// planFoci returns a patch's foci in the state tree, in pointer order, or
// the reason there are none to work with.
//
// An operation that replaces the value of an existing member or element
// (replace; add, copy or move onto an existing member of an object) keeps
// the container's members and their order: when every operation on a
// container's members is of that kind, the container does not change as
// a container, and each replaced value is a focus of its own (a slot),
// given to the library as a member of the small document and replaced
// there. Otherwise (a member added, removed or moved away, an element
// inserted or appended) the container is the focus.
func planFoci(ops []Operation, tree any) ([]*focus, pathChoice) {
	type anchor struct {
		p          Pointer
		write, lib bool
	}
	// reshaped holds the containers whose members an operation adds,
	// removes or moves.
	reshaped := map[string]bool{}
	valueWrite := func(p Pointer) bool { // an add, copy or move onto p
		c, ok := overlay.Lookup(tree, p.Parent())
		if !ok || !overlay.IsObject(c) {
			return false
		}
		_, exists := overlay.Child(c, p.Last())
		return exists
	}
	for _, op := range ops {
		if op.Op != OpTest && !libraryOp(op) {
			return nil, pathWholeOp
		}
		switch op.Op {
		case OpRemove:
			reshaped[op.Path.Parent().String()] = true
		case OpAdd, OpCopy:
			if !valueWrite(op.Path) {
				reshaped[op.Path.Parent().String()] = true
			}
		case OpMove:
			reshaped[op.From.Parent().String()] = true
			if !valueWrite(op.Path) {
				reshaped[op.Path.Parent().String()] = true
			}
		}
	}
	target := func(p Pointer) anchor {
		if reshaped[p.Parent().String()] {
			return anchor{p.Parent(), true, true}
		}
		return anchor{p, true, true}
	}
	var as []anchor
	for _, op := range ops {
		switch op.Op {
		case OpTest:
			as = append(as, anchor{p: op.Path})
		case OpAdd, OpReplace, OpRemove:
			as = append(as, target(op.Path))
		case OpCopy:
			as = append(as, target(op.Path), anchor{op.From, false, true})
		case OpMove:
			as = append(as, target(op.Path), anchor{op.From.Parent(), true, true})
		}
	}
	slices.SortStableFunc(as, func(a, b anchor) int { return a.p.Compare(b.p) })
	var foci []*focus
	for _, a := range as {
		if len(a.p) == 0 {
			return nil, pathWholeRoot
		}
		if n := len(foci); n > 0 && a.p.HasPrefix(foci[n-1].path) {
			foci[n-1].written = foci[n-1].written || a.write
			foci[n-1].lib = foci[n-1].lib || a.lib
			continue
		}
		foci = append(foci, &focus{path: a.p, written: a.write, lib: a.lib})
	}
	return foci, pathFootprint
}

// forest is the simDoc of the footprint path: the foci, each changed in
// place of the whole document.
type forest struct{ foci []*focus }

func (f *forest) find(p Pointer) *focus {
	for _, fc := range f.foci {
		if p.HasPrefix(fc.path) {
			return fc
		}
	}
	panic(fmt.Sprintf("runtime: %s lies in no focus", p))
}

func (f *forest) get(p Pointer) (any, error) {
	fc := f.find(p)
	return getAtFrom(fc.value, p, len(fc.path))
}

func (f *forest) update(t *trace, p Pointer, fn func(parent any) (any, error)) error {
	fc := f.find(p)
	if len(p) == len(fc.path) {
		// A slot: the operation replaces the focus's value in a
		// container that keeps its members (planFoci), which stands here
		// as an object holding just that member.
		out, err := fn(map[string]any{p.Last(): fc.value})
		if err != nil {
			return err
		}
		fc.value = out.(map[string]any)[p.Last()]
		return nil
	}
	out, err := t.update(fc.value, p, len(fc.path), fn)
	if err != nil {
		return err
	}
	fc.value = out
	return nil
}

func (f *forest) setRoot(any)   { panic("runtime: the footprint path never replaces the root") }
func (f *forest) snapshot() any { return nil }

// applyFoci applies the library's operations of ops to the foci with the
// apply library: one small document {"0": focus, "1": focus, ...}, the
// operations' pointers rewritten into it, in the batches applyLibrary
// would use. It returns each library focus's new text.
func applyFoci(foci []*focus, ops []Operation, lim Limits) ([][]byte, error) {
	var lib []*focus
	var doc []byte
	doc = append(doc, '{')
	for _, fc := range foci {
		if !fc.lib {
			continue
		}
		if len(lib) > 0 {
			doc = append(doc, ',')
		}
		doc = append(doc, '"')
		doc = strconv.AppendInt(doc, int64(len(lib)), 10)
		doc = append(doc, '"', ':')
		doc = append(doc, fc.oldText...)
		lib = append(lib, fc)
	}
	doc = append(doc, '}')
	rewrite := func(p Pointer) Pointer {
		for i, fc := range lib {
			if p.HasPrefix(fc.path) {
				q := make(Pointer, 0, 1+len(p)-len(fc.path))
				return append(append(q, strconv.Itoa(i)), p[len(fc.path):]...)
			}
		}
		panic(fmt.Sprintf("runtime: %s lies in no focus", p))
	}
	opts := libraryOptions(lim)
	var batch []Operation
	flush := func() (err error) {
		doc, err = applyBatch(doc, batch, opts)
		batch = batch[:0]
		return err
	}
	for _, op := range ops {
		if !libraryOp(op) {
			if err := flush(); err != nil { // a test: the whole-document path flushes here too
				return nil, err
			}
			continue
		}
		r := op
		r.Path = rewrite(op.Path)
		if op.From != nil {
			r.From = rewrite(op.From)
		}
		batch = append(batch, r)
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return splitFoci(doc, len(lib))
}

// splitFoci returns the n member values of {"0": ..., "1": ..., ...}.
func splitFoci(doc []byte, n int) ([][]byte, error) {
	bad := fmt.Errorf("runtime: unexpected shape of the library's result on the foci")
	out := make([][]byte, n)
	if len(doc) < 2 || doc[0] != '{' {
		return nil, bad
	}
	i := 1
	for k := 0; k < n; k++ {
		key := `"` + strconv.Itoa(k) + `":`
		if !bytes.HasPrefix(doc[i:], []byte(key)) {
			return nil, bad
		}
		i += len(key)
		j := jsonskip.Value(doc, i)
		if j < 0 || j >= len(doc) {
			return nil, bad
		}
		out[k] = doc[i:j]
		want := byte(',')
		if k == n-1 {
			want = '}'
		}
		if doc[j] != want {
			return nil, bad
		}
		i = j + 1
	}
	if i != len(doc) {
		return nil, bad
	}
	return out, nil
}

// maxOverlayNodes bounds the overlay a committed state keeps over a plain
// value; past it the next commit builds the plain value first (an
// amortised cost).
const maxOverlayNodes = 256

// applyAtFoci is the apply stage on the footprint path. It returns
// pathFootprint with the state after the patch, or with nil when a gate
// of the stage rejected the patch (recorded in d); any other pathChoice
// leaves d as it was, and the whole-document path (applyWhole) must run.
func (c *Contract) applyAtFoci(ctx context.Context, state *Document, ops []Operation, opts VerifyOptions, d *Decision) (*applied, pathChoice, error) {
	if c.wholeOnly {
		return nil, pathWholeDisabled, nil
	}
	model := state.text()
	if model == nil || !state.consistent {
		return nil, pathWholeState, nil
	}
	if state.maxDepth() > c.limits.MaxDepth {
		return nil, pathWholeDepth, nil
	}
	tree := state.tree()
	if !overlay.IsObject(tree) && !overlay.IsArray(tree) {
		return nil, pathWholeRoot, nil
	}
	foci, why := planFoci(ops, tree)
	if why != pathFootprint {
		return nil, why, nil
	}
	if why := readFoci(foci, tree, model); why != pathFootprint {
		return nil, why, nil
	}

	// The reference semantics on the foci.
	t, err := simulateOn(ctx, &forest{foci}, ops, c.limits.MaxCopyBytes)
	if err != nil {
		return nil, pathFootprint, c.applyFailed(ctx, d, ops, err)
	}
	fp := t.footprint()
	if !c.shiftChecks(d, ops, opts, t) {
		d.Footprint = &fp
		return nil, pathFootprint, nil
	}

	// The library on the foci, then the checks the whole-document path
	// makes, in its order: size, decoding, agreement and depth.
	libOps := slices.ContainsFunc(ops, libraryOp)
	size, changes, why := applyFociText(foci, ops, c.limits, model.size)
	if why != pathFootprint {
		return nil, why, nil
	}
	var next *textModel
	if len(changes) > 0 {
		var ok bool
		if next, ok = model.with(changes); !ok {
			return nil, pathWholeMalformed, nil
		}
	}
	if !libOps && state.lazy == nil {
		size = len(bytes.TrimLeft(state.raw, " \t\r\n"))
	}
	d.Footprint = &fp
	if !c.withinSize(d, ops, size) {
		return nil, pathFootprint, nil
	}
	for _, fc := range foci {
		fc.got = fc.pre
		if fc.textChanged() {
			if fc.got, err = decodeFast(fc.newText); err != nil {
				c.failDepth(d, ops)
				return nil, pathFootprint, nil
			}
		}
	}
	tooDeep := false
	for _, fc := range foci {
		if !fc.written && !fc.textChanged() {
			continue // read only, and the library left its text as it was
		}
		if _, ok, deep := crossCheck(fc.value, fc.got, c.limits.MaxDepth-len(fc.path)); deep {
			tooDeep = true
		} else if !ok {
			d.Footprint = nil
			return nil, pathWholeMismatch, nil
		}
	}
	if tooDeep {
		c.failDepth(d, ops)
		return nil, pathFootprint, nil
	}
	d.pass(GateApply)

	post, changed, nd := committedAtFoci(state, tree, foci, model, next, libOps)
	return &applied{
		pre: tree, post: post, trace: t, footprint: &fp, next: nd,
		incremental: func() bool {
			d.incremental = c.incremental != nil && state.satisfies(c.schema, c.incremental) && c.incremental.Holds(post, changed)
			return d.incremental
		},
		carry: func(next *Document, checked *jsonschema.Schema) {
			state.carryValidity(next, post, changed, checked)
		},
	}, pathFootprint, nil
}

// committedAtFoci builds the state after a patch applied at its foci:
// its value is the state before with the foci put back (overlays), its
// text the old text with the foci's spans replaced (next, nil when no
// text changed); changed lists the written foci whose text changed, for
// the incremental schema gate.
func committedAtFoci(state *Document, tree any, foci []*focus, model, next *textModel, libOps bool) (post any, changed []schemaindex.Change, nd *Document) {
	post = tree
	if overlay.Size(post) > maxOverlayNodes {
		post = state.Value()
	}
	depth := state.maxDepth()
	for _, fc := range foci {
		if fc.textChanged() {
			post = overlay.Set(post, fc.path, fc.got)
			depth = max(depth, len(fc.path)+valueDepth(fc.got))
			if fc.written {
				changed = append(changed, schemaindex.Change{Path: fc.path, Value: fc.got})
			}
		}
	}
	switch {
	case !libOps && state.lazy == nil:
		// The library was given nothing: the whole-document path keeps
		// the text as it was, leading white space trimmed.
		nd = &Document{raw: bytes.TrimLeft(state.raw, " \t\r\n"), value: state.plain(), prep: model}
	case next == nil:
		nd = &Document{lazy: &lazyDoc{tree: tree, text: model}}
	default:
		nd = &Document{lazy: &lazyDoc{tree: post, text: next.settled()}}
	}
	nd.depth, nd.consistent = depth, true
	return post, changed, nd
}

// readFoci fills in each focus's value before the patch and, for the foci
// the library is given, its text; pathFootprint when every focus exists
// and its text can be given as it stands.
func readFoci(foci []*focus, tree any, model *textModel) pathChoice {
	for _, fc := range foci {
		v, err := getAt(tree, fc.path)
		if err != nil {
			return pathWholeFocus
		}
		fc.pre = overlay.Plain(v)
		fc.value = fc.pre
		if fc.lib {
			text, canon, ok := model.valueText(fc.path)
			if !ok {
				return pathWholeFocus
			}
			if !canon {
				return pathWholeNames
			}
			fc.oldText = text
		}
	}
	return pathFootprint
}

// applyFociText runs the apply library on the foci (when ops has an
// operation it applies) and returns the size of the state's text after
// the patch, from size before, and the text changes; pathWholeLibrary
// when the library failed.
func applyFociText(foci []*focus, ops []Operation, lim Limits, size int) (int, []textChange, pathChoice) {
	if !slices.ContainsFunc(ops, libraryOp) {
		return size, nil, pathFootprint
	}
	texts, err := applyFoci(foci, ops, lim)
	if err != nil {
		return 0, nil, pathWholeLibrary
	}
	var changes []textChange
	k := 0
	for _, fc := range foci {
		if !fc.lib {
			continue
		}
		fc.newText = texts[k]
		k++
		if fc.textChanged() {
			changes = append(changes, textChange{path: fc.path, old: fc.oldText, new: fc.newText})
			size += len(fc.newText) - len(fc.oldText)
		}
	}
	return size, changes, pathFootprint
}

// textChanged reports whether the library was given the focus and wrote
// it a text other than its old one.
func (fc *focus) textChanged() bool {
	return fc.lib && !bytes.Equal(fc.newText, fc.oldText)
}

// noteValid records, on a committed state, that it satisfies the schema
// the schema gate checked.
func (c *Contract) noteValid(nd *Document, opts VerifyOptions) {
	if s := c.noteSchema(opts); s != nil {
		nd.valid.Store(s, validity{true, c.incremental})
	}
}

// noteSchema is the schema a commit under opts is known to satisfy, or nil.
func (c *Contract) noteSchema(opts VerifyOptions) *jsonschema.Schema {
	if opts.Gates.Schema {
		return c.schema
	}
	return nil
}
