package runtime

import (
	"math/rand/v2"
	"slices"
	"testing"
)

func TestRegionTokenWise(t *testing.T) {
	tests := []struct {
		region []string
		ptr    string
		want   bool
	}{
		{[]string{"/a"}, "/a", true},
		{[]string{"/a"}, "/a/b/c", true},
		{[]string{"/a"}, "/ab", false},
		{[]string{"/a"}, "", false},
		{[]string{"/a~1b"}, "/a/b", false},
		{[]string{"/a~1b"}, "/a~1b", true},
		{[]string{"/a~1b"}, "/a~1b/c", true},
		{[]string{"/a/b"}, "/a~1b", false},
		{[]string{"/m~0n"}, "/m~0n/x", true},
		{[]string{"/*/name"}, "/x/name", true},
		{[]string{"/*/name"}, "/x/name/first", true},
		{[]string{"/*/name"}, "/x/names", false},
		{[]string{"/*/name"}, "/x", false},
		{[]string{"/list/*"}, "/list/0", true},
		{[]string{"/list/*"}, "/list/-", true},
		{[]string{"/list/-"}, "/list/-", true},
		{[]string{"/list/-"}, "/list/3", false},
		{[]string{""}, "/anything/at/all", true},
		{[]string{""}, "", true},
		{nil, "", false},
		{[]string{"/"}, "/", true},
		{[]string{"/"}, "/a", false},
		{[]string{"/", "/b"}, "//x", true},
	}
	for _, tt := range tests {
		r := MustRegion(tt.region...)
		if got := r.Contains(MustPointer(tt.ptr)); got != tt.want {
			t.Errorf("%v.Contains(%q) = %v, want %v", tt.region, tt.ptr, got, tt.want)
		}
	}
}

func TestRegionErrors(t *testing.T) {
	for _, p := range []string{"a", "/a/-/b", "/~2", "#/a"} {
		if _, err := NewRegion(p); err == nil {
			t.Errorf("NewRegion(%q): want an error", p)
		}
	}
	if _, err := NewRegion("/a/-", "/-", "/foo/*/bar"); err != nil {
		t.Errorf("valid patterns rejected: %v", err)
	}
}

func TestRegionAlgebra(t *testing.T) {
	r := MustRegion("/a", "/a/b", "/c/*", "/c/x/y")
	if got, want := r.Strings(), []string{"/a", "/c/*"}; !slices.Equal(got, want) {
		t.Errorf("normalised %v, want %v", got, want)
	}
	if !MustRegion("/a/b").SubsetOf(MustRegion("/a")) || MustRegion("/a").SubsetOf(MustRegion("/a/b")) {
		t.Error("subset by prefix")
	}
	if MustRegion("/ab").SubsetOf(MustRegion("/a")) {
		t.Error("/ab is not inside /a")
	}
	if !MustRegion("/x/name").SubsetOf(MustRegion("/*/name")) || MustRegion("/*/name").SubsetOf(MustRegion("/x/name")) {
		t.Error("wildcard subset")
	}
	if !MustRegion("/a/b").Overlaps(MustRegion("/a")) || !MustRegion("/a").Overlaps(MustRegion("/a/b/c")) {
		t.Error("ancestor and descendant overlap")
	}
	if MustRegion("/a/b").Overlaps(MustRegion("/a/c")) || MustRegion("/a").Overlaps(MustRegion("/ab")) {
		t.Error("siblings and prefixes do not overlap")
	}
	if got := MustRegion("/*/name").Intersect(MustRegion("/x")).Strings(); !slices.Equal(got, []string{"/x/name"}) {
		t.Errorf("intersect = %v", got)
	}
	if got := MustRegion("/a/*/c").Intersect(MustRegion("/*/b")).Strings(); !slices.Equal(got, []string{"/a/b/c"}) {
		t.Errorf("intersect = %v", got)
	}
	if got := MustRegion("/a").Union(MustRegion("/a/b", "/d")).Strings(); !slices.Equal(got, []string{"/a", "/d"}) {
		t.Errorf("union = %v", got)
	}
}

// The property tests below compare the symbolic operations with brute
// force over a finite universe of locations. The alphabet includes a token
// no pattern uses ("q"), which stands for every other member name, so
// wildcard patterns are checked against names they do not list.
var (
	patternTokens  = []string{"a", "b", "0", "1", "*", "-"}
	universeTokens = []string{"a", "b", "0", "1", "-", "q"}
)

func randomPattern(rng *rand.Rand) Pointer {
	n := rng.IntN(4)
	p := make(Pointer, n)
	for i := range p {
		for {
			p[i] = patternTokens[rng.IntN(len(patternTokens))]
			if p[i] != "-" || i == n-1 {
				break
			}
		}
	}
	return p
}

func randomRegion(rng *rand.Rand) Region {
	ps := make([]Pointer, rng.IntN(4))
	for i := range ps {
		ps[i] = randomPattern(rng)
	}
	return RegionOf(ps...)
}

func universe() []Pointer {
	out := []Pointer{{}}
	level := []Pointer{{}}
	for d := 0; d < 4; d++ {
		var next []Pointer
		for _, p := range level {
			for _, t := range universeTokens {
				next = append(next, p.Append(t))
			}
		}
		out = append(out, next...)
		level = next
	}
	return out
}

func TestRegionPropertiesAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	u := universe()
	for i := 0; i < 3000; i++ {
		r, s, q := randomRegion(rng), randomRegion(rng), randomRegion(rng)
		union, inter := r.Union(s), r.Intersect(s)
		overlap, subset := false, true
		for _, p := range u {
			inR, inS := r.Contains(p), s.Contains(p)
			if union.Contains(p) != (inR || inS) {
				t.Fatalf("%v ∪ %v = %v wrong at %q", r, s, union, p)
			}
			if inter.Contains(p) != (inR && inS) {
				t.Fatalf("%v ∩ %v = %v wrong at %q", r, s, inter, p)
			}
			overlap = overlap || (inR && inS)
			subset = subset && (!inR || inS)
		}
		if r.Overlaps(s) != overlap {
			t.Fatalf("%v.Overlaps(%v) = %v, brute force %v", r, s, r.Overlaps(s), overlap)
		}
		if r.SubsetOf(s) != subset {
			t.Fatalf("%v.SubsetOf(%v) = %v, brute force %v", r, s, r.SubsetOf(s), subset)
		}
		// Laws: union commutative, associative, idempotent.
		if !union.Equal(s.Union(r)) || !r.Union(s.Union(q)).Equal(r.Union(s).Union(q)) || !r.Union(r).Equal(r) {
			t.Fatalf("union laws fail for %v %v %v", r, s, q)
		}
		if !inter.Equal(s.Intersect(r)) {
			t.Fatalf("intersection not commutative for %v %v", r, s)
		}
	}
}
