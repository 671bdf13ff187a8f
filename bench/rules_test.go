package bench

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// withReference is the example case with its step's reference patch
// replaced by patch (YAML flow lines, indented as the file's).
func withReference(t *testing.T, patch string) string {
	t.Helper()
	src := readExample(t)
	start := strings.Index(src, "    reference:\n      patch:\n")
	end := strings.Index(src, "      note: Apologised")
	if start < 0 || end < 0 {
		t.Fatal("the example's reference patch is not where the test expects it")
	}
	return src[:start] + "    reference:\n      patch:\n" + patch + src[end:]
}

// A rule check reads pre (the run's initial state) and post (its final
// state): it holds, fails, and is described as "rule EXPR".
func TestRuleCheckHolds(t *testing.T) {
	pre, _ := runtime.ParseDocument([]byte(`{"contacts": [{"id": "C-1", "ok": true}, {"id": "C-2", "ok": false}, {"id": "C-3", "ok": true}], "rows": {}}`))
	good, _ := runtime.ParseDocument([]byte(`{"rows": {"C-1": {}, "C-3": {}}}`))
	short, _ := runtime.ParseDocument([]byte(`{"rows": {"C-1": {}}}`))
	var c Check
	if err := json.Unmarshal([]byte(`{"id": "every-row", "path": "/rows", "rule": "pre.contacts.filter(c, c.ok).all(c, c.id in post.rows)"}`), &c); err != nil {
		t.Fatal(err)
	}
	if err := c.compile(); err != nil {
		t.Fatal(err)
	}
	if c.Kind() != "rule" || c.Describe() != "rule pre.contacts.filter(c, c.ok).all(c, c.id in post.rows)" {
		t.Errorf("kind %q, describe %q", c.Kind(), c.Describe())
	}
	if !c.Holds(pre.Value(), good.Value()) {
		t.Error("the rule does not hold on a final state with every row")
	}
	if c.Holds(pre.Value(), short.Value()) {
		t.Error("the rule holds on a final state that misses C-3")
	}
	if c.Holds(pre.Value(), pre.Value()) {
		t.Error("the rule holds on the initial state")
	}
	// A rule that gives no bool does not hold, and Eval says why.
	var n Check
	json.Unmarshal([]byte(`{"id": "n", "path": "/rows", "rule": "size(post.rows)"}`), &n)
	if err := n.compile(); err != nil {
		t.Fatal(err)
	}
	if ok, err := n.Eval(pre.Value(), good.Value()); ok || err == nil || !strings.Contains(err.Error(), "not a bool") {
		t.Errorf("a rule giving an int: %v, %v", ok, err)
	}
	// One that does not compile is a load error.
	var bad Check
	json.Unmarshal([]byte(`{"id": "b", "path": "/rows", "rule": "post.rows.all(k,"}`), &bad)
	if err := bad.compile(); err == nil || !strings.HasPrefix(err.Error(), "rule: ") {
		t.Errorf("a rule that does not parse compiled: %v", err)
	}
}

