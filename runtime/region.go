package runtime

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

// Wildcard is the reference token that, as a whole segment of a region
// pattern, matches any one member name or array index. A member literally
// named "*" cannot be singled out by a pattern.
const Wildcard = "*"

// AppendToken is the reference token "-": in an add, move or copy path it
// names the position after the last array element (RFC 6901 §4, RFC 6902
// §4.1); as the last token of a region pattern it grants appending to that
// array.
const AppendToken = "-"

// Region is a set of JSON locations, given as pointer patterns (PatchOptic
// paper §3: the write region W and the patch-source region P are regions).
// A pattern covers the location it names and its whole subtree; a "*"
// token matches any one member name or array index, "-" included. All
// operations are token-wise. The zero Region is empty. A Region is
// immutable and kept normalised: no pattern is covered by another, and the
// patterns are sorted by Pointer.Compare.
type Region struct {
	patterns []Pointer
}

// NewRegion parses pointer patterns into a normalised Region. Each pattern
// is a JSON Pointer (RFC 6901) whose tokens may be "*"; "-" may only be the
// last token. Errors name the offending pattern.
func NewRegion(patterns ...string) (Region, error) {
	ps := make([]Pointer, 0, len(patterns))
	for _, s := range patterns {
		p, err := ParsePointer(s)
		if err != nil {
			return Region{}, fmt.Errorf("region pattern: %w", err)
		}
		for i, t := range p {
			if t == AppendToken && i != len(p)-1 {
				return Region{}, fmt.Errorf("region pattern %q: \"-\" may only be the last token", s)
			}
		}
		ps = append(ps, p)
	}
	return regionOf(ps), nil
}

// MustRegion is NewRegion for patterns known to be valid; it panics on an
// error. Use it in tests and examples.
func MustRegion(patterns ...string) Region {
	r, err := NewRegion(patterns...)
	if err != nil {
		panic(err)
	}
	return r
}

// RegionOf builds a normalised Region from already parsed patterns. The
// slice is not retained.
func RegionOf(patterns ...Pointer) Region {
	ps := make([]Pointer, len(patterns))
	for i, p := range patterns {
		ps[i] = slices.Clone(p)
	}
	return regionOf(ps)
}

// regionOf normalises ps in place and takes ownership of it. Patterns
// without a wildcard are normalised in O(n log n): sorted token-wise, a
// location's ancestors come right before it and its descendants right
// after, so one kept pattern is enough to find those it covers.
func regionOf(ps []Pointer) Region {
	var wild, plain []Pointer
	for _, p := range ps {
		if slices.Contains(p, Wildcard) {
			wild = append(wild, p)
		} else {
			plain = append(plain, p)
		}
	}
	// Wildcard patterns are few: compare them pairwise, broadest first.
	slices.SortFunc(wild, func(a, b Pointer) int {
		if len(a) != len(b) {
			return len(a) - len(b)
		}
		return a.Compare(b)
	})
	keptWild := wild[:0]
	for _, p := range wild {
		if !slices.ContainsFunc(keptWild, func(q Pointer) bool { return patternSubset(p, q) }) {
			keptWild = append(keptWild, p)
		}
	}
	slices.SortFunc(plain, Pointer.Compare)
	out := make([]Pointer, 0, len(keptWild)+len(plain))
	var last Pointer
	hasLast := false
	for _, p := range plain {
		if hasLast && p.HasPrefix(last) {
			continue
		}
		if slices.ContainsFunc(keptWild, func(q Pointer) bool { return patternSubset(p, q) }) {
			continue
		}
		out = append(out, p)
		last, hasLast = p, true
	}
	// A wildcard pattern may lie under a plain one (/a covers /a/*/b):
	// look its plain prefixes up among the kept plain patterns.
	plainKept := out
	for _, w := range keptWild {
		covered := false
		for i := 0; i <= len(w) && !covered; i++ {
			_, covered = slices.BinarySearchFunc(plainKept, w[:i], Pointer.Compare)
			if i < len(w) && w[i] == Wildcard {
				break
			}
		}
		if !covered {
			out = append(out, w)
		}
	}
	slices.SortFunc(out, Pointer.Compare)
	return Region{patterns: slices.Clip(out)}
}

// Patterns returns the region's normalised patterns. The caller must not
// modify them.
func (r Region) Patterns() []Pointer { return r.patterns }

// IsEmpty reports whether the region holds no location.
func (r Region) IsEmpty() bool { return len(r.patterns) == 0 }

