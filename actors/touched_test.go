package actors

import (
	"encoding/json"
	"fmt"
	"slices"
	"testing"
)

// A no-model actor reads what its patch touches, but a patch generated
// over a grown state (a hundred tickets) is read as its containers, within
// maxTouchedReads, not one read a location.
func TestTouchedPathsBounded(t *testing.T) {
	var patch []map[string]any
	for i := range 100 {
		patch = append(patch,
			map[string]any{"op": "replace", "path": fmt.Sprintf("/tickets/%d/category", i), "value": "billing"},
			map[string]any{"op": "replace", "path": fmt.Sprintf("/tickets/%d/priority", i), "value": "normal"})
	}
	patch = append(patch, map[string]any{"op": "add", "path": "/triage_log/-", "value": "x"})
	b, _ := json.Marshal(map[string]any{"patch": patch})
	got, err := touchedPaths(b)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, []string{"/tickets", "/triage_log"}) {
		t.Errorf("reads %v, want [/tickets /triage_log]", got)
	}
	// A small patch is read location by location, as before.
	small, _ := json.Marshal(map[string]any{"patch": patch[:3]})
	if got, _ := touchedPaths(small); !slices.Equal(got, []string{"/tickets/0/category", "/tickets/0/priority", "/tickets/1/category"}) {
		t.Errorf("reads %v", got)
	}
}
