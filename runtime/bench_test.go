package runtime

import (
	"context"
	"encoding/json"
	"testing"

	jsonpatch "github.com/evanphx/json-patch/v5"

	"github.com/patchbench/patchbench/internal/benchload"
)

// benchState builds a deterministic state of about size bytes of
// generator budget (benchload.State, shared with scripts/bench-peers.sh).
func benchState(size int) []byte { return benchload.State(size) }

var benchSpec = ContractSpec{
	View:   ViewSpec{Include: []string{"/records", "/summary", "/phase"}, Exclude: []string{"/records/*/account"}},
	Write:  []string{"/summary", "/log/-", "/records/*/tags"},
	Source: []string{"/records/*/balance", "/summary"},
	Phases: []string{"review"},
	Schema: map[string]any{
		"type":     "object",
		"required": []any{"meta", "records", "summary"},
		"properties": map[string]any{
			"summary": map[string]any{"type": "object", "required": []any{"total"}, "properties": map[string]any{"total": map[string]any{"type": "number", "minimum": json.Number("0")}}},
			"records": map[string]any{"type": "array", "items": map[string]any{
				"type": "object", "required": []any{"id", "balance"},
				"properties": map[string]any{"id": map[string]any{"type": "string"}, "balance": map[string]any{"type": "number"}},
			}},
		},
	},
	OutputSchema: map[string]any{"/summary/note": map[string]any{"type": "string", "maxLength": json.Number("500")}},
	Invariants: []InvariantSpec{
		{Name: "records kept", Rule: "size(post.records) == size(pre.records)"},
		{Name: "total not negative", Rule: "post.summary.total >= 0"},
	},
}

const benchPatch = `[
 {"op":"replace","path":"/summary/total","value":1234.5},
 {"op":"replace","path":"/summary/note","value":"Reviewed the five largest balances."},
 {"op":"add","path":"/log/-","value":"reviewed"},
 {"op":"add","path":"/records/5/tags/-","value":"flagged"},
 {"op":"copy","from":"/records/3/balance","path":"/summary/last"}
]`

var benchSizes = []struct {
	name string
	size int
}{{"10KB", 10 << 10}, {"1MB", 1 << 20}, {"10MB", 10 << 20}}

// BenchmarkVerify: a full verification (parse, scope, phase, apply,
// schema, invariants) with a contract compiled once.
func BenchmarkVerify(b *testing.B) {
	c := MustCompile(benchSpec)
	for _, s := range benchSizes {
		doc, err := ParseDocument(benchState(s.size))
		if err != nil {
			b.Fatal(err)
		}
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(doc.Bytes())))
			b.ReportAllocs()
			for b.Loop() {
				d, err := c.Verify(context.Background(), doc, []byte(benchPatch), VerifyOptions{Gates: DefaultGates, Phase: "review"})
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
			}
		})
	}
}

// BenchmarkApplyBare: the same patch applied by evanphx/json-patch/v5
// alone, decoding the patch and applying it to the state's text.
func BenchmarkApplyBare(b *testing.B) {
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = DefaultLimits.MaxCopyBytes
	opts.EscapeHTML = false
	for _, s := range benchSizes {
		raw := benchState(s.size)
		b.Run(s.name, func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
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

// BenchmarkStaticGates: the scope and phase gates alone. They look only at
// the pointers a patch names, so their cost must not grow with the state.
func BenchmarkStaticGates(b *testing.B) {
	c := MustCompile(benchSpec)
	p, err := DecodeProposal([]byte(benchPatch), 0)
	if err != nil {
		b.Fatal(err)
	}
	for _, s := range benchSizes {
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

// BenchmarkVerifyStages splits a 1 MB verification into its stages, to see
// where the time goes.
func BenchmarkVerifyStages(b *testing.B) {
	c := MustCompile(benchSpec)
	doc, _ := ParseDocument(benchState(1 << 20))
	p, _ := DecodeProposal([]byte(benchPatch), 0)
	post, t, err := simulate(context.Background(), doc.Value(), p.Patch, 1<<30)
	if err != nil {
		b.Fatal(err)
	}
	raw, err := applyLibrary(doc.raw, p.Patch, t.roots, c.limits)
	if err != nil {
		b.Fatal(err)
	}
	got, _ := decodeFast(raw)
	fp := t.footprint()
	b.Run("simulate", func(b *testing.B) {
		for b.Loop() {
			simulate(context.Background(), doc.Value(), p.Patch, 1<<30)
		}
	})
	b.Run("library", func(b *testing.B) {
		for b.Loop() {
			applyLibrary(doc.raw, p.Patch, t.roots, c.limits)
		}
	})
	b.Run("decode", func(b *testing.B) {
		for b.Loop() {
			decodeFast(raw)
		}
	})
	b.Run("crosscheck", func(b *testing.B) {
		for b.Loop() {
			crossCheck(post, got, DefaultMaxDepth)
		}
	})
	b.Run("schema", func(b *testing.B) {
		for b.Loop() {
			c.schemaCheck(doc.Value(), got, p.Patch, t, &fp, nil)
		}
	})
	b.Run("invariants", func(b *testing.B) {
		for b.Loop() {
			c.invariantGate(context.Background(), doc.Value(), got, "review")
		}
	})
}
