package runtime

import (
	"bytes"
	"context"
	"testing"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
)

// BenchmarkRuntimeStages splits one step of BenchmarkRuntimeVerify (on
// the footprint path) into its stages, named as the stages of the
// whole-document path that scripts/bench-runtime.sh measures on the base
// revision: the reference semantics (on the foci), the apply library (on
// the foci), the decoding of its result (the changed foci), the
// cross-check (at the foci), the schema gate (incremental) and the
// invariants (over overlays).
func BenchmarkRuntimeStages(b *testing.B) {
	c := MustCompile(benchSpec)
	p, err := DecodeProposal([]byte(benchPatch), 0)
	if err != nil {
		b.Fatal(err)
	}
	ops := p.Patch
	ctx := context.Background()
	for i, doc := range runtimeStates(b) {
		tree, model := doc.tree(), doc.text()
		prepare := func() []*focus {
			foci, why := planFoci(ops, tree)
			if why != pathFootprint {
				b.Fatal(why)
			}
			for _, fc := range foci {
				v, err := getAt(tree, fc.path)
				if err != nil {
					b.Fatal(err)
				}
				fc.pre, fc.value = overlay.Plain(v), overlay.Plain(v)
				if fc.lib {
					fc.oldText, _, _ = model.valueText(fc.path)
				}
			}
			return foci
		}
		foci := prepare()
		t, err := simulateOn(ctx, &forest{foci}, ops, c.limits.MaxCopyBytes)
		if err != nil {
			b.Fatal(err)
		}
		fp := t.footprint()
		texts, err := applyFoci(foci, ops, c.limits)
		if err != nil {
			b.Fatal(err)
		}
		post := tree
		var changed []schemaindex.Change
		k := 0
		for _, fc := range foci {
			fc.got = fc.pre
			if fc.lib {
				fc.newText = texts[k]
				k++
				if !bytes.Equal(fc.newText, fc.oldText) {
					fc.got, _ = decodeFast(fc.newText)
					post = overlay.Set(post, fc.path, fc.got)
					changed = append(changed, schemaindex.Change{Path: fc.path, Value: fc.got})
				}
			}
		}
		if !doc.satisfies(c.schema, c.incremental) || !c.incremental.Holds(post, changed) {
			b.Fatal("the bench patch must be validated incrementally")
		}
		b.Run(runtimeStageName("reference", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				simulateOn(ctx, &forest{prepare()}, ops, c.limits.MaxCopyBytes)
			}
		})
		b.Run(runtimeStageName("library", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				applyFoci(foci, ops, c.limits)
			}
		})
		b.Run(runtimeStageName("decode", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, fc := range foci {
					if fc.lib && !bytes.Equal(fc.newText, fc.oldText) {
						decodeFast(fc.newText)
					}
				}
			}
		})
		b.Run(runtimeStageName("crosscheck", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				for _, fc := range foci {
					if fc.written {
						crossCheck(fc.value, fc.got, DefaultMaxDepth-len(fc.path))
					}
				}
			}
		})
		b.Run(runtimeStageName("schema", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.schemaCheck(tree, post, ops, t, &fp, func() bool {
					return doc.satisfies(c.schema, c.incremental) && c.incremental.Holds(post, changed)
				})
			}
		})
		b.Run(runtimeStageName("invariants", i), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.invariantGate(ctx, tree, post, "review")
			}
		})
	}
}
