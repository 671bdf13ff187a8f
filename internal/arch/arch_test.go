package arch

import (
	"go/build"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/patchbench/patchbench/"

// archDoc is the page that holds the import table, in its "## Imports"
// section.
const archDoc = "docs/architecture.md"

// TestImportTable checks every row of the import table of
// docs/architecture.md against the package's imports within the module
// (internal/ helpers aside), and that the rows run one way: a package
// imports only packages of rows below its own.
func TestImportTable(t *testing.T) {
	root := filepath.Join("..", "..")
	page, err := os.ReadFile(filepath.Join(root, archDoc))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(page), "\n## Imports\n")
	if !ok {
		t.Fatalf("%s has no \"## Imports\" section", archDoc)
	}
	if i := strings.Index(section, "\n## "); i >= 0 {
		section = section[:i]
	}
	table := section
	row := regexp.MustCompile("(?m)^\\| `([a-z/]+)` \\| (.*) \\|$")
	name := regexp.MustCompile("`([a-z/]+)`")
	var order []string
	want := map[string][]string{}
	for _, m := range row.FindAllStringSubmatch(table, -1) {
		order = append(order, m[1])
		for _, n := range name.FindAllStringSubmatch(m[2], -1) {
			if !isInternal(n[1]) {
				want[m[1]] = append(want[m[1]], n[1])
			}
		}
	}
	if len(order) < 8 {
		t.Fatalf("%s: %d rows of the import table found", archDoc, len(order))
	}
	for i, pkg := range order {
		p, err := build.ImportDir(filepath.Join(root, pkg), 0)
		if err != nil {
			t.Fatalf("%s: %v", pkg, err)
		}
		var got []string
		for _, imp := range p.Imports {
			if rel, ok := strings.CutPrefix(imp, module); ok && !isInternal(rel) {
				got = append(got, rel)
				if j := slices.Index(order, rel); j >= 0 && j <= i {
					t.Errorf("%s imports %s, a row above it or its own", pkg, rel)
				}
			}
		}
		w := want[pkg]
		if strings.Contains(table, "| `"+pkg+"` | all of the packages below") {
			// "all of the packages below but `a` and `b`": the packages
			// the row names are the ones it does not import.
			but := w
			w = nil
			for _, q := range order[i+1:] {
				if !slices.Contains(but, q) {
					w = append(w, q)
				}
			}
		}
		slices.Sort(got)
		slices.Sort(w)
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s: %s's imports (-want +got):\n%s", pkg, archDoc, diff)
		}
	}
}

// isInternal reports whether a package path of the module is an internal
// helper (internal/... or a package's own .../internal/...), which the
// table does not list.
func isInternal(rel string) bool {
	return strings.HasPrefix(rel, "internal/") || strings.Contains(rel, "/internal/")
}
