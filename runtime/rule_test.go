package runtime

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// A Rule reads pre and post as the invariants do (numbers exact) and
// gives its value as decoded JSON: numbers as json.Number, objects and
// arrays as maps and slices; a value with no JSON form is an error.
func TestRuleEval(t *testing.T) {
	pre, err := ParseDocument([]byte(`{"items": [{"id": "a", "n": 9007199254740993}, {"id": "b", "n": 2.5}]}`))
	if err != nil {
		t.Fatal(err)
	}
	r, err := CompileRule(`lists.range(size(pre.items)).map(i, {'path': '/items/' + string(i), 'n': pre.items[i].n, 'ids': pre.items.map(x, x.id).join(',')})`)
	if err != nil {
		t.Fatal(err)
	}
	v, err := r.Eval(context.Background(), pre.Value(), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(v)
	if want := `[{"ids":"a,b","n":9007199254740993,"path":"/items/0"},{"ids":"a,b","n":2.5,"path":"/items/1"}]`; string(b) != want {
		t.Errorf("got %s, want %s", b, want)
	}
	h, err := CompileRule(`pre.items.all(i, i.id in post.ids)`)
	if err != nil {
		t.Fatal(err)
	}
	post, _ := ParseDocument([]byte(`{"ids": {"a": 1, "b": 2}}`))
	if ok, err := h.Holds(context.Background(), pre.Value(), post.Value()); !ok || err != nil {
		t.Errorf("Holds: %v, %v", ok, err)
	}
	for _, tt := range []struct{ expr, want string }{
		{`{1: 'a'}`, "key"},
		{`[double('NaN')]`, "no number"},
		{`b'x'`, "no JSON form"},
		{`pre.nothing.here`, "no such key"},
		{`size(pre.items)`, ""},
	} {
		r, err := CompileRule(tt.expr)
		if err != nil {
			t.Fatalf("%s: %v", tt.expr, err)
		}
		_, err = r.Eval(context.Background(), pre.Value(), nil)
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.expr, err)
			}
			continue
		}
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one with %q", tt.expr, err, tt.want)
		}
	}
	if ok, err := (func() (bool, error) {
		r, _ := CompileRule(`size(pre.items)`)
		return r.Holds(context.Background(), pre.Value(), nil)
	})(); ok || err == nil {
		t.Error("a rule giving an int holds")
	}
	if _, err := CompileRule(`pre.items.(`); err == nil {
		t.Error("a rule that does not parse compiled")
	}
}
