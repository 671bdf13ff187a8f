package runtime

import (
	"fmt"
	"strings"
	"testing"
)

// TestValidateSplit: validating in parts (schemaindex.Index.ValidateSplit) gives the
// whole validation's verdict, for schemas that allow the split and
// schemas that do not, on states whose longest array breaks the schema at
// its first, cut, first uncut and last element, or not at all.
func TestValidateSplit(t *testing.T) {
	const n = 40
	elem := func(i int, bad string) string {
		switch {
		case bad == "type" && i == -1:
			return `{"id":"r","balance":"x"}`
		case bad == "required":
			return `{"balance":1}`
		case bad == "extra":
			return `{"id":"r","balance":1,"zz":1}`
		case bad == "dup":
			return `{"id":"r-0","balance":0}`
		}
		return fmt.Sprintf(`{"id":"r-%d","balance":%d}`, i, i)
	}
	state := func(badAt int, bad string) string {
		var els []string
		for i := range n {
			if i == badAt {
				els = append(els, elem(-1, bad))
			} else {
				els = append(els, elem(i, ""))
			}
		}
		return `{"meta":{"v":1},"summary":{"total":0},"box":{"records":[` + strings.Join(els, ",") + `]},"small":[1,2]}`
	}
	const item = `{"type":"object","required":["id","balance"],"properties":{"id":{"type":"string"},"balance":{"type":"number"}}}`
	records := func(extra string) string {
		return `{"type":"object","required":["box"],"properties":{"box":{"properties":{"records":{"type":"array","items":` + item + extra + `}}}}}`
	}
	schemas := []struct {
		name  string
		text  string
		split bool // the schema allows the split
	}{
		{"items", records(``), true},
		{"minItems", records(`,"minItems":10`), true},
		{"minItems above the length", records(`,"minItems":41`), false},
		{"maxItems kept", records(`,"maxItems":40`), true},
		{"maxItems broken", records(`,"maxItems":39`), true},
		{"prefixItems", `{"properties":{"box":{"properties":{"records":{"prefixItems":[{"properties":{"id":{"const":"r-0"}}},{"properties":{"id":{"const":"r-1"}}}],"items":` + item + `}}}}}`, true},
		{"items false after a prefix", `{"properties":{"box":{"properties":{"records":{"prefixItems":[true,true,true],"items":false}}}}}`, true},
		{"unevaluatedItems", `{"properties":{"box":{"properties":{"records":{"allOf":[{"prefixItems":[true]}],"unevaluatedItems":` + item + `}}}}}`, true},
		{"$ref to the item", `{"$defs":{"r":` + item + `},"properties":{"box":{"properties":{"records":{"items":{"$ref":"#/$defs/r"}}}}}}`, true},
		{"additionalProperties false on the item", `{"properties":{"box":{"properties":{"records":{"items":{"properties":{"id":true,"balance":true},"additionalProperties":false}}}}}}`, true},
		{"root keywords", `{"required":["meta","summary"],"additionalProperties":{"type":"object"},"properties":{"small":{"type":"array"},"box":{"properties":{"records":{"items":` + item + `}}}}}`, true},
		{"uniqueItems", records(`,"uniqueItems":true`), false},
		{"contains", records(`,"contains":{"properties":{"id":{"const":"r-39"}}}`), false},
		{"anyOf above the array", `{"properties":{"box":{"anyOf":[{"properties":{"records":{"items":` + item + `}}},{"required":["none"]}]}}}`, false},
		{"enum on the array", `{"properties":{"box":{"properties":{"records":{"enum":[[]]}}}}}`, false},
	}
	faults := []struct {
		at  int
		bad string
	}{{-1, ""}, {0, "type"}, {2, "required"}, {3, "required"}, {4, "extra"}, {n - 1, "type"}, {n - 1, "dup"}}
	for _, sc := range schemas {
		c := MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Schema: mustJSON(t, sc.text)})
		x := c.incremental
		if x == nil {
			t.Fatalf("%s: no analysis", sc.name)
		}
		for _, f := range faults {
			v := mustJSON(t, state(f.at, f.bad))
			whole, err := validateSchema(c.schema, v)
			if err != nil {
				t.Fatal(err)
			}
			for _, workers := range []int{1, 2, 5} {
				ok, split := x.ValidateSplit(v, workers, 8)
				if split != sc.split && !(sc.name == "maxItems broken" && split) {
					t.Errorf("%s: split = %v, want %v", sc.name, split, sc.split)
				}
				if split && ok != (whole == nil) {
					t.Errorf("%s, %s at %d, %d workers: split says %v, the whole validation %v", sc.name, f.bad, f.at, workers, ok, whole == nil)
				}
			}
			if got := x.SatisfiesWhole(v); got != (whole == nil) {
				t.Errorf("%s, %s at %d: satisfiesWhole = %v", sc.name, f.bad, f.at, got)
			}
		}
	}
}
