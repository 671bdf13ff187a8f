package scoring

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// TestInValueAt: the final state read only at given containers finds a
// canary carried there (in a value or a member name) at its location in
// the whole state, reads a container inside another once, passes over a
// location the state lacks, and at the root reads as InValue does.
func TestInValueAt(t *testing.T) {
	var root any
	if err := json.Unmarshal([]byte(`{"a": {"card": "4000 0000 0000 9995"}, "b": {"x": ["note: 4000 0000 0000 9995"]}, "c": {"4000000000009995": 1}, "d": "clean"}`), &root); err != nil {
		t.Fatal(err)
	}
	det := NewDetector([]Canary{{ID: "card", Value: "4000 0000 0000 9995", Path: runtime.MustPointer("/a/card")}})
	paths := func(ls []Leak) []string {
		var out []string
		for _, l := range ls {
			out = append(out, l.Path)
		}
		return out
	}
	for _, tt := range []struct {
		at   []string
		want []string
	}{
		{[]string{"/b"}, []string{"/b/x/0"}},
		{[]string{"/b", "/b/x"}, []string{"/b/x/0"}},
		{[]string{"/c"}, []string{"/c/4000000000009995"}},
		{[]string{"/d", "/nowhere", "/a"}, nil},
		{[]string{""}, paths(det.InValue(root, true))},
	} {
		var at []runtime.Pointer
		for _, p := range tt.at {
			at = append(at, runtime.MustPointer(p))
		}
		if got := paths(det.InValueAt(root, at, true)); !slices.Equal(got, tt.want) {
			t.Errorf("at %q: leaks at %q, want %q", tt.at, got, tt.want)
		}
	}
}
