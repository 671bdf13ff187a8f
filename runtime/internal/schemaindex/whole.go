package schemaindex

import (
	"maps"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"

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

// minShardItems is the length from which an array is validated in parts.
const minShardItems = 1024

// SatisfiesWhole reports whether v (a plain value) satisfies the schema of
// x, validating in parts when that gives the same answer, else whole.
func (x *Index) SatisfiesWhole(v any) bool {
	workers := runtime.GOMAXPROCS(0)
	if workers > 1 {
		if ok, split := x.ValidateSplit(v, workers, minShardItems); split {
			return ok
		}
	}
	return Validates(x.root, v)
}

// ValidateSplit Validates v in parts when its longest array has at least
// minItems elements; split is false when it does not.
func (x *Index) ValidateSplit(v any, workers, minItems int) (ok, split bool) {
	path, arr := LongestArray(v, 3)
	if len(arr) < minItems {
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
		if s.MaxItems != nil && len(arr) > *s.MaxItems {
			return false, true
		}
	}
	if len(arr) < 2*m {
		return false, false
	}
	elem := x.route(set, strconv.Itoa(m), false)
	quick := make([]*Quick, len(elem))
	for k, s := range elem {
		quick[k] = NewQuick(s)
	}

	cut := withArray(v, path, arr[:m:m])
	var failed atomic.Bool
	var wg sync.WaitGroup
	check := func(lo, hi int) {
		defer wg.Done()
		for i := lo; i < hi && !failed.Load(); i++ {
			for k, s := range elem {
				if q := quick[k]; q != nil && q.Accepts(arr[i]) {
					continue
				}
				if !Validates(s, arr[i]) {
					failed.Store(true)
					return
				}
			}
		}
	}
	rest := len(arr) - m
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

// LongestArray returns the longest array in v reached from the root
// through objects only, within depth members, and its location; the
// root itself when it is an array.
func LongestArray(v any, depth int) ([]string, []any) {
	if a, ok := v.([]any); ok {
		return []string{}, a
	}
	var best []any
	var bestAt []string
	var walk func(v any, at []string)
	walk = func(v any, at []string) {
		obj, ok := v.(map[string]any)
		if !ok || len(at) >= depth {
			return
		}
		for k, c := range obj {
			switch c := c.(type) {
			case []any:
				if len(c) > len(best) || len(c) == len(best) && best != nil && slices.Compare(appendToken(at, k), bestAt) < 0 {
					best, bestAt = c, appendToken(at, k)
				}
			case map[string]any:
				walk(c, appendToken(at, k))
			}
		}
	}
	walk(v, []string{})
	return bestAt, best
}

// withArray returns v with the array at p (reached through objects)
// replaced by a; the objects on the way are copied, v is not changed.
func withArray(v any, p []string, a []any) any {
	if len(p) == 0 {
		return a
	}
	obj := maps.Clone(v.(map[string]any))
	obj[p[0]] = withArray(obj[p[0]], p[1:], a)
	return obj
}

// appendToken returns a new path: p and then tok.
func appendToken(p []string, tok string) []string {
	return append(slices.Clip(p), tok)
}
