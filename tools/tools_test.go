package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// fakeStep sees state whole; its proposals are decided by decide.
type fakeStep struct {
	state  any
	limit  int // the result limit; 0 for DefaultResultBytes
	decide func(args string) (Verdict, error)
	args   []string
}

func (s *fakeStep) Lookup(p runtime.Pointer) (any, bool) { return runtime.Lookup(s.state, p) }
func (s *fakeStep) ResultLimit() int {
	if s.limit == 0 {
		return DefaultResultBytes
	}
	return s.limit
}
func (s *fakeStep) Propose(_ context.Context, args string) (Verdict, error) {
	s.args = append(s.args, args)
	return s.decide(args)
}

func newFake(t *testing.T, state string) *fakeStep {
	t.Helper()
	var v any
	if err := json.Unmarshal([]byte(state), &v); err != nil {
		t.Fatal(err)
	}
	return &fakeStep{state: v, decide: func(string) (Verdict, error) { return Verdict{}, errors.New("no proposal expected") }}
}

// TestSpecs: every tool offers a name, a description and an argument
// schema that is a JSON object schema refusing unknown members, its
// Usage starts with its call, Find finds it by name, and a default its
// schema states is the one Call uses.
func TestSpecs(t *testing.T) {
	specs := Specs()
	if len(specs) != len(All) || len(All) < 2 {
		t.Fatalf("%d specs of %d tools", len(specs), len(All))
	}
	seen := map[string]bool{}
	for i, d := range All {
		if seen[d.Name] || d.Name == "" || d.Description == "" {
			t.Errorf("tool %d: name %q (seen before: %v), description %q", i, d.Name, seen[d.Name], d.Description)
		}
		seen[d.Name] = true
		var schema struct {
			Type                 string                     `json:"type"`
			Properties           map[string]json.RawMessage `json:"properties"`
			Required             []string                   `json:"required"`
			AdditionalProperties *bool                      `json:"additionalProperties"`
		}
		if err := json.Unmarshal(specs[i].Parameters, &schema); err != nil {
			t.Errorf("%s: parameters: %v", d.Name, err)
		}
		if schema.Type != "object" || schema.AdditionalProperties == nil || *schema.AdditionalProperties || len(schema.Required) == 0 {
			t.Errorf("%s: schema %s", d.Name, specs[i].Parameters)
		}
		for _, r := range schema.Required {
			if _, ok := schema.Properties[r]; !ok {
				t.Errorf("%s: required %q is not a property", d.Name, r)
			}
		}
		if !strings.HasPrefix(d.Usage, d.Name+"(") || d.Call == nil {
			t.Errorf("%s: usage %q, call %v", d.Name, d.Usage, d.Call != nil)
		}
		if f, ok := Find(d.Name); !ok || f.Name != d.Name {
			t.Errorf("Find(%q) = %q, %v", d.Name, f.Name, ok)
		}
	}
	if _, ok := Find("shell"); ok {
		t.Error("Find found a tool named shell")
	}
	if !strings.Contains(string(ReadState.Parameters), fmt.Sprintf("(default %d)", DefaultReadDepth)) {
		t.Errorf("read_state's schema does not state its default depth %d: %s", DefaultReadDepth, ReadState.Parameters)
	}
	// The depth a call leaves out is the default: two levels shown, the
	// containers below them as their sizes.
	s := newFake(t, `{"a": {"b": {"c": {"d": 1}}}}`)
	res, err := ReadState.Call(context.Background(), s, `{"pointer": ""}`)
	if err != nil || res.Code != "" || !strings.Contains(res.Text, `{"a":{"b":"{…1 members}"}}`) {
		t.Errorf("read without depth: %q %q %v", res.Text, res.Code, err)
	}
}

