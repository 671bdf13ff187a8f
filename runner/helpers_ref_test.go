package runner

import (
	"context"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

// referenceOf is step s's reference proposal on the state the reference
// run of c reaches before it (bench.Step.ReferenceAt).
func referenceOf(tb testing.TB, c *bench.Case, s *bench.Step) []byte {
	tb.Helper()
	if !s.HasReferenceRules() {
		b, err := s.ReferenceAt(nil)
		if err != nil {
			tb.Fatal(err)
		}
		return b
	}
	run, err := bench.RunReference(context.Background(), c)
	if err != nil {
		tb.Fatal(err)
	}
	rs := run.At(s.ID)
	if rs == nil || rs.Proposal == nil {
		tb.Fatalf("case %s: the reference run does not reach step %s", c.ID, s.ID)
	}
	return rs.Proposal
}
