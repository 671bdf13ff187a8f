package runtime

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeProposalMalformed(t *testing.T) {
	deep := strings.Repeat("[", 100000) + strings.Repeat("]", 100000)
	tests := []struct {
		name, in string
	}{
		{"invalid JSON", `[{"op":"add","path":"/a","value":1}`},
		{"trailing data", `[{"op":"add","path":"/a","value":1}] []`},
		{"trailing garbage", `[] x`},
		{"NaN", `[{"op":"add","path":"/a","value":NaN}]`},
		{"Infinity", `[{"op":"add","path":"/a","value":Infinity}]`},
		{"negative Infinity", `[{"op":"add","path":"/a","value":-Infinity}]`},
		{"absurd nesting", `[{"op":"add","path":"/a","value":` + deep + `}]`},
		{"duplicate op", `[{"op":"add","op":"remove","path":"/a","value":1}]`},
		{"duplicate path", `[{"op":"remove","path":"/a","path":"/b"}]`},
		{"duplicate in value", `[{"op":"add","path":"/a","value":{"k":1,"k":2}}]`},
		{"duplicate patch", `{"patch":[],"patch":[{"op":"remove","path":"/a"}]}`},
		{"unknown op", `[{"op":"merge","path":"/a","value":1}]`},
		{"mis-cased op", `[{"op":"Add","path":"/a","value":1}]`},
		{"upper-case op", `[{"op":"ADD","path":"/a","value":1}]`},
		{"mis-cased member", `[{"Op":"add","path":"/a","value":1}]`},
		{"op not a string", `[{"op":1,"path":"/a"}]`},
		{"missing op", `[{"path":"/a","value":1}]`},
		{"missing path", `[{"op":"add","value":1}]`},
		{"mis-cased path", `[{"op":"add","Path":"/a","value":1}]`},
		{"path not a string", `[{"op":"remove","path":["a"]}]`},
		{"path null", `[{"op":"remove","path":null}]`},
		{"bad pointer", `[{"op":"remove","path":"a"}]`},
		{"bad escape", `[{"op":"remove","path":"/a~2"}]`},
		{"copy without from", `[{"op":"copy","path":"/a"}]`},
		{"move without from", `[{"op":"move","path":"/a"}]`},
		{"bad from", `[{"op":"move","from":"x","path":"/a"}]`},
		{"add without value", `[{"op":"add","path":"/a"}]`},
		{"replace without value", `[{"op":"replace","path":"/a"}]`},
		{"test without value", `[{"op":"test","path":"/a"}]`},
		{"operation not an object", `[["add","/a",1]]`},
		{"not a patch", `"add /a"`},
		{"object without patch", `{"ops":[]}`},
		{"mis-cased Patch", `{"Patch":[]}`},
		{"patch not an array", `{"patch":{}}`},
		{"note not a string", `{"patch":[],"note":5}`},
		{"empty input", ``},
		{"two values", `[][]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeProposal([]byte(tt.in), 0)
			var me *MalformedError
			if !errors.As(err, &me) {
				t.Fatalf("DecodeProposal(%.60q) = %+v, %v; want a *MalformedError", tt.in, p, err)
			}
			// And the verifier reports it as malformed_patch at the parse gate.
			d, err := openContract.Verify(t.Context(), mustDoc(t, `{"a":1}`), []byte(tt.in), VerifyOptions{Gates: DefaultGates})
			if err != nil {
				t.Fatal(err)
			}
			if d.Committed || len(d.Gates) != 1 || d.Gates[0].Gate != GateParse || d.Gates[0].Code != CodeMalformed {
				t.Fatalf("decision %+v; want one failed parse gate with %s", d.Gates, CodeMalformed)
			}
		})
	}
}

func TestDecodeProposalWellFormed(t *testing.T) {
	tests := []struct {
		name, in string
		ops      int
		note     string
	}{
		{"bare array", `[{"op":"add","path":"/a","value":1}]`, 1, ""},
		{"empty patch", `[]`, 0, ""},
		{"object with note", `{"patch":[{"op":"remove","path":"/a"}],"note":"done"}`, 1, "done"},
		{"extra members ignored", `[{"op":"remove","path":"/a","value":1,"from":"/x","comment":"hi"}]`, 1, ""},
		{"extra proposal members ignored", `{"patch":[],"note":"n","why":"because"}`, 0, "n"},
		{"null value is a value", `[{"op":"add","path":"/a","value":null}]`, 1, ""},
		{"white space", " \n[ ]\n ", 0, ""},
		{"every op", `[{"op":"add","path":"/a","value":1},{"op":"remove","path":"/a"},{"op":"replace","path":"/b","value":2},{"op":"move","from":"/b","path":"/c"},{"op":"copy","from":"/c","path":"/d"},{"op":"test","path":"/d","value":2}]`, 6, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p, err := DecodeProposal([]byte(tt.in), 0)
			if err != nil {
				t.Fatalf("DecodeProposal: %v", err)
			}
			if len(p.Patch) != tt.ops || p.Note != tt.note {
				t.Fatalf("got %d ops, note %q; want %d, %q", len(p.Patch), p.Note, tt.ops, tt.note)
			}
		})
	}
	p, _ := DecodeProposal([]byte(`[{"op":"remove","path":"/a","from":"/x"}]`), 0)
	if p.Patch[0].From != nil {
		t.Errorf("from of a remove must be ignored, got %q", p.Patch[0].From)
	}
}

// An operation reads back from JSON as it was written, numbers included.
func TestOperationRoundTrip(t *testing.T) {
	for _, text := range []string{
		`{"op":"add","path":"/a","value":1e400}`,
		`{"op":"replace","path":"/a~1b","value":{"x":[1,2.50,123456789012345678901234567890]}}`,
		`{"from":"/x","op":"move","path":"/y"}`,
		`{"op":"remove","path":""}`,
		`{"op":"test","path":"/n","value":null}`,
	} {
		var op Operation
		if err := json.Unmarshal([]byte(text), &op); err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		b, err := json.Marshal(op)
		if err != nil {
			t.Fatal(err)
		}
		var again Operation
		if err := json.Unmarshal(b, &again); err != nil {
			t.Fatalf("%s: %v", b, err)
		}
		if !EqualJSON(op.Value, again.Value) || op.Op != again.Op || !op.Path.Equal(again.Path) {
			t.Errorf("%s read back as %s", text, b)
		}
	}
	var op Operation
	if err := json.Unmarshal([]byte(`{"op":"nope","path":"/a"}`), &op); err == nil {
		t.Error("an unknown op was read")
	}
}
