package report

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// A row whose runs all ended in an error measured nothing: summary.json
// holds null rates and intervals for it, not 0; a measured row keeps its
// figures, and the members keep their order.
func TestUnmeasuredRowIsNull(t *testing.T) {
	cfg := &bench.Config{Name: "patchoptic", Label: "PatchOptic", View: bench.ViewProjected}
	errRun := func(actor string, round int) *rundir.Record {
		msg := "connection refused"
		return &rundir.Record{RunID: "c/patchoptic/" + actor, Case: "c", Config: "patchoptic", Actor: actor, Round: round, Status: rundir.StatusError, Error: &msg}
	}
	passed := &rundir.Record{RunID: "c/patchoptic/reference/1", Case: "c", Config: "patchoptic", Actor: "reference", Round: 1, Status: rundir.StatusPassed,
		SemanticPass: true, LegalPass: true, ContentScore: 1}
	s := Summarize([]*rundir.Record{errRun("openai:m", 1), errRun("openai:m", 2), passed}, []*bench.Config{cfg}, []string{"openai:m", "reference"})
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ Rows []map[string]any }
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	dead, live := got.Rows[0], got.Rows[1]
	for name := range unmeasured {
		if v, ok := dead[name]; !ok || v != nil {
			t.Errorf("all errors: %s = %v, want null", name, v)
		}
		if live[name] == nil {
			t.Errorf("measured: %s is null", name)
		}
	}
	if dead["runs"] != 2.0 || dead["errors"] != 2.0 || live["semantic_pass"] != 1.0 {
		t.Errorf("counts: %v / %v", dead, live)
	}
	if i, j := strings.Index(string(b), `"leak_rate":null`), strings.Index(string(b), `"leaked_per_round":null`); i < 0 || j < i {
		t.Errorf("member order: %s", b)
	}
	// Every rate, mean and interval of a Row is nulled when unmeasured.
	rt := reflect.TypeFor[Row]()
	for i := range rt.NumField() {
		f := rt.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if (f.Type.Kind() == reflect.Float64 || f.Type == reflect.TypeFor[scoring.Interval]()) && !unmeasured[name] {
			t.Errorf("Row.%s (%s) is not nulled when nothing is measured", f.Name, name)
		}
	}
}
