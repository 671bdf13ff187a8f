package runtime

import (
	"context"
	"encoding/json"
	"math/rand/v2"
	"strconv"
	"testing"
)

func randomView(rng *rand.Rand) ViewRegion {
	return ViewRegion{Include: randomRegion(rng), Exclude: randomRegion(rng)}
}

func randomFootprint(rng *rand.Rand) Footprint {
	return Footprint{Read: randomView(rng), Write: randomRegion(rng), Source: randomRegion(rng)}
}

func TestViewRegionAgainstBruteForce(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	u := universe()
	for i := 0; i < 3000; i++ {
		v, w, r := randomView(rng), randomView(rng), randomRegion(rng)
		overlap, subset := false, true
		union := v.Union(w)
		for _, p := range u {
			inV, inW := v.Visible(p), w.Visible(p)
			overlap = overlap || (inV && r.Contains(p))
			subset = subset && (!inV || inW)
			if (inV || inW) && !union.Visible(p) {
				t.Fatalf("%v ∪ %v loses %q", v, w, p)
			}
		}
		if v.Overlaps(r) != overlap {
			t.Fatalf("%v.Overlaps(%v) = %v, brute force %v", v, r, v.Overlaps(r), overlap)
		}
		if v.Intersect(r).IsEmpty() == overlap {
			t.Fatalf("%v.Intersect(%v) = %v, brute-force overlap %v", v, r, v.Intersect(r), overlap)
		}
		if v.SubsetOf(w) != subset {
			t.Fatalf("%v.SubsetOf(%v) = %v, brute force %v", v, w, v.SubsetOf(w), subset)
		}
	}
}

func TestFootprintLaws(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	eq := func(a, b Footprint) bool {
		return a.Read.Equal(b.Read) && a.Write.Equal(b.Write) && a.Source.Equal(b.Source)
	}
	restrictions := 0
	for i := 0; i < 5000; i++ {
		a, b, c := randomFootprint(rng), randomFootprint(rng), randomFootprint(rng)
		if !eq(a.Union(b), b.Union(a)) {
			t.Fatalf("union not commutative: %+v %+v", a, b)
		}
		if !eq(a.Union(b.Union(c)), a.Union(b).Union(c)) {
			t.Fatalf("union not associative: %+v %+v %+v", a, b, c)
		}
		if !eq(a.Union(a), a) {
			t.Fatalf("union not idempotent: %+v", a)
		}
		if !a.RestrictionOf(a) || !a.RestrictionOf(a.Union(b)) {
			t.Fatalf("a footprint is a restriction of itself and of any union with it: %+v %+v", a, b)
		}
		// Transitivity, on chains built to be restrictions and on
		// random triples.
		child := Footprint{
			Read:   ViewRegion{Include: a.Read.Include.Intersect(b.Read.Include), Exclude: a.Read.Exclude.Union(b.Read.Exclude)},
			Write:  a.Write.Intersect(b.Write),
			Source: a.Source.Intersect(b.Source),
		}
		for _, x := range [][3]Footprint{{child, a, a.Union(c)}, {a, b, c}} {
			if x[0].RestrictionOf(x[1]) && x[1].RestrictionOf(x[2]) {
				restrictions++
				if !x[0].RestrictionOf(x[2]) {
					t.Fatalf("restriction not transitive: %+v ⊆ %+v ⊆ %+v", x[0], x[1], x[2])
				}
			}
		}
		ab, ba := Commutation(a, b), Commutation(b, a)
		if ab.Commute != ba.Commute || len(ab.Blocking) != len(ba.Blocking) {
			t.Fatalf("certificate not symmetric: %+v vs %+v", ab, ba)
		}
		if ab.Commute != (Disjoint(a.Write, b.Write) && !a.Read.Overlaps(b.Write) && !b.Read.Overlaps(a.Write) &&
			Disjoint(a.Source, b.Write) && Disjoint(b.Source, a.Write)) {
			t.Fatalf("certificate disagrees with its definition: %+v %+v", a, b)
		}
	}
	if restrictions < 1000 {
		t.Fatalf("only %d restriction chains exercised", restrictions)
	}
}

func TestRestrictionHonoursExclusions(t *testing.T) {
	parent := Footprint{Read: ViewRegion{Include: MustRegion("/acct"), Exclude: MustRegion("/acct/iban")}, Write: MustRegion("/acct/note")}
	sees := Footprint{Read: ViewRegion{Include: MustRegion("/acct")}, Write: MustRegion("/acct/note")}
	if sees.RestrictionOf(parent) {
		t.Error("a child that sees the parent's excluded /acct/iban is not a restriction")
	}
	narrow := Footprint{Read: ViewRegion{Include: MustRegion("/acct/balance")}, Write: MustRegion("/acct/note")}
	if !narrow.RestrictionOf(parent) {
		t.Error("a child that reads only /acct/balance is a restriction")
	}
	wider := Footprint{Read: narrow.Read, Write: MustRegion("/acct")}
	if wider.RestrictionOf(parent) {
		t.Error("a child that writes more than the parent is not a restriction")
	}
}

