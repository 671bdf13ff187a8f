package runtime

import (
	"encoding/json"
	"testing"
)

// TestATypeName: every JSON type of a decoded value, with its article.
func TestATypeName(t *testing.T) {
	for _, c := range []struct {
		v    any
		want string
	}{
		{nil, "null"}, {true, "a boolean"}, {"x", "a string"}, {json.Number("1"), "a number"},
		{[]any{}, "an array"}, {map[string]any{}, "an object"}, {int8(1), "a int8"},
	} {
		if got := ATypeName(c.v); got != c.want {
			t.Errorf("ATypeName(%#v) = %q, want %q", c.v, got, c.want)
		}
	}
}
