package runtime

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
)

// everyContainerLazy makes every container of a parsed state's tree be
// read from its text (lazytree.go) for the rest of the test.
func everyContainerLazy(t *testing.T) {
	old, share := lazyMinSpan, lazyBuildShare
	lazyMinSpan, lazyBuildShare = 0, 0
	t.Cleanup(func() { lazyMinSpan, lazyBuildShare = old, share })
}

// TestLazyTreeMatchesBuiltValue is the differential test of the lazy
// tree: random states (canonical, indented and oddly escaped texts),
// random contracts and random patches, in chains, verified on a freshly
// parsed state whose every container is read from its text, and on the
// same text parsed with its value built before the first step (the path
// before the lazy tree). Both must give the same decision, codes,
// messages, footprint and committed text and value, and so must the
// whole-document path on the built value.
func TestLazyTreeMatchesBuiltValue(t *testing.T) {
	everyContainerLazy(t)
	rng := rand.New(rand.NewPCG(25, 7))
	n := 3000
	if testing.Short() {
		n = 300
	}
	lazySteps := 0
	for i := range n {
		// Children built one by one never make the tree build its value
		// whole, or do after a few bytes, or as they do outside the tests.
		lazyBuildShare = []int{0, 0, 1000, 4}[rng.IntN(4)]
		v := genRoot(rng)
		c, opts := genContract(t, rng, v)
		text := genDoc(t, rng, v).Bytes()
		lazy, err := ParseDocument(text)
		if err != nil {
			t.Fatal(err)
		}
		built, err := ParseDocument(text)
		if err != nil {
			t.Fatal(err)
		}
		built.Value()
		whole := built
		w := wholeOnly(c)
		for step := range 3 {
			ref, err := ParseDocument(built.Bytes())
			if err != nil {
				t.Fatal(err)
			}
			ops := genPatch(rng, ref.Value())
			p := &Proposal{Patch: ops}
			if _, isLazy := lazy.tree().(*overlay.Node); isLazy && step == 0 {
				lazySteps++
			}
			a, errA := c.VerifyProposal(context.Background(), lazy, p, opts)
			b, errB := c.VerifyProposal(context.Background(), built, p, opts)
			d, errD := w.VerifyProposal(context.Background(), whole, p, opts)
			if errA != nil || errB != nil || errD != nil {
				t.Fatalf("errors %v, %v, %v", errA, errB, errD)
			}
			if diff := diffDecisions(a, b, lazy, built); diff != "" {
				t.Fatalf("case %d step %d, lazy vs built: %s\nstate %s\npatch %s\nspec %s", i, step, diff, text, toJSON(ops), toJSON(c.Spec()))
			}
			if diff := diffDecisions(a, d, lazy, whole); diff != "" {
				t.Fatalf("case %d step %d, lazy vs whole: %s\nstate %s\npatch %s\nspec %s", i, step, diff, text, toJSON(ops), toJSON(c.Spec()))
			}
			if !a.Committed {
				break
			}
			lazy, built, whole = a.State, b.State, d.State
		}
	}
	if lazySteps < n/2 {
		t.Fatalf("only %d of %d chains started on a lazy tree", lazySteps, n)
	}
}

