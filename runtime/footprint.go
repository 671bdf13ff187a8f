package runtime

// Footprint is the static footprint of a step or of a patch (PatchOptic
// paper §3.4): Read is the region the step reads (for a step, the region
// its view realises; for a patch, its sources and the locations its
// applicability depends on), Write the region it may change, and Source the
// region its patch may read when applied (copy and move "from", test
// "path").
type Footprint struct {
	Read   ViewRegion `json:"read"`
	Write  Region     `json:"write"`
	Source Region     `json:"source"`
}

// readsOverlap returns the locations of w that f reads (through its view
// or as patch sources).
func (f Footprint) readsOverlap(w Region) Region {
	return f.Read.Intersect(w).Union(f.Source.Intersect(w))
}

// Union composes peers: each part is the union of the parts (paper §3.4).
func (f Footprint) Union(g Footprint) Footprint {
	return Footprint{
		Read:   f.Read.Union(g.Read),
		Write:  f.Write.Union(g.Write),
		Source: f.Source.Union(g.Source),
	}
}

// RestrictionOf reports whether f is a restriction of parent, the
// condition for delegating from parent to a sub-actor with footprint f
// (paper §3.4): Read, Write and Source are each a subset of the parent's.
func (f Footprint) RestrictionOf(parent Footprint) bool {
	return f.Read.SubsetOf(parent.Read) &&
		f.Write.SubsetOf(parent.Write) &&
		f.Source.SubsetOf(parent.Source)
}

// Disjoint reports whether a ⟂ b: no location of one is equal to, above or
// below a location of the other.
func Disjoint(a, b Region) bool { return !a.Overlaps(b) }

// Conflict is one reason two footprints do not commute: the kind of
// overlap and the overlapping paths (the intersection of the two regions).
type Conflict struct {
	// Kind is "write/write" (W_A against W_B), "read/write" (reads of A
	// against W_B) or "write/read" (W_A against reads of B).
	Kind  string `json:"kind"`
	Paths Region `json:"paths"`
}

// Certificate is the outcome of the commutation check of two footprints.
// Commute is true when Blocking is empty.
type Certificate struct {
	Commute  bool       `json:"commute"`
	Blocking []Conflict `json:"blocking"`
}

// Commutation decides the commutation certificate of paper §3.4
// (docs/commands.md, patchbench footprint): steps A and B of one phase may
// be reordered when W_A ⟂ W_B, R_A ⟂ W_B and R_B ⟂ W_A. R is taken as Read ∪
// Source, because a patch reads its sources when it is applied; without them
// the certificate would not be sound. The result is symmetric: swapping a
// and b swaps the read/write and write/read conflicts.
func Commutation(a, b Footprint) Certificate {
	c := Certificate{Blocking: []Conflict{}}
	add := func(kind string, m Region) {
		if !m.IsEmpty() {
			c.Blocking = append(c.Blocking, Conflict{Kind: kind, Paths: m})
		}
	}
	add("write/write", a.Write.Intersect(b.Write))
	add("read/write", a.readsOverlap(b.Write))
	add("write/read", b.readsOverlap(a.Write))
	c.Commute = len(c.Blocking) == 0
	return c
}
