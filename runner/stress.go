package runner

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/bench/check"
)

// StressCell counts the artifacts of one category one configuration
// accepted (committed).
type StressCell struct {
	Config   string `json:"config"`
	Category string `json:"category"`
	Accepted int    `json:"accepted"`
	Total    int    `json:"total"`
}

// StressSet counts the paper's hidden-source artifacts one configuration
// accepted.
type StressSet struct {
	Config   string `json:"config"`
	Accepted int    `json:"accepted"`
	Total    int    `json:"total"`
}

// Mismatch is an artifact whose decision in a configuration differs from
// what its caught_by predicts.
type Mismatch struct {
	Case      string `json:"case"`
	Artifact  string `json:"artifact"`
	Config    string `json:"config"`
	Committed bool   `json:"committed"`
	Expected  bool   `json:"expected_committed"`
	Gate      string `json:"gate,omitempty"`
	Code      string `json:"code,omitempty"`
}

// StressResult is the no-model stress test (PatchBench design §1): every
// artifact against every configuration, with no actor.
type StressResult struct {
	Cells      []StressCell `json:"cells"`
	PaperSet   []StressSet  `json:"paper_set"`
	Mismatches []Mismatch   `json:"mismatches"`
}

// Stress submits every artifact of every case to every configuration's
// gates, on the state and in the phase the case's reference run reaches
// before the artifact's step (or its submit_phase).
func Stress(ctx context.Context, cases []*bench.Case, configs []*bench.Config) (*StressResult, error) {
	res := &StressResult{Mismatches: []Mismatch{}}
	cells := map[[2]string]*StressCell{}
	paper := map[string]*StressSet{}
	for _, cfg := range configs {
		for _, cat := range bench.Categories {
			cells[[2]string{cfg.Name, cat}] = &StressCell{Config: cfg.Name, Category: cat}
		}
		paper[cfg.Name] = &StressSet{Config: cfg.Name}
	}
	for _, c := range cases {
		run, err := check.RunReference(ctx, c)
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
			for _, cfg := range configs {
				// Each submission starts from the state before the step:
				// a session of its own, in the artifact's phase.
				d, err := check.Submit(ctx, rs.Step, rs.Before, a.Proposal, cfg.GateSet, phase)
				if err != nil {
					return nil, err
				}
				cell := cells[[2]string{cfg.Name, a.Category}]
				if cell == nil {
					return nil, fmt.Errorf("case %s artifact %s: unknown category %q", c.ID, a.ID, a.Category)
				}
				cell.Total++
				if d.Committed {
					cell.Accepted++
				}
				if a.PaperSet {
					paper[cfg.Name].Total++
					if d.Committed {
						paper[cfg.Name].Accepted++
					}
				}
				expected := true
				for _, g := range a.CaughtBy {
					if cfg.Runs(g) {
						expected = false
					}
				}
				if d.Committed != expected {
					m := Mismatch{Case: c.ID, Artifact: a.ID, Config: cfg.Name, Committed: d.Committed, Expected: expected}
					if r := d.Rejection(); r != nil {
						m.Gate, m.Code = r.Gate, r.Code
					}
					res.Mismatches = append(res.Mismatches, m)
				}
			}
		}
	}
	for _, cfg := range configs {
		for _, cat := range bench.Categories {
			res.Cells = append(res.Cells, *cells[[2]string{cfg.Name, cat}])
		}
		res.PaperSet = append(res.PaperSet, *paper[cfg.Name])
	}
	return res, nil
}

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
func Replay(ctx context.Context, cases []*bench.Case, cfg *bench.Config, o Options) ([]*Record, error) {
	tc, err := newCounter(o.Tokenizer)
	if err != nil {
		return nil, err
	}
	var out []*Record
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
