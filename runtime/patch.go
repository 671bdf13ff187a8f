package runtime

import (
	"context"
	"fmt"
	"maps"
	"reflect"
	"strconv"
	"unsafe"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
)

// applyError is an operation that cannot be applied (RFC 6902 §5). Its
// message names pointers from the proposal, never a value, a type or an
// array length from the state (the location may be outside the view).
type applyError struct {
	op   int
	ptr  Pointer
	code string
	msg  string
	// whole is set when the failure belongs to the patch as a whole, not
	// to operation op: which copy crosses the copy-size limit depends on
	// the sizes of its sources, which may lie outside the view.
	whole bool
}

func (e *applyError) Error() string {
	return fmt.Sprintf("operation %d (%s): %s", e.op, e.ptr, e.msg)
}

// span is a write to a run of array positions, [lo, hi] under array, made
// by an insertion or removal that shifts later elements. dash marks an
// append through "-": permitted by a write-region pattern ending in "-".
type span struct {
	op     int
	array  Pointer
	lo, hi int
	dash   bool
}

// trace records what a patch touched, operation by operation, as it was
// simulated against a document (RFC 6902 semantics).
type trace struct {
	writes  []locAccess             // single locations (and their subtrees)
	spans   []span                  // shifted array positions
	sources []locAccess             // copy/move "from" and test "path"
	depends []locAccess             // locations the patch needs to exist (array predecessor of an explicit insert)
	placed  []placement             // where each add, replace, copy and move put its value
	owned   map[unsafe.Pointer]bool // containers this simulation created (see own)
	roots   []any                   // the document after each operation the library does not apply (nil elsewhere)
}

// placement is the concrete location where an operation put a value, and
// whether the value was a literal of the proposal (add, replace) rather
// than taken from the state (copy, move). dash marks an append through
// "-": the last token of at is then the index "-" resolved to, which the
// proposal did not name (it is the array's length).
type placement struct {
	at      Pointer
	literal bool
	dash    bool
}

type locAccess struct {
	op  int
	ptr Pointer
}

// simulate applies ops to doc, copying containers on changed paths and
// sharing everything else, and records the footprint. It is the reference
// semantics of RFC 6902 against which the apply library's result is
// checked. maxCopy bounds the bytes copy operations may add in total;
// ctx, checked between operations, bounds the time.
func simulate(ctx context.Context, doc any, ops []Operation, maxCopy int64) (any, *trace, error) {
	w := &wholeDoc{root: doc}
	t, err := simulateOn(ctx, w, ops, maxCopy)
	if err != nil {
		return nil, t, err
	}
	return w.root, t, nil
}

// simDoc is what the reference semantics read and change: the whole
// document (wholeDoc) or the foci of a patch (forest, focus.go). Pointers
// are always the patch's own, from the document's root, so errors and the
// trace name the same locations either way.
type simDoc interface {
	// get resolves p (RFC 6901 §4), as getAt.
	get(p Pointer) (any, error)
	// update replaces the container holding p's last token (len(p) > 0)
	// with what f returns, as trace.update.
	update(t *trace, p Pointer, f func(parent any) (any, error)) error
	// setRoot replaces the whole document (a target of "").
	setRoot(v any)
	// snapshot is the whole document, for the operations the apply
	// library does not apply.
	snapshot() any
}

// wholeDoc is the document itself: every change copies the containers on
// its path from the root.
type wholeDoc struct{ root any }

func (w *wholeDoc) get(p Pointer) (any, error) { return getAt(w.root, p) }

func (w *wholeDoc) update(t *trace, p Pointer, f func(parent any) (any, error)) error {
	out, err := t.update(w.root, p, 0, f)
	if err != nil {
		return err
	}
	w.root = out
	return nil
}

func (w *wholeDoc) setRoot(v any) { w.root = v }
func (w *wholeDoc) snapshot() any { return w.root }

