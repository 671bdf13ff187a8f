package runner

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/patchbench/patchbench/bench"
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
