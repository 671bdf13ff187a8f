package runtime

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// conformanceDir finds ../shared/conformance relative to the repository
// root (the directory holding go.mod), or $PATCHBENCH_CONFORMANCE.
func conformanceDir(t testing.TB) string {
	t.Helper()
	const hint = "the RFC 6902 and JSON Pointer suites; README.md, Requirements, says where they come from"
	if d := os.Getenv("PATCHBENCH_CONFORMANCE"); d != "" {
		if _, err := os.Stat(d); err != nil {
			t.Fatalf("PATCHBENCH_CONFORMANCE=%s: %v (%s)", d, err, hint)
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
	c := filepath.Join(dir, "..", "shared", "conformance")
	if _, err := os.Stat(c); err != nil {
		t.Fatalf("conformance suites not found at %s (set PATCHBENCH_CONFORMANCE; %s): %v", c, hint, err)
	}
	return c
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
