package runtime

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

type patchRecord struct {
	Doc      json.RawMessage `json:"doc"`
	Patch    json.RawMessage `json:"patch"`
	Expected json.RawMessage `json:"expected"`
	Error    string          `json:"error"`
	Comment  string          `json:"comment"`
	Disabled bool            `json:"disabled"`
}

// openContract lets a patch touch everything, so only parse and apply
// decide.
var openContract = MustCompile(ContractSpec{
	View:   ViewSpec{Include: []string{""}},
	Write:  []string{""},
	Source: []string{""},
})

// TestJSONPatchConformance runs every non-disabled record of the RFC 6902
// suites (json-patch-tests) through Verify with no optional gate.
func TestJSONPatchConformance(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "json-patch-tests")
	total, passed := 0, 0
	for _, file := range []string{"tests.json", "spec_tests.json"} {
		b, err := os.ReadFile(filepath.Join(dir, file))
		if err != nil {
			t.Fatal(err)
		}
		var recs []patchRecord
		if err := json.Unmarshal(b, &recs); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		for i, r := range recs {
			if r.Disabled || r.Doc == nil || r.Patch == nil {
				continue
			}
			total++
			name := file + "#" + strconv.Itoa(i) + " " + r.Comment
			ok := t.Run(name, func(t *testing.T) {
				doc, err := ParseDocument(r.Doc)
				if err != nil {
					t.Fatalf("doc: %v", err)
				}
				d, err := openContract.Verify(context.Background(), doc, r.Patch, VerifyOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if r.Error != "" {
					if d.Committed {
						t.Fatalf("committed %s; want an error (%s)", d.State.Bytes(), r.Error)
					}
					if got := string(doc.Bytes()); got != string(r.Doc) {
						t.Fatalf("input document changed")
					}
					return
				}
				if !d.Committed {
					t.Fatalf("rejected: %+v", d.Rejection())
				}
				if r.Expected != nil {
					want := mustJSON(t, string(r.Expected))
					if !equalJSON(d.State.Value(), want) {
						t.Fatalf("got %s, want %s", d.State.Bytes(), r.Expected)
					}
					// The text must say the same as the value.
					again, err := ParseDocument(d.State.Bytes())
					if err != nil || !equalJSON(again.Value(), want) {
						t.Fatalf("state text %s does not decode to the expected value", d.State.Bytes())
					}
				}
				assertWritesCover(t, doc.Value(), d.State.Value(), d.Footprint)
			})
			if ok {
				passed++
			}
		}
	}
	t.Logf("RFC 6902 suites: %d/%d records pass", passed, total)
	floor := suiteFloor(t, dir, map[string]int{
		"github.com/json-patch/json-patch-tests at commit 2a928f9": 101,
		"npm json-patch-test-suite@1.1.0":                          91,
	})
	if total < floor {
		t.Fatalf("only %d records found; this copy of the suites holds %d", total, floor)
	}
}

type pointerSuiteGroup struct {
	Description string `json:"description"`
	Tests       []struct {
		Description string `json:"description"`
		Data        any    `json:"data"`
		Valid       bool   `json:"valid"`
	} `json:"tests"`
}

// TestJSONPointerSyntaxSuite runs the JSON Schema test suite's
// json-pointer format cases against ParsePointer. As with the format
// keyword, non-strings are outside the format and count as valid.
func TestJSONPointerSyntaxSuite(t *testing.T) {
	dir := filepath.Join(conformanceDir(t), "json-pointer-format")
	b, err := os.ReadFile(filepath.Join(dir, "json-pointer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var groups []pointerSuiteGroup
	if err := json.Unmarshal(b, &groups); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, g := range groups {
		for _, c := range g.Tests {
			n++
			valid := true
			if s, ok := c.Data.(string); ok {
				p, err := ParsePointer(s)
				valid = err == nil
				if valid && p.String() != s {
					t.Errorf("%s: %q formats back as %q", c.Description, s, p.String())
				}
			}
			if valid != c.Valid {
				t.Errorf("%s: data %#v: valid=%v, want %v", c.Description, c.Data, valid, c.Valid)
			}
		}
	}
	want := suiteFloor(t, dir, map[string]int{
		"github.com/json-schema-org/JSON-Schema-Test-Suite at commit 44401e0": 40,
		"Debian json-schema-test-suite 2.0.0":                                 32,
	})
	if n < want {
		t.Fatalf("suite has %d cases, want %d", n, want)
	}
}
