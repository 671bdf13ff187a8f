package runtime

import (
	"context"
	"strconv"
	"strings"
	"testing"
)

// limitState is a state whose hidden part is filler: two hidden strings
// of pad and b bytes and an object nested depth levels deep.
func limitState(pad, b, depth int) string {
	deep := `"leaf"`
	for range depth {
		deep = `{"d":` + deep + `}`
	}
	return `{"shown":{"a":"abc","list":[1,2],"o":{"p":{}}},"hidden":{"pad":"` + strings.Repeat("x", pad) +
		`","b":"` + strings.Repeat("y", b) + `","deep":` + deep + `}}`
}

// TestLimitMessagesNeverTellHiddenSizes: a rejection
// at a limit says only what the view and the proposal show. Two states
// that differ only in the size or depth of data outside the view give the
// same decision for the same proposal, on the footprint path and on the
// whole-document path, and no message carries a measured size of the
// state (326 bytes, say) that hidden data made up.
func TestLimitMessagesNeverTellHiddenSizes(t *testing.T) {
	spec := func(l Limits) ContractSpec {
		return ContractSpec{
			View:   ViewSpec{Include: []string{"/shown"}},
			Write:  []string{"/shown"},
			Source: []string{"/shown"},
			Limits: l,
		}
	}
	tests := []struct {
		name   string
		limits Limits
		patch  string
		states [2]string
		want   string // a part of the message
	}{
		{name: "document size, a small write",
			limits: Limits{MaxDocumentBytes: 300},
			patch:  `[{"op":"add","path":"/shown/note","value":"` + strings.Repeat("n", 40) + `"}]`,
			states: [2]string{limitState(80, 80, 1), limitState(100, 100, 1)},
			want:   "over the document-size limit"},
		{name: "document size, a write larger than the limit",
			limits: Limits{MaxDocumentBytes: 300},
			patch:  `[{"op":"add","path":"/shown/note","value":"` + strings.Repeat("n", 400) + `"}]`,
			states: [2]string{limitState(10, 10, 1), limitState(30, 30, 1)},
			want:   "the values the patch writes have 402 bytes"},
		{name: "document size, a hidden value moved into the view",
			limits: Limits{MaxDocumentBytes: 300},
			patch:  `[{"op":"copy","from":"/hidden/pad","path":"/shown/note"}]`,
			states: [2]string{limitState(100, 10, 1), limitState(150, 10, 1)},
			want:   "over the document-size limit"},
		{name: "copy size, the copy that crosses the limit depends on hidden sizes",
			limits: Limits{MaxCopyBytes: 100},
			patch:  `[{"op":"copy","from":"/hidden/pad","path":"/shown/x"},{"op":"copy","from":"/hidden/b","path":"/shown/y"}]`,
			states: [2]string{limitState(150, 10, 1), limitState(60, 60, 1)},
			want:   "copy-size limit"},
		{name: "depth, a hidden subtree copied deeper",
			limits: Limits{MaxDepth: 12},
			patch:  `[{"op":"copy","from":"/hidden/deep","path":"/shown/o/p/x"}]`,
			states: [2]string{limitState(5, 5, 9), limitState(5, 5, 10)},
			want:   "deeper than the depth limit"},
		{name: "depth, a written value nests too deep at its location",
			limits: Limits{MaxDepth: 6},
			patch:  `[{"op":"add","path":"/shown/o/p/q","value":{"a":{"b":{"c":1}}}}]`,
			states: [2]string{limitState(5, 5, 1), limitState(5, 5, 2)},
			want:   "the values the patch writes nest 7 levels deep"},
		{name: "operation count",
			limits: Limits{MaxOps: 1},
			patch:  `[{"op":"test","path":"/shown/a","value":"abc"},{"op":"test","path":"/shown/a","value":"abc"}]`,
			states: [2]string{limitState(5, 5, 1), limitState(500, 5, 1)},
			want:   "the patch has 2 operations"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Compile(spec(tc.limits))
			if err != nil {
				t.Fatal(err)
			}
			var first *GateResult
			for si, st := range tc.states {
				doc, err := parseDocument([]byte(st), 64)
				if err != nil {
					t.Fatal(err)
				}
				size := strconv.Itoa(len(doc.Bytes()))
				for _, c := range []*Contract{c, wholeOnly(c)} {
					for _, gates := range []GateSet{{}, {ACL: true, Schema: true, Invariants: true}} {
						d, err := c.Verify(context.Background(), doc, []byte(tc.patch), VerifyOptions{Gates: gates})
						if err != nil {
							t.Fatal(err)
						}
						r := d.Rejection()
						if r == nil || r.Code != CodeLimitExceeded {
							t.Fatalf("state %d (%s): %+v; want limit_exceeded", si, d.path, d.Gates)
						}
						if !strings.Contains(r.Message, tc.want) {
							t.Errorf("state %d (%s): message %q does not say %q", si, d.path, r.Message, tc.want)
						}
						if strings.Contains(r.Message, size) {
							t.Errorf("state %d (%s): message %q tells the state's size %s", si, d.path, r.Message, size)
						}
						if first == nil {
							first = r
						} else if r.Message != first.Message || r.Pointer != first.Pointer || r.Gate != first.Gate {
							t.Errorf("state %d (%s): %+v; the other state gave %+v: the decision depends on hidden data", si, d.path, *r, *first)
						}
					}
				}
			}
		})
	}
}
