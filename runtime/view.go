package runtime

import "strconv"

// ViewRegion is the read region a projection realises: the locations
// covered by Include and not by Exclude (an excluded pattern hides its
// whole subtree, whatever Include says). It is the O_s of the paper's
// authority triple (paper §3.1) and the Read part of a step's Footprint.
type ViewRegion struct {
	Include Region `json:"include"`
	Exclude Region `json:"exclude"`
}

// WholeDocument is the view region that shows everything.
var WholeDocument = ViewRegion{Include: MustRegion("")}

// Visible reports whether location p is shown by the view: included and
// not excluded. Some of p's descendants may still be hidden; see
// VisibleSubtree.
func (v ViewRegion) Visible(p Pointer) bool {
	return v.Include.Contains(p) && !v.Exclude.Contains(p)
}

// VisibleSubtree reports whether p and everything below it are shown.
func (v ViewRegion) VisibleSubtree(p Pointer) bool {
	return v.Include.Contains(p) && !v.Exclude.OverlapsSubtree(p)
}

// Overlaps reports whether some shown location lies in r. It is exact:
// the part of Include inside r must be entirely excluded for the answer to
// be false.
func (v ViewRegion) Overlaps(r Region) bool {
	return !v.Include.Intersect(r).SubsetOf(v.Exclude)
}

// Intersect returns the patterns of r's overlap with the shown locations
// (over-approximated where an exclusion cuts a pattern partly).
func (v ViewRegion) Intersect(r Region) Region {
	var keep []Pointer
	for _, p := range v.Include.Intersect(r).Patterns() {
		if !RegionOf(p).SubsetOf(v.Exclude) {
			keep = append(keep, p)
		}
	}
	return RegionOf(keep...)
}

// SubsetOf reports whether every location v shows is also shown by w
// (the Read part of a restriction, paper §3.4). It is exact: each included
// pattern of v that v does not wholly exclude must lie in w's Include, and
// whatever v shows inside w's exclusions must be excluded by v too.
func (v ViewRegion) SubsetOf(w ViewRegion) bool {
	for _, p := range v.Include.Patterns() {
		one := RegionOf(p)
		if one.SubsetOf(v.Exclude) {
			continue
		}
		if !one.SubsetOf(w.Include) {
			return false
		}
	}
	return v.Include.Intersect(w.Exclude).SubsetOf(v.Exclude)
}

// Union over-approximates the locations shown by v or w: Include is the
// union and Exclude the intersection, so nothing shown by either is lost.
func (v ViewRegion) Union(w ViewRegion) ViewRegion {
	return ViewRegion{Include: v.Include.Union(w.Include), Exclude: v.Exclude.Intersect(w.Exclude)}
}

// Equal reports whether v and w have the same Include and Exclude.
func (v ViewRegion) Equal(w ViewRegion) bool {
	return v.Include.Equal(w.Include) && v.Exclude.Equal(w.Exclude)
}

// View projects a decoded JSON document to what an actor with view region
// v may see (the O_s(x) of paper §3.1). The result keeps the document's
// addresses: an object keeps the members that are shown or lead to shown
// locations, under their own names; an array keeps every position, and a
// hidden element becomes null, so a pointer into the view means the same
// location in the document. A container that is itself included stays
// (possibly empty) even when all its members are excluded. When nothing is
// shown the result is nil (JSON null). The output shares unchanged
// subtrees with doc and must not be modified; encode it with EncodeIndent
// for deterministic text.
func View(doc any, v ViewRegion) any {
	out, shown := project(doc, make(Pointer, 0, 16), v)
	if !shown {
		return nil
	}
	return out
}

// project returns the projection of node at path and whether anything of
// it is shown.
func project(node any, path Pointer, v ViewRegion) (any, bool) {
	if v.Exclude.Contains(path) {
		return nil, false
	}
	included := v.Include.Contains(path)
	if included && !v.Exclude.OverlapsSubtree(path) {
		return node, true
	}
	if !included && !v.Include.OverlapsSubtree(path) {
		return nil, false
	}
	switch x := node.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, c := range x {
			if cv, ok := project(c, append(path, k), v); ok {
				out[k] = cv
			}
		}
		return out, included || len(out) > 0
	case []any:
		out := make([]any, len(x))
		shown := included
		for i, c := range x {
			if cv, ok := project(c, append(path, strconv.Itoa(i)), v); ok {
				out[i] = cv
				shown = true
			}
		}
		return out, shown
	default:
		return node, included
	}
}
