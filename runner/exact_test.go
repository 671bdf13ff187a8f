package runner

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
)

// TestExactTotalInEveryConfiguration checks, as a run, that numbers are
// judged exactly (docs/contracts-and-gates.md): the
// test-only case sup-exact-total lets its step write the order total,
// which an invariant keeps at 42.50, and an actor writes
// 42.500000000000000000000000000001 beside the reference patch. Where
// invariants are enforced (Verify Only, PatchOptic) the total is never
// committed; everywhere else it is, and the audit counts the commit as
// illegal (inexact_number). Before the fix all six configurations
// committed it with no illegal commit.
func TestExactTotalInEveryConfiguration(t *testing.T) {
	b, err := os.ReadFile("testdata/sup-exact-total.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, ps := bench.ParseCase("sup-exact-total.yaml", b)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	const longer = "42.500000000000000000000000000001"
	a := scriptedActor{"reply": `{"patch":[{"op":"replace","path":"/order/total","value":` + longer + `},` +
		`{"op":"replace","path":"/ticket/reply","value":"Dear Ada, a refund of 42.50 EUR for order ORD-1001 is on its way."},` +
		`{"op":"replace","path":"/ticket/status","value":"resolved"},{"op":"add","path":"/audit/-","value":"refund confirmed"}],"note":"refund"}`}
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 2}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != len(cfgs) {
		t.Fatalf("%d records, want %d", len(sink.recs), len(cfgs))
	}
	for _, r := range sink.recs {
		var cfg *bench.Config
		for _, x := range cfgs {
			if x.Name == r.Config {
				cfg = x
			}
		}
		changed := bytes.Contains(r.FinalState, []byte(longer))
		t.Logf("%-13s committed %v, final total changed %v, illegal commits %d %v", r.Config, r.Steps[0].Committed, changed, len(r.IllegalCommits), r.IllegalCommits)
		if cfg.GateSet.Invariants {
			if r.Steps[0].Committed || changed || len(r.IllegalCommits) != 0 {
				t.Errorf("%s enforces invariants: committed %v, total changed %v, illegal commits %+v", r.Config, r.Steps[0].Committed, changed, r.IllegalCommits)
			}
			if g := r.Steps[0].Decisions[len(r.Steps[0].Decisions)-1]; g.Gate != runtime.GateInvariants || g.Code != runtime.CodeInexactNumber {
				t.Errorf("%s: rejected by %s/%s, want invariants/inexact_number", r.Config, g.Gate, g.Code)
			}
			continue
		}
		if !r.Steps[0].Committed || !changed {
			t.Errorf("%s does not enforce invariants, yet the total was not committed: %+v", r.Config, r.Steps[0].Decisions)
		}
		if len(r.IllegalCommits) != 1 || r.IllegalCommits[0].Gate != runtime.GateInvariants || r.IllegalCommits[0].Code != runtime.CodeInexactNumber {
			t.Errorf("%s: illegal commits %+v, want one, invariants/inexact_number", r.Config, r.IllegalCommits)
		}
	}
}
