package runtime

import (
	"bytes"
	"context"
	"fmt"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// The step benchmarks (docs/development.md), at the three states of
// benchState (6.0 KB, 0.6 MB and 6.0 MB of JSON): the cost of one step
// against the cost of a bare library apply of the same patch, and of the
// parts of a step. This file uses only what every revision of the runtime
// has (the public API, benchState, benchSpec, benchPatch, the static gates),
// so that scripts/bench-runtime.sh can run it on an earlier revision too and
// pair the results; the per-stage benchmarks differ by revision
// (bench_stages_test.go here).

var runtimeSizes = []struct {
	name string
	size int
}{{"6KB", 10 << 10}, {"0.6MB", 1 << 20}, {"6MB", 10 << 20}}

// chainPatch is benchPatch with its appends made replacements (within the
// same write region), so that a chain of steps keeps the state's size.
const chainPatch = `[
 {"op":"replace","path":"/summary/total","value":1234.5},
 {"op":"replace","path":"/summary/note","value":"Reviewed the five largest balances."},
 {"op":"replace","path":"/records/7/tags","value":["active","reviewed"]},
 {"op":"replace","path":"/records/5/tags","value":["active","flagged"]},
 {"op":"copy","from":"/records/3/balance","path":"/summary/last"}
]`

// runtimeStates parses each state once, outside the timings.
func runtimeStates(b *testing.B) []*Document {
	docs := make([]*Document, len(runtimeSizes))
	for i, s := range runtimeSizes {
		d, err := ParseDocument(benchState(s.size))
		if err != nil {
			b.Fatal(err)
		}
		docs[i] = d
	}
	return docs
}

// BenchmarkRuntimeVerify: one step with all four gates (scope, phase,
// schema, invariants) that commits, the proposal given as text. The state
// has been verified against once before the timing: what a state costs
// once (BenchmarkRuntimeVerifyFirst) is not counted again.
func BenchmarkRuntimeVerify(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
	for i, doc := range runtimeStates(b) {
		b.Run(runtimeSizes[i].name, func(b *testing.B) {
			b.ReportAllocs()
			c.Verify(context.Background(), doc, []byte(benchPatch), opts)
			for b.Loop() {
				d, err := c.Verify(context.Background(), doc, []byte(benchPatch), opts)
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
			}
		})
	}
}

// BenchmarkRuntimeVerifyCommit: the same step, with the new state's text
// built (what a runner records after each step).
func BenchmarkRuntimeVerifyCommit(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
	for i, doc := range runtimeStates(b) {
		b.Run(runtimeSizes[i].name, func(b *testing.B) {
			b.ReportAllocs()
			c.Verify(context.Background(), doc, []byte(benchPatch), opts)
			for b.Loop() {
				d, err := c.Verify(context.Background(), doc, []byte(benchPatch), opts)
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
				if len(d.State.Bytes()) < len(doc.Bytes()) {
					b.Fatal("the new text is shorter than the old")
				}
			}
		})
	}
}

// BenchmarkRuntimeTextCopy: one copy of the state's text, with the parsed
// states live as in the other benchmarks: the floor of any step that makes
// its new text available as one buffer (the allocation, the copy and the
// garbage collection they cause), to read BenchmarkRuntimeVerifyCommit
// against.
func BenchmarkRuntimeTextCopy(b *testing.B) {
	for i, doc := range runtimeStates(b) {
		b.Run(runtimeSizes[i].name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if t := bytes.Clone(doc.Bytes()); len(t) == 0 {
					b.Fatal("no text")
				}
			}
		})
	}
}

// BenchmarkRuntimeVerifyFirst: the first step on a freshly parsed state
// (the parse not timed): what a state costs once, on top of each step.
func BenchmarkRuntimeVerifyFirst(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
	for _, s := range runtimeSizes {
		raw := benchState(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				doc, err := ParseDocument(raw)
				if err != nil {
					b.Fatal(err)
				}
				b.StartTimer()
				d, err := c.Verify(context.Background(), doc, []byte(benchPatch), opts)
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
			}
		})
	}
}

// BenchmarkRuntimeChain: steps that each verify the state the last one
// committed (chainPatch), so the costs a committed state defers (its
// value, text and tables, built on demand) are paid too; every tenth
// state's text is built, as a runner that records states now and then
// would.
func BenchmarkRuntimeChain(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: "review"}
	for i, doc := range runtimeStates(b) {
		b.Run(runtimeSizes[i].name, func(b *testing.B) {
			b.ReportAllocs()
			c.Verify(context.Background(), doc, []byte(chainPatch), opts)
			state := doc
			n := 0
			for b.Loop() {
				d, err := c.Verify(context.Background(), state, []byte(chainPatch), opts)
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
				state = d.State
				if n++; n%10 == 0 {
					_ = state.Bytes()
				}
			}
		})
	}
}

// BenchmarkRuntimeApplyBare: the same patch applied by
// evanphx/json-patch/v5 alone to the state's text, under the runtime's
// options, the patch decoded each time.
func BenchmarkRuntimeApplyBare(b *testing.B) {
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = DefaultLimits.MaxCopyBytes
	opts.EscapeHTML = false
	for _, s := range runtimeSizes {
		raw := benchState(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				p, err := jsonpatch.DecodePatch([]byte(benchPatch))
				if err != nil {
					b.Fatal(err)
				}
				if _, err := p.ApplyWithOptions(raw, opts); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRuntimeParse: ParseDocument of the state, done once per state.
func BenchmarkRuntimeParse(b *testing.B) {
	for _, s := range runtimeSizes {
		raw := benchState(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := ParseDocument(raw); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRuntimeStaticGates: the scope and phase gates, which look only
// at the patch: O(patch), no allocation, whatever the state.
func BenchmarkRuntimeStaticGates(b *testing.B) {
	c := MustCompile(benchSpec)
	p, err := DecodeProposal([]byte(benchPatch), 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range runtimeSizes {
		b.Run(s.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if r := c.scopeGate(GateScope, p.Patch, true); !r.Passed {
					b.Fatal(r)
				}
				if r := c.phaseGate("review"); !r.Passed {
					b.Fatal(r)
				}
			}
		})
	}
}

// runtimeStageName names a stage benchmark.
func runtimeStageName(stage string, size int) string {
	return fmt.Sprintf("%s/%s", stage, runtimeSizes[size].name)
}