// TestLazyTreeReadsAsValue: a lazy tree reads, through every overlay
// function and CEL, as the value it stands for, and building it whole
// gives that value.
func TestLazyTreeReadsAsValue(t *testing.T) {
	everyContainerLazy(t)
	rng := rand.New(rand.NewPCG(25, 8))
	for range 300 {
		v := genRoot(rng)
		text := genDoc(t, rng, v).Bytes()
		d, err := ParseDocument(text)
		if err != nil {
			t.Fatal(err)
		}
		want := mustJSON(t, string(text))
		tree := d.tree()
		if _, ok := tree.(*overlay.Node); !ok {
			t.Fatalf("%s: the tree is %T, not lazy", text, tree)
		}
		var check func(at Pointer, got, want any)
		check = func(at Pointer, got, want any) {
			if overlay.IsObject(got) != isMap(want) || overlay.IsArray(got) != isSlice(want) {
				t.Fatalf("%s at %s: kind differs", text, at)
			}
			if n := overlay.Len(got); (isMap(want) || isSlice(want)) && n != lenOf(want) {
				t.Fatalf("%s at %s: length %d, want %d", text, at, n, lenOf(want))
			}
			if !EqualJSON(overlay.Plain(got), want) {
				t.Fatalf("%s at %s: %s, want %s", text, at, toJSON(overlay.Plain(got)), toJSON(want))
			}
			switch w := want.(type) {
			case map[string]any:
				if len(overlay.Keys(got)) != len(w) {
					t.Fatalf("%s at %s: keys %q", text, at, overlay.Keys(got))
				}
				for k, wc := range w {
					c, ok := overlay.Child(got, k)
					if !ok {
						t.Fatalf("%s at %s: no member %q", text, at, k)
					}
					check(at.Append(k), c, wc)
				}
				if _, ok := overlay.Child(got, "no such member"); ok {
					t.Fatalf("%s at %s: a member that is not there", text, at)
				}
			case []any:
				for i, wc := range w {
					c, ok := overlay.Child(got, fmt.Sprint(i))
					if !ok {
						t.Fatalf("%s at %s: no element %d", text, at, i)
					}
					check(at.Append(fmt.Sprint(i)), c, wc)
				}
				if _, ok := overlay.Child(got, fmt.Sprint(len(w))); ok {
					t.Fatalf("%s at %s: an element past the end", text, at)
				}
			}
		}
		check(Pointer{}, tree, want)
		if !EqualJSON(d.Value(), want) {
			t.Fatalf("%s: Value %s", text, toJSON(d.Value()))
		}
		// Once built, the tree is the value.
		if _, ok := d.tree().(*overlay.Node); ok {
			t.Fatalf("%s: the tree is still lazy after Value", text)
		}
	}
}

func isMap(v any) bool   { _, ok := v.(map[string]any); return ok }
func isSlice(v any) bool { _, ok := v.([]any); return ok }
func lenOf(v any) int {
	switch x := v.(type) {
	case map[string]any:
		return len(x)
	case []any:
		return len(x)
	}
	return 0
}

// TestQuickTextMatchesQuickValue: on random quick schemas and random
// values, written compactly with and without escapes in member names,
// AcceptsText never accepts what the library rejects, and accepts
// exactly what Accepts accepts when no member name is escaped.
func TestQuickTextMatchesQuickValue(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 9))
	n := 2000
	if testing.Short() {
		n = 300
	}
	accepted := 0
	for range n {
		text, _ := randomQuickSchema(rng, 0)
		s, err := compileSchema("schema", mustJSON(t, text))
		if err != nil {
			t.Fatal(err)
		}
		q := schemaindex.NewQuick(s)
		if q == nil {
			continue
		}
		for range 20 {
			vt := randomQuickValue(rng, 0)
			v := mustJSON(t, vt)
			escaped := strings.ReplaceAll(vt, `"id"`, `"i\u0064"`)
			if got, want := q.AcceptsText([]byte(vt)), q.Accepts(v); got != want {
				t.Fatalf("schema %s, value %s: AcceptsText %v, Accepts %v", text, vt, got, want)
			}
			if q.AcceptsText([]byte(escaped)) {
				accepted++
				if !schemaindex.Validates(s, mustJSON(t, escaped)) {
					t.Fatalf("schema %s accepts %s from its text; the library rejects it", text, escaped)
				}
			}
		}
	}
	if accepted < n {
		t.Fatalf("only %d values accepted from their text: the test tests little", accepted)
	}
}