// TestReadState: read_state's answers to good and bad arguments, and
// the pointer it names for the record (only when it looked there).
func TestReadState(t *testing.T) {
	s := newFake(t, `{"orders": [{"id": 1, "lines": [1, 2, 3]}], "big": "`+strings.Repeat("x", DefaultResultBytes)+`"}`)
	for _, tt := range []struct {
		args, code, text string
		read             bool
	}{
		{`{"pointer": "/orders/0", "depth": 0}`, "", `"{…2 members}"`, true},
		{`{"pointer": "/orders/0", "depth": 1}`, "", `"lines":"[…3 items]"`, true},
		{`{"pointer": "/orders/0/id"}`, "", `1`, true},
		{`{"pointer": "/orders/7"}`, CodeAbsent, "nothing at this pointer", true},
		{`{"pointer": "orders"}`, CodeBadPointer, "not a JSON Pointer", false},
		{`{"pointer": "/orders", "depth": -1}`, CodeMalformed, `"depth" must be at least 0`, false},
		{`{"depth": 1}`, CodeMalformed, `"pointer" is required`, false},
		{`{"pointer": "", "page": 2}`, CodeMalformed, `unknown field "page"`, false},
		{`{"pointer": "\n"`, CodeMalformed, "must be a JSON object", false},
		{`["/orders"]`, CodeMalformed, "must be a JSON object", false},
		{`{"pointer": "/big"}`, CodeTooLarge, fmt.Sprintf("more than %d", DefaultResultBytes), false},
	} {
		res, err := ReadState.Call(context.Background(), s, tt.args)
		if err != nil || res.Code != tt.code || !strings.Contains(res.Text, tt.text) || (res.Read != nil) != tt.read {
			t.Errorf("read_state(%s) = %q, code %q, read %v, %v; want code %q, text with %q, read %v", tt.args, res.Text, res.Code, res.Read, err, tt.code, tt.text, tt.read)
		}
	}
}

// TestProposePatch: the arguments go to the step as sent, and the
// result says what the step decided and how many proposals are left.
func TestProposePatch(t *testing.T) {
	s := newFake(t, `{}`)
	args := `{"patch": [{"op": "add", "path": "/a", "value": 1}], "note": "n"}`
	verdicts := []Verdict{
		{N: 1, Of: 3, Rejections: []string{"write: write_outside_region: /a"}},
		{N: 3, Of: 3, Rejections: []string{"schema: schema_violation: x", "invariants: invariant_violated: y"}},
		{Committed: true, N: 2, Of: 3},
	}
	want := []string{
		"rejected (proposal 1 of 3):\n- write: write_outside_region: /a\nPropose a corrected patch (2 left).",
		"rejected (proposal 3 of 3):\n- schema: schema_violation: x\n- invariants: invariant_violated: y\nNo proposal is left; the step is over.",
		"committed: the step is done",
	}
	for i, v := range verdicts {
		s.decide = func(string) (Verdict, error) { return v, nil }
		res, err := ProposePatch.Call(context.Background(), s, args)
		if err != nil || res.Code != "" || res.Text != want[i] {
			t.Errorf("verdict %d: %q, code %q, %v; want %q", i, res.Text, res.Code, err, want[i])
		}
	}
	if len(s.args) != 3 || s.args[0] != args {
		t.Errorf("the step was given %q", s.args)
	}
	for _, bad := range []string{`[1]`, `{"patch": [`, ``} {
		res, err := ProposePatch.Call(context.Background(), s, bad)
		if err != nil || res.Code != CodeMalformed {
			t.Errorf("propose_patch(%q) = %q, code %q, %v", bad, res.Text, res.Code, err)
		}
	}
	if len(s.args) != 3 {
		t.Errorf("malformed arguments reached the step: %q", s.args[3:])
	}
	ctxErr := context.Canceled
	s.decide = func(string) (Verdict, error) { return Verdict{}, ctxErr }
	if _, err := ProposePatch.Call(context.Background(), s, args); !errors.Is(err, ctxErr) {
		t.Errorf("the step's error: %v", err)
	}
}