// simulateOn runs the reference semantics of ops on doc (see simulate).
func simulateOn(ctx context.Context, doc simDoc, ops []Operation, maxCopy int64) (*trace, error) {
	t := &trace{roots: make([]any, len(ops))}
	var copied int64
	for i, op := range ops {
		if i%64 == 63 && ctx.Err() != nil {
			return t, &applyError{op: i, ptr: op.Path, code: CodeLimitExceeded, msg: "the patch ran past the work-time limit"}
		}
		var err error
		switch op.Op {
		case OpTest:
			t.sources = append(t.sources, locAccess{i, op.Path})
			var v any
			if v, err = doc.get(op.Path); err != nil {
				err = asApplyError(err, i, op.Path)
			} else if !equalJSON(v, op.Value) {
				err = &applyError{op: i, ptr: op.Path, code: CodeTestFailed, msg: "test failed: the value differs"}
			}
		case OpAdd:
			err = t.add(doc, i, op.Path, op.Value, true)
		case OpReplace:
			err = t.replace(doc, i, op.Path, op.Value)
		case OpRemove:
			err = t.remove(doc, i, op.Path)
		case OpCopy, OpMove:
			t.sources = append(t.sources, locAccess{i, op.From})
			var v any
			if v, err = doc.get(op.From); err != nil {
				err = asApplyError(err, i, op.From)
				break
			}
			if op.Op == OpCopy {
				n, ok := sizeUpTo(v, maxCopy-copied)
				if !ok {
					err = &applyError{op: i, ptr: op.From, code: CodeLimitExceeded, msg: copyLimitMessage(maxCopy), whole: true}
					break
				}
				copied += n
				t.disown() // v may now be reachable from two places
				err = t.add(doc, i, op.Path, v, false)
				t.disown()
				break
			}
			if op.Path.HasPrefix(op.From) && len(op.Path) > len(op.From) {
				err = &applyError{op: i, ptr: op.From, code: CodeDoesNotApply, msg: fmt.Sprintf("cannot move %s into its own child %s", op.From, op.Path)}
				break
			}
			if op.Path.Equal(op.From) {
				// RFC 6902 §4.4: moving a location onto itself changes
				// nothing; it still counts as a write of that location.
				t.writes = append(t.writes, locAccess{i, op.Path})
				break
			}
			if err = t.remove(doc, i, op.From); err == nil {
				err = t.add(doc, i, op.Path, v, false)
			}
		default:
			err = &applyError{op: i, ptr: op.Path, code: CodeMalformed, msg: "unknown op"}
		}
		if err != nil {
			return t, err
		}
		if op.Op != OpTest && !libraryOp(op) {
			t.roots[i] = doc.snapshot() // the apply bridge needs the document here
			t.disown()                  // so later operations must not change it
		}
	}
	return t, nil
}

// navError is a failure to resolve a pointer; asApplyError adds the
// operation.
type navError struct {
	code string
	msg  string
}

func (e *navError) Error() string { return e.msg }

func asApplyError(err error, op int, p Pointer) error {
	if ne, ok := err.(*navError); ok {
		return &applyError{op: op, ptr: p, code: ne.code, msg: ne.msg}
	}
	return err
}

// getAt resolves p in doc (RFC 6901 §4). Tokens that meet an array must be
// valid indexes of existing elements.
func getAt(doc any, p Pointer) (any, error) { return getAtFrom(doc, p, 0) }

// getAtFrom resolves the tokens of p from index start on, doc being the
// value at p[:start]; errors name locations by p's own tokens. doc may
// hold overlays (internal/overlay).
func getAtFrom(doc any, p Pointer, start int) (any, error) {
	cur := doc
	for i := start; i < len(p); i++ {
		tok := p[i]
		if n, ok := cur.(*overlay.Node); ok {
			if overlay.IsArray(n) {
				if _, err := arrayIndex(tok, overlay.Len(n), false, p[:i+1]); err != nil {
					return nil, err
				}
			}
			v, found := overlay.Child(n, tok)
			if !found {
				return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s does not exist", p[:i+1])}
			}
			cur = v
			continue
		}
		switch c := cur.(type) {
		case map[string]any:
			v, ok := c[tok]
			if !ok {
				return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s does not exist", p[:i+1])}
			}
			cur = v
		case []any:
			idx, err := arrayIndex(tok, len(c), false, p[:i+1])
			if err != nil {
				return nil, err
			}
			cur = c[idx]
		default:
			return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s is not an object or array", p[:i])}
		}
	}
	return cur, nil
}

// arrayIndex checks an index token against an array of length n. With
// insert, the index may equal n; "-" is never accepted here.
func arrayIndex(tok string, n int, insert bool, at Pointer) (int, error) {
	if tok == AppendToken {
		return 0, &navError{CodeDoesNotApply, fmt.Sprintf("%s: \"-\" names no element; it is valid only as the last token of an add, move or copy path", at)}
	}
	idx, err := ParseIndex(tok)
	if err != nil {
		return 0, &navError{CodeDoesNotApply, fmt.Sprintf("%s: %v", at, err)}
	}
	limit := n - 1
	if insert {
		limit = n
	}
	if idx > limit {
		return 0, &navError{CodeDoesNotApply, fmt.Sprintf("%s: index %d is out of range", at, idx)}
	}
	return idx, nil
}

