package schemaindex

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestLongestArray: the array validated in parts is the longest one
// reached through objects, the first by location among equals.
func TestLongestArray(t *testing.T) {
	for _, tt := range []struct{ doc, at string }{
		{`[1,2]`, ""},
		{`{"a":[1],"b":{"c":[1,2,3]},"d":[1,2]}`, "/b/c"},
		{`{"b":[1,2],"a":[3,4]}`, "/a"},
		{`{"a":[[1,2,3,4]],"b":{"c":{"d":{"e":[1,2,3,4,5]}}}}`, "/a"},
		{`{"a":1}`, ""},
	} {
		var v any
		if err := json.Unmarshal([]byte(tt.doc), &v); err != nil {
			t.Fatal(err)
		}
		toks, _, _ := longestArray(v, 3)
		at := ""
		if len(toks) > 0 {
			at = "/" + strings.Join(toks, "/")
		}
		if at != tt.at {
			t.Errorf("%s: %q, want %q", tt.doc, at, tt.at)
		}
	}
}
