package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"
)

// FuzzParsePointer: parsing never panics, a parsed pointer formats back to
// its input (escaping is canonical), and formatting then parsing is the
// identity on tokens.
func FuzzParsePointer(f *testing.F) {
	for _, s := range []string{"", "/", "/a~1b", "/m~0n", "/~", "/~2", "a", "#/a", "/foo/-/bar", "//", "/~01", "/\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := ParsePointer(s)
		if err != nil {
			return
		}
		if p.String() != s {
			t.Fatalf("ParsePointer(%q).String() = %q", s, p.String())
		}
		q, err := ParsePointer(p.String())
		if err != nil || !q.Equal(p) {
			t.Fatalf("round trip of %q: %q, %v", s, q, err)
		}
		for _, tok := range p {
			if UnescapeToken(EscapeToken(tok)) != tok {
				t.Fatalf("escape round trip of %q", tok)
			}
		}
	})
}

var fuzzContract = MustCompile(ContractSpec{
	View:   ViewSpec{Include: []string{"/doc", "/list", "/phase"}, Exclude: []string{"/doc/secret"}},
	Write:  []string{"/doc/title", "/doc/tags", "/list/-", "/list/*/done"},
	Source: []string{"/doc", "/list"},
	Phases: []string{"draft"},
	Schema: map[string]any{"type": "object", "required": []any{"doc"}},
	OutputSchema: map[string]any{
		"/doc/title": map[string]any{"type": "string", "maxLength": json.Number("80")},
		"/doc/tags":  map[string]any{"items": map[string]any{"type": []any{"string", "object"}, "additionalProperties": map[string]any{"type": "number"}}},
	},
	Invariants: []InvariantSpec{{Name: "list bounded", Rule: "size(post.list) <= 20"}},
	Limits:     Limits{MaxOps: 64, MaxDocumentBytes: 1 << 16, MaxCopyBytes: 1 << 14},
})

const fuzzState = `{"phase":"draft","doc":{"title":"T","tags":["a"],"secret":{"FUZZ-CANARY-KEY":"FUZZ-CANARY-0001"},"body":"b"},"list":[{"t":"x","done":false},{"t":"y","done":true}],"other":{"k":[1,2]}}`

// FuzzVerify sends arbitrary proposal bytes to a fixed contract under
// every gate set that matters: the verifier never panics, never commits a
// change outside the write region when scope or acl runs, never changes
// the state on a rejection, and never echoes the hidden canary (a value
// and a member name) in a message or pointer.
func FuzzVerify(f *testing.F) {
	seeds := []string{
		`[{"op":"replace","path":"/doc/title","value":"New"}]`,
		`{"patch":[{"op":"add","path":"/list/-","value":{"t":"z","done":false}}],"note":"n"}`,
		`[{"op":"copy","from":"/doc/secret","path":"/doc/title"}]`,
		`[{"op":"move","from":"/doc/tags","path":"/doc/title"}]`,
		`[{"op":"test","path":"/doc/secret","value":"FUZZ"}]`,
		`[{"op":"add","path":"/list/0","value":1}]`,
		`[{"op":"remove","path":"/list/1"}]`,
		`[{"op":"replace","path":"","value":{}}]`,
		`[{"op":"add","path":"/doc/tags/01","value":"x"}]`,
		`[{"op":"replace","path":"/list/1/done","value":true},{"op":"test","path":"/list/1/done","value":true}]`,
		`[{"op":"copy","from":"/doc","path":"/doc/tags/-"},{"op":"copy","from":"/doc","path":"/doc/tags/-"}]`,
		`not json`,
		`[{"op":"copy","from":"/doc/secret","path":"/doc/tags/0"}]`,
		`[{"op":"add","path":"/doc/tags/1","value":"x"},{"op":"copy","from":"/doc/secret","path":"/doc/tags/0"},{"op":"add","path":"/doc/tags/0","value":"y"}]`,
	}
	for _, s := range seeds {
		f.Add([]byte(s), uint8(0))
	}
	doc, err := ParseDocument([]byte(fuzzState))
	if err != nil {
		f.Fatal(err)
	}
	gateSets := []GateSet{DefaultGates, {ACL: true, Phase: true}, {}, {Schema: true}}
	f.Fuzz(func(t *testing.T, proposal []byte, which uint8) {
		gs := gateSets[int(which)%len(gateSets)]
		d, err := fuzzContract.Verify(context.Background(), doc, proposal, VerifyOptions{Gates: gs, Phase: "draft"})
		if err != nil {
			t.Fatalf("Verify error: %v", err)
		}
		if !bytes.Equal(doc.Bytes(), []byte(fuzzState)) {
			t.Fatal("input state bytes modified")
		}
		if !d.Committed {
			if d.State != doc {
				t.Fatal("rejection did not return the input state")
			}
			for _, g := range d.Gates {
				if bytes.Contains([]byte(g.Message+g.Pointer), []byte("FUZZ-CANARY")) && !bytes.Contains(proposal, []byte("FUZZ-CANARY")) {
					t.Fatalf("message echoes the hidden canary: %+v", g)
				}
			}
			return
		}
		again, err := ParseDocument(d.State.Bytes())
		if err != nil {
			t.Fatalf("committed text is not strict JSON: %v", err)
		}
		if !equalJSON(again.Value(), d.State.Value()) {
			t.Fatal("committed text and value disagree")
		}
		if gs.Scope || gs.ACL {
			for _, p := range diffLocations(doc.Value(), d.State.Value(), Pointer{}) {
				if !fuzzContract.Write().Contains(p) && !(p.Last() != "" && fuzzContract.Write().Contains(p.Parent().Append(AppendToken))) {
					t.Fatalf("committed a change at %q, outside W", p)
				}
			}
		}
		assertWritesCover(t, doc.Value(), d.State.Value(), d.Footprint)
	})
}
