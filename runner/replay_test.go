package runner

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// replayActor answers an artifact's step with the artifact's proposal and
// every earlier step with its reference proposal.
type replayActor struct{ a *bench.Artifact }

func (r replayActor) Name() string { return "replay:" + r.a.ID }

func (r replayActor) Propose(_ context.Context, req actors.Request) (actors.Response, error) {
	if req.StepID == r.a.Step {
		return actors.Response{Raw: string(r.a.Proposal)}, nil
	}
	return actors.Response{Raw: string(req.Reference)}, nil
}

// Replay replays every artifact of the cases as a run under cfg: the
// steps before the artifact's run with their reference proposals, the
// artifact's step gets the artifact (in its submit_phase, when it names
// one), and the run ends there. The records are scored like any run's, so
// the stress test's artifacts can be counted as illegal commits in any
// configuration; the actor of each record is "replay:<artifact id>".
func Replay(ctx context.Context, cases []*bench.Case, cfg *bench.Config, o Options) ([]*rundir.Record, error) {
	tc, err := newCounter(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	var out []*rundir.Record
	for _, c := range cases {
		for _, a := range c.Artifacts {
			rec, err := runOne(ctx, o, tc, Job{Case: c, Config: cfg, Actor: replayActor{a}, Round: 1, Artifact: a})
			if err != nil {
				return nil, fmt.Errorf("case %s artifact %s: %w", c.ID, a.ID, err)
			}
			out = append(out, rec)
		}
	}
	return out, nil
}

// summarize is the summary of records held in memory.
func summarize(recs []*rundir.Record, configs []*bench.Config, actorNames []string) report.Summary {
	s := report.NewSummarizer(configs, actorNames)
	for _, r := range recs {
		s.Add(r)
	}
	return s.Summary()
}
