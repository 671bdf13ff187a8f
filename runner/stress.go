package runner

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

// Stress submits every artifact of every case to every configuration's
// gates (the no-model stress test, docs/regression.md), on the state and
// in the phase the case's reference run reaches before the artifact's
// step (or its submit_phase), each in a session of its own
// (bench.Step.Submit), and tallies the decisions (scoring.StressTally). Each
// artifact is also submitted to every gate on its own (bench.Step.GatesAlone):
// a gate its caught_by names that does not catch it is a mismatch even
// when another gate rejects it in every configuration.
func Stress(ctx context.Context, cases []*bench.Case, configs []*bench.Config) (*scoring.StressResult, error) {
	tally := scoring.NewStressTally(configs)
	for _, c := range cases {
		run, err := bench.RunReference(ctx, c)
		if err != nil {
			return nil, err
		}
		for _, a := range c.Artifacts {
			rs := run.At(a.Step)
			if rs == nil {
				return nil, fmt.Errorf("case %s artifact %s: the reference run never reaches step %s (patchbench validate says why)", c.ID, a.ID, a.Step)
			}
			phase := rs.Phase
			if a.SubmitPhase != "" {
				phase = a.SubmitPhase
			}
			alone, err := rs.Step.GatesAlone(ctx, rs.Before, a.Proposal, phase)
			if err != nil {
				return nil, err
			}
			tally.AddAlone(c, a, alone)
			for _, cfg := range configs {
				d, err := rs.Step.Submit(ctx, rs.Before, a.Proposal, cfg.GateSet, phase)
				if err != nil {
					return nil, err
				}
				if err := tally.Add(c, a, cfg, d); err != nil {
					return nil, err
				}
			}
		}
	}
	return tally.Result(), nil
}