// A rule element of a reference patch is evaluated on the state before
// the step and its operations are spliced in its place among the literal
// ones; a patch without rules keeps its bytes.
func TestReferenceRuleSplices(t *testing.T) {
	src := withReference(t, `        - {op: replace, path: /ticket/status, value: resolved}
        - {rule: "[{'op': 'replace', 'path': '/ticket/reply', 'value': 'Dear ' + pre.customer.name + ', a refund of ' + string(pre.order.total) + ' ' + pre.order.currency + ' for ' + pre.order.id + ' and 42.50 is on its way.'}, {'op': 'add', 'path': '/audit/-', 'value': pre.ticket.id}]"}
        - {op: add, path: /audit/-, value: "refund of order total confirmed"}
`)
	c, ps := ParseCase("rules.yaml", []byte(src))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	s := c.Steps[0]
	if !s.HasReferenceRules() {
		t.Fatal("HasReferenceRules is false")
	}
	got, err := s.ReferenceAt(c.State)
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Patch []map[string]any `json:"patch"`
		Note  string           `json:"note"`
	}
	if err := json.Unmarshal(got, &ref); err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, op := range ref.Patch {
		paths = append(paths, op["op"].(string)+" "+op["path"].(string))
	}
	want := []string{"replace /ticket/status", "replace /ticket/reply", "add /audit/-", "add /audit/-"}
	if strings.Join(paths, ",") != strings.Join(want, ",") {
		t.Errorf("ops %v, want %v", paths, want)
	}
	if ref.Patch[1]["value"] != "Dear Ada Example, a refund of 42.5 EUR for ORD-1001 and 42.50 is on its way." || ref.Patch[2]["value"] != "T-77" {
		t.Errorf("generated values %q, %q", ref.Patch[1]["value"], ref.Patch[2]["value"])
	}
	if ref.Note == "" {
		t.Error("the note is lost")
	}
	run, err := RunReference(context.Background(), c)
	if err != nil || run.Failed >= 0 {
		t.Fatalf("the generated reference does not commit: %v %+v", err, run)
	}
	// The state before decides: another customer, another greeting.
	doc, err := runtime.ParseDocument([]byte(strings.Replace(string(c.State.Bytes()), `"Ada Example"`, `"Grace Hopper"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	b, err := s.ReferenceAt(doc)
	if err != nil || !strings.Contains(string(b), "Dear Grace Hopper,") {
		t.Errorf("on another state: %s, %v", b, err)
	}
	// A step without rules: its literal bytes, whatever the state.
	lit, ps := ParseCase("lit.yaml", []byte(readExample(t)))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if lit.Steps[0].HasReferenceRules() {
		t.Error("a literal reference has rules")
	}
	a, err1 := lit.Steps[0].ReferenceAt(nil)
	b2, err2 := lit.Steps[0].ReferenceAt(lit.State)
	if err1 != nil || err2 != nil || string(a) != string(b2) || !strings.Contains(string(a), "ORD-1001") {
		t.Errorf("literal reference: %s, %v, %v", a, err1, err2)
	}
}

// A rule that does not compile is a load problem naming the case, the
// step and the patch index; one that gives no list of operations is an
// error of ReferenceAt (and a failed reference run), never a panic.
func TestReferenceRuleErrors(t *testing.T) {
	src := withReference(t, `        - {op: replace, path: /ticket/status, value: resolved}
        - {rule: "pre.order.("}
`)
	_, ps := ParseCase("bad.yaml", []byte(src))
	if len(ps) != 1 || ps[0].Code != ProblemReferenceRule || ps[0].Case != "sup-example-refund" ||
		!strings.Contains(ps[0].Msg, "step reply: reference patch[1]: rule does not compile") || ps[0].Line == 0 {
		t.Fatalf("problems %v", ps)
	}
	src = withReference(t, `        - {rule: "pre.order.total", op: add}
`)
	if _, ps := ParseCase("mixed.yaml", []byte(src)); len(ps) != 1 || !strings.Contains(ps[0].Msg, "rule") {
		t.Fatalf("a rule element with an op: problems %v", ps)
	}
	for _, tt := range []struct{ rule, want string }{
		{`pre.order.total`, "gave a number, not a list"},
		{`[1, 2]`, "element 0 is a number, not a JSON Patch operation"},
		{`[{'path': '/ticket/status'}]`, "element 0 has no op string"},
		{`[{'op': 'add', 'path': '/x', 'value': pre.nothing.here}]`, "no such key"},
		{`[{1: 'a'}]`, "key"},
	} {
		src := withReference(t, "        - {rule: \""+tt.rule+"\"}\n")
		c, ps := ParseCase("eval.yaml", []byte(src))
		if len(ps) > 0 {
			t.Fatalf("%s: %v", tt.rule, ps)
		}
		_, err := c.Steps[0].ReferenceAt(c.State)
		if err == nil || !strings.Contains(err.Error(), "step reply: reference patch[0]: rule: ") || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: error %v, want one with %q", tt.rule, err, tt.want)
		}
		run, err := RunReference(context.Background(), c)
		if err != nil || run.Failed != 0 || run.RuleError == "" {
			t.Errorf("%s: the reference run: %v, %+v", tt.rule, err, run)
		}
	}
}