// Containers this simulation created are referenced from nowhere else,
// so later operations of the same patch change them in place instead of
// copying them again: a patch costs O(operations × depth), not
// O(operations × container size). Ownership is dropped whenever a
// container could become shared: after a copy (which places one value at
// two locations) and after a snapshot kept in roots.

// ownKey identifies a container: the map, or a slice's backing array. An
// unsafe.Pointer key keeps the container alive, so its address cannot be
// reused by another while the simulation runs.
func ownKey(c any) unsafe.Pointer {
	switch x := c.(type) {
	case map[string]any:
		return reflect.ValueOf(x).UnsafePointer()
	case []any:
		if cap(x) == 0 {
			return nil
		}
		return unsafe.Pointer(unsafe.SliceData(x))
	}
	return nil
}

func (t *trace) own(c any) {
	if k := ownKey(c); k != nil {
		if t.owned == nil {
			t.owned = map[unsafe.Pointer]bool{}
		}
		t.owned[k] = true
	}
}

func (t *trace) owns(c any) bool {
	k := ownKey(c)
	return k != nil && t.owned[k]
}

func (t *trace) disown() { clear(t.owned) }

// writableMap returns c itself if this simulation owns it, else an owned
// copy.
func (t *trace) writableMap(c map[string]any) map[string]any {
	if t.owns(c) {
		return c
	}
	m := maps.Clone(c)
	t.own(m)
	return m
}

// writableSlice returns c itself if this simulation owns it, else an
// owned copy with room for extra more elements.
func (t *trace) writableSlice(c []any, extra int) []any {
	if t.owns(c) {
		return c
	}
	a := make([]any, len(c), len(c)+extra)
	copy(a, c)
	t.own(a)
	return a
}

// update replaces the container holding p's last token with what f
// returns, making the containers on the path from the root writable.
func (t *trace) update(node any, p Pointer, depth int, f func(parent any) (any, error)) (any, error) {
	if depth == len(p)-1 {
		return f(node)
	}
	tok := p[depth]
	switch c := node.(type) {
	case map[string]any:
		child, ok := c[tok]
		if !ok {
			return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s does not exist", p[:depth+1])}
		}
		nc, err := t.update(child, p, depth+1, f)
		if err != nil {
			return nil, err
		}
		m := t.writableMap(c)
		m[tok] = nc
		return m, nil
	case []any:
		idx, err := arrayIndex(tok, len(c), false, p[:depth+1])
		if err != nil {
			return nil, err
		}
		nc, err := t.update(c[idx], p, depth+1, f)
		if err != nil {
			return nil, err
		}
		a := t.writableSlice(c, 0)
		a[idx] = nc
		return a, nil
	default:
		return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s is not an object or array", p[:depth])}
	}
}

func notContainer(p Pointer, _ any) error {
	return &navError{CodeDoesNotApply, fmt.Sprintf("%s is not an object or array", p.Parent())}
}

// add performs RFC 6902 §4.1 and records its writes.
func (t *trace) add(doc simDoc, op int, p Pointer, val any, literal bool) error {
	if len(p) == 0 {
		t.writes = append(t.writes, locAccess{op, p})
		t.placed = append(t.placed, placement{at: p, literal: literal})
		doc.setRoot(val)
		return nil
	}
	last := p.Last()
	err := doc.update(t, p, func(parent any) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			m := t.writableMap(c)
			m[last] = val
			t.writes = append(t.writes, locAccess{op, p})
			t.placed = append(t.placed, placement{at: p, literal: literal})
			return m, nil
		case []any:
			n := len(c)
			idx := n
			dash := last == AppendToken
			if !dash {
				var err error
				if idx, err = arrayIndex(last, n, true, p); err != nil {
					return nil, err
				}
				if idx > 0 {
					t.depends = append(t.depends, locAccess{op, p.Parent().Append(strconv.Itoa(idx - 1))})
				}
			}
			a := t.writableSlice(c, 1)
			a = append(a, nil)
			copy(a[idx+1:], a[idx:])
			a[idx] = val
			t.own(a) // append may have moved the backing array
			t.spans = append(t.spans, span{op: op, array: p.Parent(), lo: idx, hi: n, dash: dash})
			t.placed = append(t.placed, placement{p.Parent().Append(strconv.Itoa(idx)), literal, dash})
			return a, nil
		default:
			return nil, notContainer(p, parent)
		}
	})
	return asApplyError(err, op, p)
}

