package runner

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
)

// TestWrittenStateLeaksAsWhole: reading the final state for leaks only
// where the run's commits wrote finds the same leaks as reading it whole,
// run by run, for the no-model actors and the bulk shortcut on the suite
// in every configuration (every fourth case under -short). On the whole
// suite the runs read where written of reference, oversharer and
// follower are the default run's (defaultSuiteRun, the same settings but
// the concurrency and the token encoding, which leaks do not depend on):
// only the bulk actor's is made here.
func TestWrittenStateLeaksAsWhole(t *testing.T) {
	if testing.Short() {
		t.Skip("writes large states")
	}
	cases, cfgs := loadSuite(t)
	noModel := []actors.Actor{actors.Reference{}, actors.Oversharer{}, actors.Follower{}}
	var shared []*rundir.Record // runs read where written, from the default run
	if !testing.Short() {
		_, _, shared = defaultSuiteRun(t)
	}
	if testing.Short() {
		var some = cases[:0:0]
		for i, c := range cases {
			if i%4 == 0 || c.ID == "mkt-crm-segment-export" {
				some = append(some, c)
			}
		}
		cases = some
	}
	leaks := func(out map[string]string, recs []*rundir.Record) map[string]string {
		for _, r := range recs {
			b, _ := json.Marshal(r.Leaks)
			out[r.RunID] = string(b)
		}
		return out
	}
	run := func(whole bool, acts []actors.Actor) map[string]string {
		scoreWholeState = whole
		defer func() { scoreWholeState = false }()
		sink := &memSink{}
		o := Options{Cases: cases, Configs: cfgs, Actors: acts, Concurrency: 2}
		o.Rounds, o.MaxAttempts, o.PassThreshold, o.Tokenizer = 1, 1, 0.8, "o200k_base"
		if err := Run(context.Background(), o, nil, sink); err != nil {
			t.Fatal(err)
		}
		return leaks(map[string]string{}, sink.recs)
	}
	whole := run(true, append(slices.Clone(noModel), actors.Bulk{}))
	var written map[string]string
	if shared != nil {
		written = leaks(run(false, []actors.Actor{actors.Bulk{}}), shared)
	} else {
		written = run(false, append(slices.Clone(noModel), actors.Bulk{}))
	}
	if len(written) != len(whole) {
		t.Errorf("%d runs read where written, %d read whole", len(written), len(whole))
	}
	stateLeaks := 0
	for id, w := range whole {
		if written[id] != w {
			t.Errorf("%s: leaks read where written %s, read whole %s", id, written[id], w)
		}
		var ls []struct{ Where string }
		json.Unmarshal([]byte(w), &ls)
		for _, l := range ls {
			if l.Where == "state" {
				stateLeaks++
			}
		}
	}
	if len(whole) == 0 || stateLeaks == 0 {
		t.Fatalf("%d runs, %d state leaks: nothing compared", len(whole), stateLeaks)
	}
}
