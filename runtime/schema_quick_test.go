package runtime

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
)

// TestQuickSchemaNeverAcceptsWhatTheLibraryRejects: on random schemas (the
// keywords a quick schema handles, mixed with others it must leave to the
// library) and random values, a quick schema accepts only values the
// library accepts, and it exists for every schema made of type, required
// and properties alone.
func TestQuickSchemaNeverAcceptsWhatTheLibraryRejects(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 3))
	n := 3000
	if testing.Short() {
		n = 400
	}
	accepted, quick := 0, 0
	for i := range n {
		text, simple := randomQuickSchema(rng, 0)
		s, err := compileSchema("schema", mustJSON(t, text))
		if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		q := schemaindex.NewQuick(s)
		if simple && q == nil {
			t.Fatalf("schema %d %s: no quick form", i, text)
		}
		if !simple && q != nil {
			t.Fatalf("schema %d %s: a quick form for a schema with other keywords", i, text)
		}
		if q == nil {
			continue
		}
		quick++
		for range 20 {
			v := mustJSON(t, randomQuickValue(rng, 0))
			if q.Accepts(v) {
				accepted++
				if !schemaindex.Validates(s, v) {
					b, _ := json.Marshal(v)
					t.Fatalf("schema %s accepts %s quickly; the library rejects it", text, b)
				}
			}
		}
	}
	if accepted < n || quick < n/3 {
		t.Fatalf("only %d quick schemas, %d values accepted quickly: the test tests little", quick, accepted)
	}
}

var quickNames = []string{"id", "balance", "tags", "a", "b"}

// randomQuickSchema writes a random schema; simple reports whether it is
// made of type, required, properties and annotations only.
func randomQuickSchema(rng *rand.Rand, depth int) (string, bool) {
	if rng.IntN(12) == 0 {
		if rng.IntN(2) == 0 {
			return "true", true
		}
		return "false", false
	}
	var parts []string
	simple := true
	if rng.IntN(3) > 0 {
		types := []string{"null", "boolean", "number", "integer", "string", "array", "object"}
		if rng.IntN(2) == 0 {
			parts = append(parts, fmt.Sprintf(`"type":%q`, types[rng.IntN(len(types))]))
		} else {
			j := rng.IntN(len(types))
			parts = append(parts, fmt.Sprintf(`"type":[%q,%q]`, types[j], types[(j+1+rng.IntN(len(types)-1))%len(types)]))
		}
	}
	if rng.IntN(2) == 0 {
		var req []string
		for _, j := range rng.Perm(len(quickNames))[:rng.IntN(3)] {
			req = append(req, fmt.Sprintf("%q", quickNames[j]))
		}
		parts = append(parts, `"required":[`+strings.Join(req, ",")+`]`)
	}
	if depth < 3 && rng.IntN(2) == 0 {
		var props []string
		seen := map[string]bool{}
		for range 1 + rng.IntN(3) {
			name := quickNames[rng.IntN(len(quickNames))]
			if seen[name] {
				continue
			}
			seen[name] = true
			sub, ok := randomQuickSchema(rng, depth+1)
			simple = simple && ok
			props = append(props, fmt.Sprintf("%q:%s", name, sub))
		}
		parts = append(parts, `"properties":{`+strings.Join(props, ",")+`}`)
	}
	if rng.IntN(4) == 0 {
		parts = append(parts, `"title":"t","description":"d"`)
	}
	if rng.IntN(4) == 0 {
		others := []string{`"minimum":0`, `"maxLength":3`, `"additionalProperties":false`, `"enum":[1,"a",null]`,
			`"const":{"id":"a"}`, `"minProperties":2`, `"not":{"type":"string"}`, `"pattern":"^a"`,
			`"items":{"type":"number"}`, `"allOf":[{"required":["a"]}]`, `"$ref":"#"`, `"multipleOf":2`}
		parts = append(parts, others[rng.IntN(len(others))])
		simple = false
	}
	return "{" + strings.Join(parts, ",") + "}", simple
}

// randomQuickValue writes a random JSON value over the names the schemas use.
func randomQuickValue(rng *rand.Rand, depth int) string {
	k := rng.IntN(9)
	if depth > 2 && k >= 6 {
		k = rng.IntN(6)
	}
	switch k {
	case 0:
		return "null"
	case 1:
		return []string{"true", "false"}[rng.IntN(2)]
	case 2:
		return []string{"0", "1", "-3", "2.5", "1e2", "1.0", "0.1"}[rng.IntN(7)]
	case 3, 4:
		return []string{`""`, `"a"`, `"abcd"`, `"x@y.z"`}[rng.IntN(4)]
	case 5:
		var els []string
		for range rng.IntN(3) {
			els = append(els, randomQuickValue(rng, depth+1))
		}
		return "[" + strings.Join(els, ",") + "]"
	default:
		var mems []string
		seen := map[string]bool{}
		for range rng.IntN(5) {
			name := quickNames[rng.IntN(len(quickNames))]
			if seen[name] {
				continue
			}
			seen[name] = true
			mems = append(mems, fmt.Sprintf("%q:%s", name, randomQuickValue(rng, depth+1)))
		}
		return "{" + strings.Join(mems, ",") + "}"
	}
}