// TestLazyWholeValidationMatchesLibrary: the whole validation of a lazy
// tree (elements read from their text, built only when the quick schema
// does not accept them) gives the library's verdict on the built value,
// on random element schemas (quick ones and others) and random states
// whose long array holds random elements, in parts and whole.
func TestLazyWholeValidationMatchesLibrary(t *testing.T) {
	everyContainerLazy(t)
	rng := rand.New(rand.NewPCG(25, 10))
	n := 600
	if testing.Short() {
		n = 100
	}
	split, rejected := 0, 0
	for i := range n {
		item, _ := randomQuickSchema(rng, 0)
		extra := []string{``, `,"minItems":3`, `,"maxItems":30`, `,"prefixItems":[{"type":"object"}]`, `,"uniqueItems":true`}[rng.IntN(5)]
		schema := `{"type":"object","required":["box"],"properties":{"box":{"properties":{"records":{"type":"array","items":` + item + extra + `}}},"meta":{"required":["v"]}}}`
		c := MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Schema: mustJSON(t, schema)})
		x := c.incremental
		if x == nil {
			t.Fatalf("%s: no analysis", schema)
		}
		var els []string
		good := `{"id":"a","balance":1,"tags":[],"a":null,"b":{"a":"x"}}`
		for range 10 + rng.IntN(30) {
			if rng.IntN(6) == 0 {
				els = append(els, randomQuickValue(rng, 0))
			} else {
				els = append(els, good)
			}
		}
		state := `{"meta":{"v":1},"box":{"records":[` + strings.Join(els, ",") + `]},"small":[1,2]}`
		if rng.IntN(3) == 0 {
			state = strings.ReplaceAll(state, `"id"`, `"i\u0064"`)
		}
		if rng.IntN(3) == 0 {
			state = strings.ReplaceAll(state, ",", ", ")
		}
		want := mustJSON(t, state)
		f, err := validateSchema(c.schema, want)
		if err != nil {
			t.Fatal(err)
		}
		if f != nil {
			rejected++
		}
		for _, workers := range []int{1, 2} {
			d, err := ParseDocument([]byte(state))
			if err != nil {
				t.Fatal(err)
			}
			ok, didSplit := x.ValidateSplit(d.tree(), workers, 8)
			if didSplit {
				split++
				if ok != (f == nil) {
					t.Fatalf("case %d, %d workers: in parts on the lazy tree %v, the library %v\nschema %s\nstate %s", i, workers, ok, f == nil, schema, state)
				}
			}
			if got := x.SatisfiesWhole(d.tree()); got != (f == nil) {
				t.Fatalf("case %d: SatisfiesWhole on the lazy tree %v, the library %v\nschema %s\nstate %s", i, got, f == nil, schema, state)
			}
			if got := d.satisfies(c.schema, x); got != (f == nil) {
				t.Fatalf("case %d: satisfies %v, the library %v", i, got, f == nil)
			}
		}
	}
	if split < n || rejected < n/10 || rejected > n*9/10 {
		t.Fatalf("%d validations in parts, %d states rejected in %d cases: the test tests little", split, rejected, n)
	}
}

// TestLazyTreeLongArray: a state whose long array is validated in parts
// on its lazy tree (the benchmark's shape, past minShardItems) gives the
// library's verdict, an element that breaks the schema anywhere
// included, and verifies the benchmark patch as on the built value.
func TestLazyTreeLongArray(t *testing.T) {
	c := MustCompile(benchSpec)
	text := benchState(400 << 10)
	n := len(mustJSON(t, string(text)).(map[string]any)["records"].([]any))
	for _, bad := range []string{"", "balance", "id", "required"} {
		state := string(text)
		at := fmt.Sprintf(`"id":"r-%06d"`, n*2/3)
		switch bad {
		case "balance":
			i := strings.LastIndex(state[:strings.Index(state, at)], `"balance":`) + len(`"balance":`)
			state = state[:i] + `"x"` + state[i+strings.IndexByte(state[i:], ','):]
		case "id":
			state = strings.Replace(state, at, `"id":7`, 1)
		case "required":
			state = strings.Replace(state, at, `"noid":"r"`, 1)
		}
		want := mustJSON(t, state)
		f, err := validateSchema(c.schema, want)
		if err != nil {
			t.Fatal(err)
		}
		d, err := ParseDocument([]byte(state))
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := d.tree().(*overlay.Node); !ok {
			t.Fatal("the benchmark state's tree is not lazy")
		}
		if got := c.incremental.SatisfiesWhole(d.tree()); got != (f == nil) {
			t.Fatalf("%q: lazy %v, library %v", bad, got, f == nil)
		}
		built, _ := ParseDocument([]byte(state))
		built.Value()
		opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
		a, err := c.Verify(context.Background(), d, []byte(benchPatch), opts)
		if err != nil {
			t.Fatal(err)
		}
		b, err := c.Verify(context.Background(), built, []byte(benchPatch), opts)
		if err != nil {
			t.Fatal(err)
		}
		if diff := diffDecisions(a, b, d, built); diff != "" {
			t.Fatalf("%q: %s", bad, diff)
		}
		if a.Committed != (f == nil) {
			t.Fatalf("%q: committed %v on a state the library says is valid: %v", bad, a.Committed, f == nil)
		}
	}
}

