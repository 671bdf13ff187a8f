package schemaindex

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Whole validation on every core. The first step on a state Validates
// the whole state once (Document.satisfies), which costs what the state
// costs; this splits that validation where the schema's analysis
// (index.go) shows the split gives the same answer, and runs the
// parts at once.
//
// Take the longest array A of the state that hangs from the root through
// objects, of n elements, and the schemas that apply to it, S (found as
// holds finds the schemas of a location). When every schema on the way
// to A and every schema of S is local in the sense of index.go
// (its verdict on a container depends on its members only through the
// schemas it applies to them, and on its member names and length), when
// no schema of S looks at A's elements together (uniqueItems, contains)
// and m covers what S says of the first elements and of the length
// (prefixItems, an items array, minItems), then the state satisfies the
// schema exactly when
//
//  1. the state with A cut to its first m elements satisfies it,
//  2. A has no more elements than any maxItems of S allows, and
//  3. each element from m on satisfies the schemas S applies to it (the
//     same schemas for each: items, additionalItems, unevaluatedItems).
//
// The elements are validated by the schema library itself, element by
// element, in as many parts as there are processors, with the cut state;
// an element schema made of type, required and properties only accepts
// an element without the library when a few look-ups show it satisfies
// it (quick.go), and leaves any other element to the library.
//
// The state may be a parsed state's lazy tree (overlay.Source): then the
// containers on the way are read without building the rest, the quick
// schemas read an element's text (Quick.AcceptsText, through
// ElemTexter) and only the elements they do not accept are built, for
// the library; so is the cut state. The verdict is the same: a lazy
// tree reads as the plain value it stands for.

// ElemTexter is a lazy array (an overlay.Source) that gives the compact
// JSON text of an element without building it.
type ElemTexter interface {
	ElemText(i int) []byte
}

// minShardItems is the length from which an array is validated in parts.
const minShardItems = 1024

// SatisfiesWhole reports whether v (a plain value, or a lazy tree:
// overlay.Lazy) satisfies the schema of x, validating in parts when that
// gives the same answer, else whole. A lazy tree is split even on one
// core: its elements then need not be built.
func (x *Index) SatisfiesWhole(v any) bool {
	workers := runtime.GOMAXPROCS(0)
	if workers > 1 || overlay.SourceOf(v) != nil {
		if ok, split := x.ValidateSplit(v, workers, minShardItems); split {
			return ok
		}
	}
	return Validates(x.root, overlay.Plain(v))
}

// ValidateSplit Validates v in parts when its longest array has at least
// minItems elements; split is false when it does not.
func (x *Index) ValidateSplit(v any, workers, minItems int) (ok, split bool) {
	path, arr, count := longestArray(v, 3)
	if count < minItems {
		return false, false
	}
	set := x.closure([]*jsonschema.Schema{x.root})
	for _, tok := range path {
		for _, s := range set {
			if !x.nodes[s].ancestorLocal {
				return false, false
			}
		}
		set = x.closure(x.route(set, tok, true))
	}
	m := 1
	for _, s := range set {
		n := x.nodes[s]
		if !n.ancestorLocal || n.recheck != nil || s.Bool != nil {
			return false, false
		}
		if s.MinItems != nil {
			m = max(m, *s.MinItems)
		}
		m = max(m, len(s.PrefixItems))
		if items, ok := s.Items.([]*jsonschema.Schema); ok {
			m = max(m, len(items))
		}
		if s.MaxItems != nil && count > *s.MaxItems {
			return false, true
		}
	}
	if count < 2*m {
		return false, false
	}
	elem := x.route(set, strconv.Itoa(m), false)
	quick := make([]*Quick, len(elem))
	for k, s := range elem {
		quick[k] = NewQuick(s)
	}

	first := make([]any, m)
	for i := range m {
		first[i] = element(arr, i)
	}
	cut := withArray(v, path, first)
	texter, _ := overlay.SourceOf(arr).(ElemTexter)
	var failed atomic.Bool
	var wg sync.WaitGroup
	check := func(lo, hi int) {
		defer wg.Done()
		for i := lo; i < hi && !failed.Load(); i++ {
			var e any
			built := false
			for k, s := range elem {
				q := quick[k]
				if q != nil && texter != nil && q.AcceptsText(texter.ElemText(i)) {
					continue
				}
				if !built {
					e, built = element(arr, i), true
				}
				if q != nil && q.Accepts(e) {
					continue
				}
				if !Validates(s, e) {
					failed.Store(true)
					return
				}
			}
		}
	}
	rest := count - m
	parts := workers
	wg.Add(parts + 1)
	go func() {
		defer wg.Done()
		if !Validates(x.root, cut) {
			failed.Store(true)
		}
	}()
	for k := range parts {
		go check(m+rest*k/parts, m+rest*(k+1)/parts)
	}
	wg.Wait()
	return !failed.Load(), true
}

// element is the plain value of element i of the array arr (plain or
// lazy).
func element(arr any, i int) any {
	if a, ok := arr.([]any); ok {
		return a[i]
	}
	c, _ := overlay.Child(arr, strconv.Itoa(i))
	return overlay.Plain(c)
}

// longestArray returns the longest array in v reached from the root
// through objects only, within depth members (the first by location
// among equals), and its location; the root itself when it is an array.
// v may be a lazy tree: it returns the array (plain or lazy, nil when
// there is none) and its length.
func longestArray(v any, depth int) ([]string, any, int) {
	if overlay.IsArray(v) {
		return []string{}, v, overlay.Len(v)
	}
	var best any
	bestN := 0
	var bestAt []string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		if !overlay.IsObject(v) || len(at) >= depth {
			return
		}
		visit := func(k string, c any) {
			switch {
			case overlay.IsArray(c):
				n := overlay.Len(c)
				if n > bestN || n == bestN && best != nil && slices.Compare(appendToken(at, k), bestAt) < 0 {
					best, bestN, bestAt = c, n, appendToken(at, k)
				}
			case overlay.IsObject(c):
				walk(c, appendToken(at, k))
			}
		}
		if obj, ok := v.(map[string]any); ok {
			for k, c := range obj {
				visit(k, c)
			}
			return
		}
		for _, k := range overlay.Keys(v) {
			c, _ := overlay.Child(v, k)
			visit(k, c)
		}
	}
	walk(v, []string{})
	return bestAt, best, bestN
}

// withArray returns v with the array at p (reached through objects)
// replaced by a; the objects on the way are copied, v is not changed. A
// lazy object on the way is built, but for the member on p.
func withArray(v any, p []string, a []any) any {
	if len(p) == 0 {
		return a
	}
	if m, ok := v.(map[string]any); ok {
		obj := maps.Clone(m)
		obj[p[0]] = withArray(obj[p[0]], p[1:], a)
		return obj
	}
	keys := overlay.Keys(v)
	obj := make(map[string]any, len(keys))
	for _, k := range keys {
		c, _ := overlay.Child(v, k)
		if k == p[0] {
			obj[k] = withArray(c, p[1:], a)
		} else {
			obj[k] = overlay.Plain(c)
		}
	}
	return obj
}

// appendToken returns a new path: p and then tok.
func appendToken(p []string, tok string) []string {
	return append(slices.Clip(p), tok)
}
