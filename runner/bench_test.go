package runner

import (
	"context"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
)

// BenchmarkRunOneCasePatchOptic is one full run (every step: project,
// prompt, token counts, verify, commit, score) of one suite case under
// PatchOptic with the reference actor.
func BenchmarkRunOneCasePatchOptic(b *testing.B) {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		b.Fatal(err, ps)
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var c *bench.Case
	for _, x := range cases {
		if x.ID == "fin-payment-run-approval" {
			c = x
		}
	}
	var po *bench.Config
	for _, cfg := range cfgs {
		if cfg.Name == "patchoptic" {
			po = cfg
		}
	}
	tc, err := newCounter("")
	if err != nil {
		b.Fatal(err)
	}
	o := Options{MaxAttempts: 1, PassThreshold: 0.8}
	j := Job{Case: c, Config: po, Actor: actors.Reference{}, Round: 1}
	b.ReportAllocs()
	for b.Loop() {
		r, err := runOne(context.Background(), o, tc, j)
		if err != nil || r.Status != rundir.StatusPassed {
			b.Fatal(err, r.Status)
		}
	}
}
