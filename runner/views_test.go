package runner

import (
	"bytes"
	"context"
	"crypto/sha256"
	"reflect"
	"testing"
	"unsafe"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
)

// TestCaseViewsShared checks the view cache of cases' initial states:
// the view it gives is the one built for the step alone (value, text and
// digest), whole and projected, every run of the case gets the same one
// (built once), and a state that is not shared is built anew each time.
func TestCaseViewsShared(t *testing.T) {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	scale, _ := bench.ParseScale("200KB")
	for _, c := range cases[:8] {
		if len(c.Grow) > 0 {
			if c, err = c.Grown(scale, bench.DefaultScaleSeed); err != nil {
				t.Fatal(err)
			}
		}
		for _, s := range c.Steps {
			for _, projected := range []bool{false, true} {
				want, err := buildView(c.State, s, projected)
				if err != nil {
					t.Fatal(err)
				}
				got, err := caseViews.view(c.State, s, projected, true)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(got.text, want.text) || got.digest != want.digest || !reflect.DeepEqual(got.value, want.value) {
					t.Fatalf("%s %s projected=%v: the cached view differs from the step's own", c.ID, s.ID, projected)
				}
				again, _ := caseViews.view(c.State, s, projected, true)
				if &again.text[0] != &got.text[0] {
					t.Errorf("%s %s projected=%v: a second run got a view of its own", c.ID, s.ID, projected)
				}
				alone, _ := caseViews.view(c.State, s, projected, false)
				if &alone.text[0] == &got.text[0] || !bytes.Equal(alone.text, want.text) {
					t.Errorf("%s %s projected=%v: a state not shared was given the cached view", c.ID, s.ID, projected)
				}
			}
		}
		if got, want := hasPhasePlace(c), hasPhasePlace(c); got != want {
			t.Errorf("%s: hasPhasePlace %v then %v", c.ID, got, want)
		}
	}
}

// TestGrownStateSharedByRuns checks that the runs of a grown case share
// its grown state read-only: every run of every configuration starts its
// session on the case's one Document (the command grows each case once,
// before the runs: cmd/patchbench's runPlan), the configurations that
// show the whole state hand every actor that Document's own value (the
// same map, not a copy), those that project it one view built once, and
// after the runs, commits included, the state's text is as it was.
func TestGrownStateSharedByRuns(t *testing.T) {
	if testing.Short() {
		t.Skip("grows a case")
	}
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	scale, _ := bench.ParseScale("200KB")
	var c *bench.Case
	for _, x := range cases {
		if x.ID == "mkt-crm-segment-export" {
			c, err = x.Grown(scale, bench.DefaultScaleSeed)
		}
	}
	if c == nil || err != nil || c.State == nil {
		t.Fatal("no grown mkt-crm-segment-export", err)
	}
	before := sha256.Sum256(c.State.Bytes())
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	a := &scripted{name: "script", script: []actors.Response{{Raw: `{"patch": [], "note": "nothing"}`}}}
	o := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{a, actors.Reference{}},
		Spec: runspec.Spec{Rounds: 2, PassThreshold: 0.8, MaxAttempts: 1, Protocol: ProtocolJSON}, Concurrency: 2}
	if err := Run(context.Background(), o, nil, &memSink{}); err != nil {
		t.Fatal(err)
	}
	whole := reflect.ValueOf(c.State.Value()).UnsafePointer()
	views := map[string]map[unsafe.Pointer]bool{}
	for _, req := range a.reqs {
		if req.StepID != c.Steps[0].ID {
			continue
		}
		p := reflect.ValueOf(req.View).UnsafePointer()
		kind := "whole"
		if req.Projected {
			kind = "projected"
		} else if p != whole {
			t.Errorf("a run's actor was shown a copy of the whole state")
		}
		if views[kind] == nil {
			views[kind] = map[unsafe.Pointer]bool{}
		}
		views[kind][p] = true
	}
	if len(views["whole"]) != 1 || len(views["projected"]) != 1 {
		t.Errorf("the first step's views: %d whole, %d projected; want one of each shared by every run", len(views["whole"]), len(views["projected"]))
	}
	if after := sha256.Sum256(c.State.Bytes()); after != before {
		t.Error("the runs changed the grown state")
	}
}
