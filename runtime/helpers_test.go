package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testenv"
)

// conformanceDir finds the RFC 6902 and JSON Pointer suites:
// $PATCHBENCH_CONFORMANCE, else ../shared/conformance beside the repository
// root (the directory holding go.mod), else .conformance in the root (which
// scripts/conformance.sh fills from the suites' public packages). Where
// none is there the test is skipped with one visible line, unless
// PATCHBENCH_REQUIRE_CONFORMANCE is set (as .ci/run sets it).
func conformanceDir(t testing.TB) string {
	t.Helper()
	if d := os.Getenv("PATCHBENCH_CONFORMANCE"); d != "" {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("PATCHBENCH_CONFORMANCE=%s: %v", d, err)
		}
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			break
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("go.mod not found above the test directory")
		}
		dir = parent
	}
	for _, c := range []string{filepath.Join(dir, "..", "shared", "conformance"), filepath.Join(dir, ".conformance")} {
		if _, err := os.Stat(c); err == nil {
			return c
		}
	}
	testenv.Missing(t, "PATCHBENCH_REQUIRE_CONFORMANCE",
		"the RFC 6902 and JSON Pointer suites are not beside the repository (../shared/conformance) nor in .conformance",
		"run scripts/conformance.sh, or set PATCHBENCH_CONFORMANCE")
	return ""
}

// suiteFloor is how many records a suite folder must hold, by the first
// line of its SOURCE file: a truncated or emptied copy fails instead of
// passing on fewer records. An unknown source must hold at least one.
func suiteFloor(t testing.TB, dir string, floors map[string]int) int {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, "SOURCE"))
	if err != nil {
		t.Logf("%s has no SOURCE file: %v", dir, err)
		return 1
	}
	first, _, _ := strings.Cut(string(b), "\n")
	for prefix, n := range floors {
		if strings.HasPrefix(first, prefix) {
			return n
		}
	}
	t.Logf("%s: unknown source %q", dir, first)
	return 1
}

// mustJSON decodes JSON text strictly or fails the test.
func mustJSON(t testing.TB, s string) any {
	t.Helper()
	v, err := decodeStrict([]byte(s), DefaultMaxDepth)
	if err != nil {
		t.Fatalf("bad JSON in test %q: %v", s, err)
	}
	return v
}

func mustDoc(t testing.TB, s string) *Document {
	t.Helper()
	d, err := ParseDocument([]byte(s))
	if err != nil {
		t.Fatalf("bad document in test %q: %v", s, err)
	}
	return d
}

func toJSON(v any) string {
	b, err := encodeJSON(v)
	if err != nil {
		return "<" + err.Error() + ">"
	}
	return string(b)
}

// diffLocations is an independent structural diff: the locations where a
// and b differ, stopping at the highest differing location of each branch.
// Arrays are compared position by position.
func diffLocations(a, b any, at Pointer) []Pointer {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok {
			return []Pointer{at.Append()}
		}
		var out []Pointer
		for k, xv := range x {
			if yv, ok := y[k]; ok {
				out = append(out, diffLocations(xv, yv, at.Append(k))...)
			} else {
				out = append(out, at.Append(k))
			}
		}
		for k := range y {
			if _, ok := x[k]; !ok {
				out = append(out, at.Append(k))
			}
		}
		return out
	case []any:
		y, ok := b.([]any)
		if !ok {
			return []Pointer{at.Append()}
		}
		var out []Pointer
		for i := 0; i < max(len(x), len(y)); i++ {
			if i < len(x) && i < len(y) {
				out = append(out, diffLocations(x[i], y[i], at.Append(strconv.Itoa(i)))...)
			} else {
				out = append(out, at.Append(strconv.Itoa(i)))
			}
		}
		return out
	case json.Number:
		if y, ok := b.(json.Number); ok && numbersEqual(x, y) {
			return nil
		}
		return []Pointer{at.Append()}
	default:
		if equalJSON(a, b) {
			return nil
		}
		return []Pointer{at.Append()}
	}
}

// assertWritesCover is the independent scope oracle: every location where
// pre and post differ lies in the patch's write footprint.
func assertWritesCover(t testing.TB, pre, post any, fp *Footprint) {
	t.Helper()
	for _, p := range diffLocations(pre, post, Pointer{}) {
		if fp == nil || !fp.Write.Contains(p) {
			t.Errorf("changed location %q is outside the write footprint %v", p, fp)
		}
	}
}
