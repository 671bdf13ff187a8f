package runtime

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"github.com/patchbench/patchbench/runtime/internal/overlay"
)

// overlayExprs read a state in every way CEL can: members, elements,
// sizes, presence, membership, equality both ways, comprehensions,
// concatenation, conversions and errors.
var overlayExprs = []string{
	`post == pre`, `pre == post`, `post != pre`, `post == post`, `[post] == [pre]`, `{"k": post} == {"k": pre}`,
	`size(post)`, `size(pre) == size(post)`, `post`, `dyn(post)`, `type(post)`,
	`post.a`, `post["a"]`, `post.a.b`, `post.b`, `post.b[0]`, `post.b[1]`, `post.b[7]`, `post.b[-1]`, `post.b[1.0]`, `post.b["x"]`,
	`post[0]`, `post[1]`, `post[0].a`, `post[1][0]`,
	`has(post.a)`, `has(post.zz)`, `has(post.a.b)`, `"a" in post`, `"zz" in post`, `1 in post`, `"x" in post.b`, `1 in post.b`,
	`post.all(k, k != "zz")`, `post.exists(k, k == "b")`, `post.map(k, k).size()`, `post.filter(k, k != "a").size()`, `post.map(k, [k]).size()`,
	`post.b.map(x, x).size()`, `post.b.filter(x, x == 1).size() > 0`, `post.b.all(x, x != 3)`, `post.b.exists_one(x, x == 1)`, `post.b + [1]`, `[1] + post.b`,
	`post.b == pre.b`, `post.a == pre.a`, `post.d == pre.d`, `post.c`, `post.c.x`, `string(post)`, `int(post.a)`,
	`post.exists(k, post[k] == pre[k])`, `post.all(k, k in pre)`, `pre.all(k, k in post)`,
}

// TestOverlayValuesReadAsPlainValues: an overlay (internal/overlay) gives CEL
// the same answers, and the same errors, as the plain value it stands for.
func TestOverlayValuesReadAsPlainValues(t *testing.T) {
	t.Parallel()
	env, err := invariantEnv()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(15, 3))
	n := 0
	cases := 600
	if testing.Short() {
		cases = 100 // the inner loop; the full run compares 600 values
	}
	for i := 0; i < cases; i++ {
		pre := genRoot(rng)
		var over any = pre
		for range 1 + rng.IntN(4) {
			var locs []Pointer
			locations(overlay.Plain(over), Pointer{}, &locs)
			if len(locs) < 2 {
				break
			}
			over = overlay.Set(over, locs[1+rng.IntN(len(locs)-1)], genValue(rng, 2))
		}
		plain := overlay.Plain(over)
		if _, ok := over.(*overlay.Node); !ok {
			continue
		}
		var fresh any = plain
		if b, err := encodeJSON(plain); err == nil {
			fresh = mustJSON(t, string(b))
		}
		for _, expr := range overlayExprs {
			ast, iss := env.Compile(expr)
			if iss.Err() != nil {
				t.Fatal(iss.Err())
			}
			opts := []cel.ProgramOption{cel.CostLimit(uint64(5 + rng.IntN(60)))}
			if rng.IntN(2) == 0 {
				opts = nil
			}
			prg, err := env.Program(ast, opts...)
			if err != nil {
				t.Fatal(err)
			}
			eval := func(post any) ref.Val {
				out, _, err := prg.Eval(map[string]any{"pre": jsonAdapter.NativeToValue(pre), "post": jsonAdapter.NativeToValue(post), "phase": ""})
				if err != nil {
					return types.NewErr("%v", err)
				}
				return out
			}
			got, want := eval(over), eval(fresh)
			same := func() bool {
				if got.Type() != want.Type() {
					return false
				}
				if types.IsError(got) || types.IsError(want) {
					return celTypeNames(fmt.Sprint(got)) == celTypeNames(fmt.Sprint(want))
				}
				return types.Equal(got, want) == types.True
			}
			// Comprehensions over a map visit its keys in Go's map order,
			// so where they stop, and their cost, may vary from one run to
			// the next on a plain value too. Go starts a small map's
			// iteration at a random one of its 8 slots, so an order the
			// cost limit needs may come one time in 8: 50 tries were seen
			// to miss it (post.exists(k, k == "b") under a low limit).
			// More tries cost nothing when the values agree at once.
			for try := 0; !same() && try < 1000; try++ {
				want = eval(fresh)
			}
			if !same() {
				t.Fatalf("%s over %s (from %s):\n overlay %v (%s)\n plain   %v (%s)", expr, toJSON(plain), toJSON(pre), got, got.Type(), want, want.Type())
			}
			n++
		}
	}
	t.Logf("%d evaluations compared", n)
}

// TestOverlayLookups: overlay.Child, overlay.Lookup, getAt and overlay.Plain agree with
// the plain value at every location.
func TestOverlayLookups(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 4))
	for i := 0; i < 2000; i++ {
		var over any = genRoot(rng)
		for range 1 + rng.IntN(5) {
			var locs []Pointer
			locations(overlay.Plain(over), Pointer{}, &locs)
			if len(locs) < 2 {
				break
			}
			over = overlay.Set(over, locs[1+rng.IntN(len(locs)-1)], genValue(rng, 2))
		}
		plain := overlay.Plain(over)
		var locs []Pointer
		locations(plain, Pointer{}, &locs)
		locs = append(locs, Pointer{"zz"}, Pointer{"0", "9"}, Pointer{"b", "-"}, Pointer{"b", "01"})
		for _, p := range locs {
			a, errA := getAt(over, p)
			b, errB := getAt(plain, p)
			if (errA == nil) != (errB == nil) || (errA != nil && errA.Error() != errB.Error()) {
				t.Fatalf("getAt %q: %v vs %v", p, errA, errB)
			}
			if errA == nil && toJSON(overlay.Plain(a)) != toJSON(b) {
				t.Fatalf("getAt %q: %s vs %s", p, toJSON(overlay.Plain(a)), toJSON(b))
			}
			c, ok := overlay.Lookup(over, p)
			if ok != (errB == nil) || (ok && toJSON(overlay.Plain(c)) != toJSON(b)) {
				t.Fatalf("overlay.Lookup %q", p)
			}
		}
	}
}

// celTypeNames blurs the Go type names CEL quotes in some errors ("invalid
// qualifier type: %T"): an overlay is another Go type than the plain
// container it stands for. Such text only reaches GateResult.Detail.
func celTypeNames(s string) string {
	for _, name := range []string{"*overlay.ovMapVal", "*types.nativeMap[string,interface {}]", "*overlay.ovListVal", "*types.sliceList[interface {}]"} {
		s = strings.ReplaceAll(s, name, "<container>")
	}
	return s
}