// TestLists: the English lists the prompt and errors are made of.
func TestLists(t *testing.T) {
	for _, tt := range []struct {
		in   []string
		want string
	}{{nil, ""}, {[]string{"a"}, "a"}, {[]string{"a", "b"}, "a and b"}, {[]string{"a", "b", "c"}, "a, b, and c"}} {
		if got := List(tt.in); got != tt.want {
			t.Errorf("List(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	for _, d := range All {
		if !strings.Contains(Names(), d.Name) || !strings.Contains(Usages(), d.Usage) {
			t.Errorf("%s missing from %q or %q", d.Name, Names(), Usages())
		}
	}
}

// TestFolderIndexSame checks search_state's ASCII matching, which finds
// its candidates with strings.IndexByte in either case, against the
// byte-by-byte loop it replaced, on random texts and needles over a small
// alphabet (letters in both cases, digits, punctuation, non-ASCII bytes).
func TestFolderIndexSame(t *testing.T) {
	slow := func(text, s string) int {
		n := len(text)
		for i := 0; i+n <= len(s); i++ {
			j := 0
			for j < n && lower(s[i+j]) == text[j] {
				j++
			}
			if j == n {
				return i
			}
		}
		return -1
	}
	rng := rand.New(rand.NewPCG(5, 6))
	alphabet := "aAbB1@ .\xc3\xa9zZ"
	gen := func(n int) string {
		b := make([]byte, n)
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return string(b)
	}
	for range 20000 {
		needle := gen(1 + rng.IntN(4))
		f := newFolder(needle)
		if !f.ascii {
			continue
		}
		s := gen(rng.IntN(40))
		if got, want := f.index(s), slow(f.text, s); got != want {
			t.Fatalf("index(%q) of %q = %d; the byte loop finds %d", s, needle, got, want)
		}
	}
}

// TestSearchSkipsSame checks that search_state answers the same text
// when walk passes over the objects noMatchBelow clears as when it reads
// every object in order: random states of nested objects and arrays
// (scalars of every kind, nulls, hidden elements), random texts, pages
// at several offsets and limits.
func TestSearchSkipsSame(t *testing.T) {
	defer func() { skipObjects = true }()
	rng := rand.New(rand.NewPCG(7, 8))
	words := []string{"ab", "Ab", "b1", "1", "true", "x@y", "é", "a b", "2.5"}
	var gen func(depth int) any
	gen = func(depth int) any {
		switch k := rng.IntN(10); {
		case depth < 3 && k < 3:
			m := map[string]any{}
			for i := range rng.IntN(5) {
				m[fmt.Sprintf("%s%d", words[rng.IntN(len(words))], i)] = gen(depth + 1)
			}
			return m
		case depth < 3 && k < 5:
			a := make([]any, rng.IntN(5))
			for i := range a {
				a[i] = gen(depth + 1)
			}
			return a
		case k < 6:
			return nil
		case k < 7:
			return rng.IntN(2) == 0
		case k < 8:
			return json.Number(fmt.Sprint(rng.IntN(30)))
		}
		return words[rng.IntN(len(words))] + words[rng.IntN(len(words))]
	}
	ctx := context.Background()
	for i := range 400 {
		s := &fakeStep{state: map[string]any{"records": []any{gen(1), gen(1), gen(0)}, "x": gen(0)}}
		for _, text := range []string{"a", "B", "1", "true", "x@", "é", "zz"} {
			for _, page := range []string{``, `, "limit": 1`, `, "offset": 2, "limit": 2`} {
				args := fmt.Sprintf(`{"text": %q%s}`, text, page)
				var got [2]string
				for k, skip := range []bool{false, true} {
					skipObjects = skip
					res, err := SearchState.Call(ctx, s, args)
					if err != nil {
						t.Fatal(err)
					}
					got[k] = res.Text + res.Code
				}
				if got[0] != got[1] {
					t.Fatalf("state %d, search_state(%s): reading every object %s; passing over %s", i, args, got[0], got[1])
				}
			}
		}
	}
}
