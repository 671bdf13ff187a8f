package runtime

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestInvariantConjunctReads checks the invariants' read footprint rule
// by rule: each conjunct's reads as text.
func TestInvariantConjunctReads(t *testing.T) {
	state := map[string]any{"items": []any{"a", "b"}, "flags": map[string]any{"x": 1}}
	for _, tc := range []struct {
		rule string
		want [][]string
	}{
		{"post.a.b == pre.a.b", [][]string{{"/a/b", "/a/b"}}},
		{"post.a && size(post.items) > 0", [][]string{{"/a"}, {"the size of /items"}}},
		{"!has(post.a.b) || phase == 'x'", [][]string{{"whether /a/b exists"}}},
		{"post.items[post.n] == 'a'", [][]string{{"/items/*", "/n"}}},
		{"post == pre", [][]string{{"the whole state", "the whole state"}}},
		{"post.items.all(i, i != 'z')", [][]string{{"/items/0"}, {"/items/1"}, {"/items/\x00new"}}},
		{"post.flags.exists(k, post.flags[k] > 0)", [][]string{{"the size of /flags", "/flags/*"}}},
	} {
		conj, err := InvariantConjunctReads(tc.rule, state)
		if err != nil {
			t.Fatalf("%s: %v", tc.rule, err)
		}
		var got [][]string
		for _, c := range conj {
			var s []string
			for _, r := range c {
				s = append(s, r.String())
			}
			got = append(got, s)
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("%s: mismatch (-want +got):\n%s", tc.rule, diff)
		}
	}
	if _, err := InvariantConjunctReads("post.(", state); err == nil {
		t.Error("a rule that does not parse gave no error")
	}
}
