package report_test

import (
	"encoding/json"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

// The summary does not depend on the order the records come in (runs end
// in any order): its means are summed in the order of the runs' jobs.
func TestSummaryIgnoresRecordOrder(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the suite and shuffles its records")
	}
	cases, problems, err := bench.LoadEmbeddedCases()
	recs, configs := runCases(t, cases, problems, err, func(o *runner.Options) {
		o.Configs = o.Configs[:2]
		o.Actors = []actors.Actor{actors.Follower{}, actors.Oversharer{}}
		o.Rounds, o.Concurrency = 2, 1
	})
	names := []string{"follower", "oversharer"}
	want, _ := json.Marshal(report.Summarize(recs, configs, names))
	sum := func(recs []*rundir.Record) (s float64) {
		for _, r := range recs {
			if r.Config == configs[0].Name && r.Actor == "follower" {
				s += r.ContentScore
			}
		}
		return s
	}
	naive := sum(recs)
	differs := false
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 8 {
		recs := slices.Clone(recs)
		rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
		differs = differs || sum(recs) != naive
		got, _ := json.Marshal(report.Summarize(recs, configs, names))
		if string(got) != string(want) {
			t.Fatalf("shuffle %d: the summary changed with the records' order", i)
		}
	}
	if !differs {
		t.Fatal("no shuffle changed a plain sum: the fixture cannot tell")
	}
}