// remove performs RFC 6902 §4.2 and records its writes.
func (t *trace) remove(doc simDoc, op int, p Pointer) error {
	if len(p) == 0 {
		return &applyError{op: op, ptr: p, code: CodeDoesNotApply, msg: "cannot remove the whole document"}
	}
	last := p.Last()
	err := doc.update(t, p, func(parent any) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			if _, ok := c[last]; !ok {
				return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s does not exist", p)}
			}
			m := t.writableMap(c)
			delete(m, last)
			t.writes = append(t.writes, locAccess{op, p})
			return m, nil
		case []any:
			idx, err := arrayIndex(last, len(c), false, p)
			if err != nil {
				return nil, err
			}
			a := t.writableSlice(c, 0)
			copy(a[idx:], a[idx+1:])
			a[len(a)-1] = nil
			a = a[:len(a)-1]
			t.spans = append(t.spans, span{op: op, array: p.Parent(), lo: idx, hi: len(c) - 1})
			return a, nil
		default:
			return nil, notContainer(p, parent)
		}
	})
	return asApplyError(err, op, p)
}

// replace performs RFC 6902 §4.3 and records its write.
func (t *trace) replace(doc simDoc, op int, p Pointer, val any) error {
	t.writes = append(t.writes, locAccess{op, p})
	t.placed = append(t.placed, placement{at: p, literal: true})
	if len(p) == 0 {
		doc.setRoot(val)
		return nil
	}
	last := p.Last()
	err := doc.update(t, p, func(parent any) (any, error) {
		switch c := parent.(type) {
		case map[string]any:
			if _, ok := c[last]; !ok {
				return nil, &navError{CodeDoesNotApply, fmt.Sprintf("%s does not exist", p)}
			}
			m := t.writableMap(c)
			m[last] = val
			return m, nil
		case []any:
			idx, err := arrayIndex(last, len(c), false, p)
			if err != nil {
				return nil, err
			}
			a := t.writableSlice(c, 0)
			a[idx] = val
			return a, nil
		default:
			return nil, notContainer(p, parent)
		}
	})
	return asApplyError(err, op, p)
}

// maxSpanExpand is the longest run of shifted array positions a footprint
// lists one by one; a longer run is summarised as the pattern array/*.
const maxSpanExpand = 64

// footprint turns a trace into a Footprint: writes and shifted array
// positions, sources, and reads (sources plus the locations the patch
// depends on). Pointers are concrete, except that a run of more than
// maxSpanExpand shifted positions becomes array/* (a sound
// over-approximation), so the size does not grow with the arrays.
func (t *trace) footprint() Footprint {
	var w, s, r []Pointer
	for _, a := range t.writes {
		w = append(w, a.ptr)
	}
	for _, sp := range t.spans {
		if sp.hi-sp.lo >= maxSpanExpand {
			w = append(w, sp.array.Append(Wildcard))
			continue
		}
		for i := sp.lo; i <= sp.hi; i++ {
			w = append(w, sp.array.Append(strconv.Itoa(i)))
		}
	}
	for _, a := range t.sources {
		s = append(s, a.ptr)
		r = append(r, a.ptr)
	}
	for _, a := range t.depends {
		r = append(r, a.ptr)
	}
	return Footprint{Read: ViewRegion{Include: RegionOf(r...)}, Write: RegionOf(w...), Source: RegionOf(s...)}
}

// PatchFootprint computes the footprint of a patch against a document
// (RFC 6902 §4): add, replace and remove write path, and an
// insertion or removal inside an array also writes every later index
// (an append through "-" writes the new last index); copy reads from and
// writes path; move reads and writes from and writes path; test reads
// path. Read also holds the element before an explicit array insertion
// point, whose existence the insertion needs. Pointers are concrete, but
// a run of more than 64 shifted positions is given as the array's "*"
// pattern. It returns the error that makes the patch inapplicable, if
// any.
func PatchFootprint(doc *Document, ops []Operation) (Footprint, error) {
	_, t, err := simulate(context.Background(), doc.Value(), ops, 1<<62)
	if err != nil {
		return Footprint{}, err
	}
	return t.footprint(), nil
}

// ownLocation reports whether p lies in a value the proposal wrote as a
// literal (add or replace), with no value taken from the state placed
// over or under it, and no insertion or removal that shifted elements of
// an array above it (a shift can slide other data into the literal's
// position): every name on the way down came from the actor.
func (t *trace) ownLocation(p Pointer) bool {
	for _, sp := range t.spans {
		if sp.lo < sp.hi && len(p) > len(sp.array) && p.HasPrefix(sp.array) {
			return false
		}
	}
	own := false
	for _, pl := range t.placed {
		if pl.literal && p.HasPrefix(pl.at) {
			own = true
		}
		if !pl.literal && (p.HasPrefix(pl.at) || pl.at.HasPrefix(p)) {
			return false
		}
	}
	return own
}
