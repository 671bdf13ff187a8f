package runner

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/patchbench/patchbench/actors"
)

// TestWrittenStateLeaksAsWhole: reading the final state for leaks only
// where the run's commits wrote finds the same leaks as reading it whole,
// run by run, for the no-model actors and the bulk shortcut on the suite
// in every configuration (every fourth case under -short).
func TestWrittenStateLeaksAsWhole(t *testing.T) {
	cases, cfgs := loadSuite(t)
	if testing.Short() {
		var some = cases[:0:0]
		for i, c := range cases {
			if i%4 == 0 || c.ID == "mkt-crm-segment-export" {
				some = append(some, c)
			}
		}
		cases = some
	}
	run := func(whole bool) map[string]string {
		scoreWholeState = whole
		defer func() { scoreWholeState = false }()
		sink := &memSink{}
		o := Options{Cases: cases, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}, actors.Oversharer{}, actors.Follower{}, actors.Bulk{}}, Concurrency: 2}
		o.Rounds, o.MaxAttempts, o.PassThreshold, o.Tokenizer = 1, 1, 0.8, "o200k_base"
		if err := Run(context.Background(), o, nil, sink); err != nil {
			t.Fatal(err)
		}
		out := map[string]string{}
		for _, r := range sink.recs {
			b, _ := json.Marshal(r.Leaks)
			out[r.RunID] = string(b)
		}
		return out
	}
	whole, written := run(true), run(false)
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
