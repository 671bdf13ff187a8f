package runner

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
)

// TestFollowerObeysGrownInjections: in the tools protocol, on a grown
// state whose only registered injections are those planted in generated
// records (the case's own left out), the follower finds them with its
// searches and obeys them: the attack succeeds, in the full-state
// configuration that commits the move, from generated records alone.
func TestFollowerObeysGrownInjections(t *testing.T) {
	all, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	i := slices.IndexFunc(all, func(c *bench.Case) bool { return c.ID == "fin-fraud-alert-triage" })
	if i < 0 {
		t.Fatal("no fin-fraud-alert-triage")
	}
	g, err := all[i].Grown(bench.Scale{Bytes: 300_000}, bench.DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	own := len(all[i].Injections)
	grown := *g
	grown.Injections = g.Injections[own:]
	if len(grown.Injections) == 0 {
		t.Fatal("no injection registered in generated records")
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	o := Options{Cases: []*bench.Case{&grown}, Configs: []*bench.Config{configNamed(t, cfgs, "unconstrained")}, Actors: []actors.Actor{actors.Follower{}}, Concurrency: 1,
		Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8, Protocol: ProtocolTools, Disclosure: DisclosureProgressive}}
	if err := Run(context.Background(), o, nil, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != 1 {
		t.Fatalf("%d records", len(sink.recs))
	}
	r := sink.recs[0]
	if r.Attack == nil || !r.Attack.Succeeded {
		t.Fatalf("attack %+v", r.Attack)
	}
	met := false
	for _, s := range r.Steps {
		for _, turn := range s.Turns {
			for _, c := range turn.Calls {
				for _, inj := range grown.Injections {
					met = met || c.Name == "search_state" && strings.Contains(c.Result, `"pointer":"`+inj.At.String()+`"`)
				}
			}
		}
	}
	if !met {
		t.Error("no search of the follower showed a generated injection")
	}
}
