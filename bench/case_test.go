package bench

import (
	"encoding/json"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

const exampleFile = "testdata/example/support/sup-example-refund.yaml"

func readExample(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(exampleFile)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// casesDoc is the page that documents the case format.
const casesDoc = "../docs/cases.md"

// The example in docs/cases.md is the example file, word for word.
func TestReadmeExample(t *testing.T) {
	readme, err := os.ReadFile(casesDoc)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), "```yaml\n"+readExample(t)+"```\n") {
		t.Error("docs/cases.md does not hold " + exampleFile + " verbatim in a yaml block")
	}
}

// Aliases of a long string cannot expand a small file into gigabytes.
func TestAliasByteBomb(t *testing.T) {
	var b strings.Builder
	b.WriteString("a0: &a0 \"" + strings.Repeat("x", 4096) + "\"\n")
	for i := 1; i <= 12; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d]\n", i, i, i-1, i-1, i-1, i-1)
	}
	_, ps := ParseCase("bomb.yaml", []byte(b.String()))
	if len(ps) != 1 || ps[0].Code != ProblemSyntax || !strings.Contains(ps[0].Msg, "expands to more than") {
		t.Fatalf("problems %v", ps)
	}
}

// A .json case is decoded as JSON: escapes YAML does not know are fine.
func TestJSONCaseFile(t *testing.T) {
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(readExample(t)), &n); err != nil {
		t.Fatal(err)
	}
	v, err := YAMLToJSON(&n)
	if err != nil {
		t.Fatal(err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(js), `"Refund reply next to a stored card"`, `"Refund reply next to a stored card \/ \ud83d\ude00"`, 1)
	c, ps := ParseCase("testdata/example/support/sup-example-refund.json", []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if c.Title != "Refund reply next to a stored card / \U0001F600" {
		t.Errorf("title %q", c.Title)
	}
	// A .json file must be strict JSON.
	_, ps = ParseCase("x.json", []byte("{id: x}"))
	if len(ps) != 1 || ps[0].Line != 1 || ps[0].Code != ProblemSyntax {
		t.Errorf("problems %v", ps)
	}
}

// A symbolic link to a directory is reported, not silently skipped.
func TestSymlinkedDirectory(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "support"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(dir, "support"), filepath.Join(dir, "linked")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "support", "sup-example-refund.yaml"), []byte(readExample(t)), 0o644); err != nil {
		t.Fatal(err)
	}
	cases, ps, err := LoadCaseDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(cases) != 1 || len(ps) != 1 || ps[0].Code != ProblemFile || !strings.HasSuffix(ps[0].File, "linked") {
		t.Fatalf("cases %d, problems %v", len(cases), ps)
	}
}

// Every problem code is defined once, in codes.go, and listed in
// docs/cases.md ("What patchbench validate checks").
func TestProblemCodesListed(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "codes.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	readme, err := os.ReadFile(casesDoc)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			code, err := strconv.Unquote(vs.Values[0].(*ast.BasicLit).Value)
			if err != nil {
				t.Fatal(err)
			}
			name := vs.Names[0].Name
			if prev, dup := seen[code]; dup {
				t.Errorf("code %q is both %s and %s", code, prev, name)
			}
			seen[code] = name
			if !strings.Contains(string(readme), "| `"+code+"` |") {
				t.Errorf("docs/cases.md does not list %s (%q)", name, code)
			}
		}
	}
	if len(seen) < 60 {
		t.Errorf("only %d codes found in codes.go", len(seen))
	}
}

// Case files are parsed concurrently; the cases and every problem come
// out as one file after another would give them, in the walk's order.
func TestLoadConcurrentKeepsOrder(t *testing.T) {
	dir := t.TempDir()
	good := readExample(t)
	files := map[string]string{
		"a/a-ok.yaml":       good,
		"a/b-syntax.yaml":   "id: [unclosed\n",
		"b/c-ok.yaml":       strings.Replace(good, "id: sup-example-refund", "id: sup-example-refund-2", 1),
		"b/d-schema.yaml":   "id: x\ndomain: support\n",
		"c/e-empty.yaml":    "",
		"c/f-ok.json":       "",
		"c/g-unknown.yaml":  good + "\nsurprise: 1\n",
		"d/h-contract.yaml": strings.Replace(good, "write:", "write:\n      - \"no-slash\"", 1),
	}
	var n yaml.Node
	if err := yaml.Unmarshal([]byte(good), &n); err != nil {
		t.Fatal(err)
	}
	v, err := YAMLToJSON(&n)
	if err != nil {
		t.Fatal(err)
	}
	j, _ := json.Marshal(v)
	files["c/f-ok.json"] = strings.Replace(string(j), `"sup-example-refund"`, `"sup-example-refund-3"`, 1)
	var names []string
	for name, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	slices.Sort(names) // the walk's order
	var want Problems
	var wantIDs []string
	for _, name := range names {
		c, ps := ParseCase(filepath.Join(dir, filepath.FromSlash(name)), []byte(files[name]))
		want = append(want, ps...)
		if c != nil {
			wantIDs = append(wantIDs, c.ID)
		}
	}
	if len(want) < 4 || len(wantIDs) != 3 {
		t.Fatalf("the fixture should give problems in several files and 3 cases: %v, %v", want, wantIDs)
	}
	slices.Sort(wantIDs)
	for range 5 {
		cases, ps, err := LoadCaseDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(ps) != fmt.Sprint(want) || len(ps) != len(want) {
			t.Fatalf("problems\n%v\nwant\n%v", ps, want)
		}
		var ids []string
		for _, c := range cases {
			ids = append(ids, c.ID)
			if c.Steps[0].Contract == nil {
				t.Fatalf("case %s: step without its contract", c.ID)
			}
		}
		if !slices.Equal(ids, wantIDs) {
			t.Fatalf("cases %v, want %v", ids, wantIDs)
		}
	}
}

// TestCaseFileOverTheBoundIsRefused checks that a case file past
// MaxCaseFileBytes is refused before it is decoded (a file problem naming
// the bound): at the old 8 MiB bound, a file of [0,0,...] cost 889 MB to
// decode.
func TestCaseFileOverTheBoundIsRefused(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "sup-big.yaml")
	if err := os.WriteFile(p, []byte("id: ["+strings.Repeat("0,", MaxCaseFileBytes/2)+"0]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, ps, err := LoadCaseDir(p)
	if err != nil || len(ps) != 1 || ps[0].Code != ProblemFile || !strings.Contains(ps[0].Msg, "1 MiB") {
		t.Fatalf("problems %v, error %v; want one file problem naming 1 MiB", ps, err)
	}
}