// Strings returns the patterns in their string form.
func (r Region) Strings() []string {
	out := make([]string, len(r.patterns))
	for i, p := range r.patterns {
		out[i] = p.String()
	}
	return out
}

// String returns the patterns as a bracketed, comma-separated list.
func (r Region) String() string { return "[" + strings.Join(r.Strings(), ", ") + "]" }

// MarshalJSON encodes the region as a JSON array of pattern strings.
func (r Region) MarshalJSON() ([]byte, error) { return json.Marshal(r.Strings()) }

// UnmarshalJSON decodes a JSON array of pattern strings with NewRegion.
func (r *Region) UnmarshalJSON(b []byte) error {
	var ss []string
	if err := json.Unmarshal(b, &ss); err != nil {
		return err
	}
	q, err := NewRegion(ss...)
	if err != nil {
		return err
	}
	*r = q
	return nil
}

// patternCovers reports whether pattern pat covers location p: pat is no
// longer than p and each of its tokens is "*" or equal to p's.
func patternCovers(pat, p Pointer) bool {
	if len(pat) > len(p) {
		return false
	}
	for i, t := range pat {
		if t != Wildcard && t != p[i] {
			return false
		}
	}
	return true
}

// patternSubset reports whether every location pattern p covers is covered
// by q.
func patternSubset(p, q Pointer) bool {
	if len(q) > len(p) {
		return false
	}
	for i, t := range q {
		if t != Wildcard && t != p[i] {
			return false
		}
	}
	return true
}

// patternsOverlap reports whether some location is covered by both p and
// q: one is equal to, above or below an instance of the other.
func patternsOverlap(p, q Pointer) bool {
	n := min(len(p), len(q))
	for i := 0; i < n; i++ {
		if p[i] != q[i] && p[i] != Wildcard && q[i] != Wildcard {
			return false
		}
	}
	return true
}

// patternMeet returns the pattern covering exactly the locations both p
// and q cover; ok is false when they do not overlap.
func patternMeet(p, q Pointer) (Pointer, bool) {
	if !patternsOverlap(p, q) {
		return nil, false
	}
	long, short := p, q
	if len(q) > len(p) {
		long, short = q, p
	}
	m := slices.Clone(long)
	for i, t := range short {
		if m[i] == Wildcard {
			m[i] = t
		}
	}
	return m, true
}

// Contains reports whether location p lies in the region: some pattern
// covers p (equal to p or an ancestor of it, token-wise).
func (r Region) Contains(p Pointer) bool {
	for _, pat := range r.patterns {
		if patternCovers(pat, p) {
			return true
		}
	}
	return false
}

// Overlaps reports whether the two regions share a location. Two regions
// that do not overlap are disjoint (the ⟂ relation of the paper): no path
// of one is equal to, above or below a path of the other.
func (r Region) Overlaps(s Region) bool {
	for _, p := range r.patterns {
		for _, q := range s.patterns {
			if patternsOverlap(p, q) {
				return true
			}
		}
	}
	return false
}

// OverlapsSubtree reports whether some location at or below p lies in the
// region.
func (r Region) OverlapsSubtree(p Pointer) bool {
	for _, pat := range r.patterns {
		if patternsOverlap(pat, p) {
			return true
		}
	}
	return false
}

// SubsetOf reports whether every location of r lies in s. Because a
// wildcard ranges over infinitely many names, a pattern of r is covered by
// s exactly when one pattern of s covers it, so the test is exact.
func (r Region) SubsetOf(s Region) bool {
	for _, p := range r.patterns {
		ok := false
		for _, q := range s.patterns {
			if patternSubset(p, q) {
				ok = true
				break
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// Union returns the region of locations in r or s.
func (r Region) Union(s Region) Region {
	ps := make([]Pointer, 0, len(r.patterns)+len(s.patterns))
	ps = append(ps, r.patterns...)
	ps = append(ps, s.patterns...)
	return regionOf(ps)
}

// Intersect returns the region of locations in both r and s. Its patterns
// are also the overlapping paths that make two regions non-disjoint.
func (r Region) Intersect(s Region) Region {
	var ps []Pointer
	for _, p := range r.patterns {
		for _, q := range s.patterns {
			if m, ok := patternMeet(p, q); ok {
				ps = append(ps, m)
			}
		}
	}
	return regionOf(ps)
}

// Equal reports whether r and s hold the same locations.
func (r Region) Equal(s Region) bool { return r.SubsetOf(s) && s.SubsetOf(r) }

func sortPointers(ps []Pointer) { slices.SortFunc(ps, Pointer.Compare) }
