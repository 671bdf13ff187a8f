package runner

import (
	"context"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

// BenchmarkRunOneCasePatchOptic is one full run (every step: project,
// prompt, token counts, verify, commit, score) of one suite case under
// PatchOptic with the reference actor.
func BenchmarkRunOneCasePatchOptic(b *testing.B) {
	c, _, po, _ := stageCase(b)
	tc, err := newCounter("")
	if err != nil {
		b.Fatal(err)
	}
	o := Options{Spec: runspec.Spec{MaxAttempts: 1, PassThreshold: 0.8}}
	j := Job{Case: c, Config: po, Actor: actors.Reference{}, Round: 1}
	b.ReportAllocs()
	for b.Loop() {
		r, err := runOne(context.Background(), o, tc, j)
		if err != nil || r.Status != rundir.StatusPassed {
			b.Fatal(err, r.Status)
		}
	}
}