// TestLazyTreeBuildsWhenReadWhole: an invariant that reads every record
// of a lazy tree makes the state build its value once (lazyBuildShare),
// and decides as on the built value.
func TestLazyTreeBuildsWhenReadWhole(t *testing.T) {
	spec := benchSpec
	spec.Invariants = append(spec.Invariants, InvariantSpec{Name: "balances", Rule: "post.records.all(r, r.balance >= 0)"})
	c := MustCompile(spec)
	text := benchState(400 << 10)
	lazy, err := ParseDocument(text)
	if err != nil {
		t.Fatal(err)
	}
	built, _ := ParseDocument(text)
	built.Value()
	opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
	a, err := c.Verify(context.Background(), lazy, []byte(benchPatch), opts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.Verify(context.Background(), built, []byte(benchPatch), opts)
	if err != nil {
		t.Fatal(err)
	}
	if diff := diffDecisions(a, b, lazy, built); diff != "" {
		t.Fatal(diff)
	}
	if !a.Committed || !lazy.built.Load() {
		t.Fatalf("committed %v, value built %v; want both", a.Committed, lazy.built.Load())
	}
}

// FuzzLazyTree: a state verified on its lazy tree (every container read
// from its text, built whole at once or never) decides, over two steps,
// as the same text with its value built first.
func FuzzLazyTree(f *testing.F) {
	states, patches := fuzzStates, fuzzPatches
	for i, s := range states {
		for j, p := range patches {
			f.Add([]byte(s), []byte(p), uint8(i+j))
			f.Add([]byte(s), []byte(p), uint8(0x40|(i+j)))
		}
	}
	f.Fuzz(func(t *testing.T, state, proposal []byte, which uint8) {
		old, share := lazyMinSpan, lazyBuildShare
		defer func() { lazyMinSpan, lazyBuildShare = old, share }()
		lazyMinSpan, lazyBuildShare = 0, 0
		if which&0x40 != 0 {
			lazyBuildShare = 1000
		}
		lazy, err := ParseDocument(state)
		if err != nil {
			return
		}
		built, _ := ParseDocument(state)
		built.Value()
		c := fuzzFootprintContracts[int(which)%len(fuzzFootprintContracts)]
		opts := VerifyOptions{Gates: DefaultGates}
		if which&0x80 != 0 {
			opts = VerifyOptions{Gates: GateSet{ACL: true, Schema: true}, Audit: DefaultGates}
		}
		for step := 0; step < 2; step++ {
			a, errA := c.Verify(context.Background(), lazy, proposal, opts)
			b, errB := c.Verify(context.Background(), built, proposal, opts)
			if (errA == nil) != (errB == nil) {
				t.Fatalf("errors %v vs %v", errA, errB)
			}
			if diff := diffDecisions(a, b, lazy, built); diff != "" {
				t.Fatalf("step %d: %s", step, diff)
			}
			if !a.Committed {
				return
			}
			lazy, built = a.State, b.State
		}
	})
}
