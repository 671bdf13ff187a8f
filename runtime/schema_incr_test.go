package runtime

import (
	"context"
	"testing"
)

// TestIncrementalSchema: which schemas are validated incrementally, and
// that incremental validation accepts and rejects exactly what a whole
// validation does (a rejection is always explained by the whole
// validation, so its result is the same).
func TestIncrementalSchema(t *testing.T) {
	const state = `{"a":{"list":[{"k":1},{"k":2}],"name":"n","tags":["x","y"]},"b":{"c":{"d":1}},"e":[1,2,3]}`
	tests := []struct {
		name        string
		schema      string
		patch       string
		incremental bool // the verdict came from incremental validation
		committed   bool
	}{
		{"local, passes", `{"properties":{"a":{"properties":{"name":{"type":"string"}}}}}`,
			`[{"op":"replace","path":"/a/name","value":"m"}]`, true, true},
		{"local, fails at the focus", `{"properties":{"a":{"properties":{"name":{"type":"string"}}}}}`,
			`[{"op":"replace","path":"/a/name","value":1}]`, false, false},
		{"required at the focus", `{"properties":{"a":{"required":["name"]}}}`,
			`[{"op":"remove","path":"/a/name"}]`, false, false},
		{"uniqueItems above the focus, kept", `{"properties":{"a":{"properties":{"list":{"uniqueItems":true}}}}}`,
			`[{"op":"replace","path":"/a/list/0/k","value":3}]`, true, true},
		{"uniqueItems above the focus, broken", `{"properties":{"a":{"properties":{"list":{"uniqueItems":true}}}}}`,
			`[{"op":"replace","path":"/a/list/0/k","value":2}]`, false, false},
		{"contains above the focus, broken", `{"properties":{"e":{"contains":{"const":2}}}}`,
			`[{"op":"replace","path":"/e/1","value":5}]`, false, false},
		{"contains above the focus, kept", `{"properties":{"e":{"contains":{"const":2}}}}`,
			`[{"op":"replace","path":"/e/0","value":5}]`, true, true},
		{"unevaluatedProperties routes the changed member", `{"properties":{"b":{"properties":{"x":true},"unevaluatedProperties":{"required":["d"]}}}}`,
			`[{"op":"remove","path":"/b/c/d"}]`, false, false},
		{"unevaluatedProperties, member evaluated elsewhere", `{"properties":{"b":{"allOf":[{"properties":{"c":true}}],"unevaluatedProperties":false}}}`,
			`[{"op":"add","path":"/b/c/z","value":1}]`, true, true},
		{"$ref and allOf along the path", `{"$defs":{"n":{"type":"object","properties":{"d":{"maximum":5}}}},"properties":{"b":{"allOf":[{"properties":{"c":{"$ref":"#/$defs/n"}}}]}}}`,
			`[{"op":"replace","path":"/b/c/d","value":9}]`, false, false},
		{"anyOf above the focus: the whole state", `{"properties":{"b":{"anyOf":[{"required":["c"]},{"required":["z"]}]}}}`,
			`[{"op":"add","path":"/b/c/z","value":1}]`, false, true},
		{"enum above the focus: the whole state", `{"properties":{"b":{"enum":[{"c":{"d":1}}]}}}`,
			`[{"op":"replace","path":"/b/c/d","value":2}]`, false, false},
		{"anyOf inside the focus is fine", `{"properties":{"b":{"properties":{"c":{"anyOf":[{"required":["d"]},{"required":["z"]}]}}}}}`,
			`[{"op":"add","path":"/b/c/z","value":1}]`, true, true},
		{"a state that was already invalid: the whole state", `{"properties":{"e":{"maxItems":2}}}`,
			`[{"op":"replace","path":"/b/c/d","value":2}]`, false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{""}, Schema: mustJSON(t, tt.schema)})
			if !c.IncrementalSchema() {
				t.Fatal("IncrementalSchema() = false")
			}
			doc := mustDoc(t, state)
			opts := VerifyOptions{Gates: GateSet{Schema: true}}
			d, err := c.Verify(context.Background(), doc, []byte(tt.patch), opts)
			if err != nil {
				t.Fatal(err)
			}
			if d.path != pathFootprint || d.incremental != tt.incremental || d.Committed != tt.committed {
				t.Fatalf("path %s, incremental %v, committed %v (%+v); want incremental %v, committed %v", d.path, d.incremental, d.Committed, d.Rejection(), tt.incremental, tt.committed)
			}
			w, _ := wholeOnly(c).Verify(context.Background(), doc, []byte(tt.patch), opts)
			if diff := diffDecisions(d, w, doc, doc); diff != "" {
				t.Fatal(diff)
			}
		})
	}
	for _, s := range []string{
		`{"$schema":"http://json-schema.org/draft-07/schema#","type":"object"}`,
		`{"$dynamicAnchor":"x","properties":{"a":{"$dynamicRef":"#x"}}}`,
	} {
		if MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Schema: mustJSON(t, s)}).IncrementalSchema() {
			t.Errorf("%s: IncrementalSchema() = true", s)
		}
	}
	if MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}}).IncrementalSchema() {
		t.Error("a contract without a schema: IncrementalSchema() = true")
	}
}