// randomState builds a small document over a few names, with arrays.
func randomState(rng *rand.Rand, depth int) any {
	if depth == 0 || rng.IntN(4) == 0 {
		switch rng.IntN(3) {
		case 0:
			return json.Number(strconv.Itoa(rng.IntN(3)))
		case 1:
			return []string{"x", "y"}[rng.IntN(2)]
		default:
			return nil
		}
	}
	if rng.IntN(2) == 0 {
		n := rng.IntN(4)
		a := make([]any, n)
		for i := range a {
			a[i] = randomState(rng, depth-1)
		}
		return a
	}
	m := map[string]any{}
	for _, k := range []string{"a", "b", "c"} {
		if rng.IntN(3) > 0 {
			m[k] = randomState(rng, depth-1)
		}
	}
	return m
}

// randomLocation picks an existing location of doc, or a plausible new
// one under an existing container.
func randomLocation(rng *rand.Rand, doc any, forAdd bool) Pointer {
	var p Pointer
	cur := doc
	for {
		switch c := cur.(type) {
		case map[string]any:
			if rng.IntN(3) == 0 && len(p) > 0 {
				return p
			}
			k := []string{"a", "b", "c", "d"}[rng.IntN(4)]
			p = p.Append(k)
			v, ok := c[k]
			if !ok {
				return p
			}
			cur = v
		case []any:
			if rng.IntN(3) == 0 && len(p) > 0 {
				return p
			}
			n := len(c)
			if forAdd && rng.IntN(3) == 0 {
				if rng.IntN(2) == 0 {
					return p.Append("-")
				}
				return p.Append(strconv.Itoa(n))
			}
			if n == 0 {
				return p.Append("0")
			}
			i := rng.IntN(n)
			p = p.Append(strconv.Itoa(i))
			cur = c[i]
		default:
			return p
		}
	}
}

func randomPatch(rng *rand.Rand, doc any) []Operation {
	n := 1 + rng.IntN(2)
	ops := make([]Operation, n)
	for i := range ops {
		kind := []string{OpAdd, OpRemove, OpReplace, OpMove, OpCopy, OpTest}[rng.IntN(6)]
		op := Operation{Op: kind, Path: randomLocation(rng, doc, kind == OpAdd || kind == OpMove || kind == OpCopy)}
		switch kind {
		case OpAdd, OpReplace:
			op.Value = randomState(rng, 1)
		case OpTest:
			op.Value, _ = getAt(doc, op.Path)
			if rng.IntN(4) == 0 {
				op.Value = "x"
			}
		case OpMove, OpCopy:
			op.From = randomLocation(rng, doc, false)
		}
		ops[i] = op
	}
	return ops
}

// TestCommutationSoundness: for random states and random pairs of patches
// that both apply and whose footprints carry a commutation certificate,
// applying A then B gives the same state as B then A, through the full
// verifier (reference semantics and the apply library).
func TestCommutationSoundness(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(7, 8))
	certified := 0
	want := 5000
	if testing.Short() {
		want = 1000 // the inner loop; the full run certifies 5000 pairs
	}
	for i := 0; i < 300000 && certified < want; i++ {
		doc := randomState(rng, 3)
		if _, ok := doc.(map[string]any); !ok {
			continue
		}
		a, b := randomPatch(rng, doc), randomPatch(rng, doc)
		before := toJSON(doc)
		_, ta, errA := simulate(context.Background(), doc, a, 1<<20)
		_, tb, errB := simulate(context.Background(), doc, b, 1<<20)
		if toJSON(doc) != before {
			t.Fatalf("simulate modified its input: %s became %s (patches %s, %s)", before, toJSON(doc), toJSON(a), toJSON(b))
		}
		if errA != nil || errB != nil {
			continue
		}
		if !Commutation(ta.footprint(), tb.footprint()).Commute {
			continue
		}
		certified++
		d, err := NewDocument(doc)
		if err != nil {
			t.Fatal(err)
		}
		ab := applyBoth(t, d, a, b)
		ba := applyBoth(t, d, b, a)
		if ab == nil || ba == nil || !equalJSON(ab.Value(), ba.Value()) {
			t.Fatalf("certified pair does not commute on %s:\nA=%s\nB=%s\nA;B=%v\nB;A=%v", toJSON(doc), toJSON(a), toJSON(b), docText(ab), docText(ba))
		}
	}
	if certified < 1000 {
		t.Fatalf("only %d certified pairs generated", certified)
	}
	t.Logf("%d certified pairs commute", certified)
}

func applyBoth(t *testing.T, d *Document, first, second []Operation) *Document {
	t.Helper()
	for _, ops := range [][]Operation{first, second} {
		dec, err := openContract.VerifyProposal(t.Context(), d, &Proposal{Patch: ops}, VerifyOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if !dec.Committed {
			return nil
		}
		d = dec.State
	}
	return d
}

func docText(d *Document) string {
	if d == nil {
		return "<rejected>"
	}
	return string(d.Bytes())
}
