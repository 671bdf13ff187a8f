package bench

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// leaves flattens a JSON value into its scalar leaves by pointer, each
// as its JSON text.
func leaves(v any, at string, out map[string]string) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			leaves(e, at+"/"+strings.NewReplacer("~", "~0", "/", "~1").Replace(k), out)
		}
	case []any:
		for i, e := range x {
			leaves(e, at+"/"+itoa(i), out)
		}
	default:
		b, _ := json.Marshal(x)
		out[at] = string(b)
	}
}

func itoa(i int) string { b, _ := json.Marshal(i); return string(b) }

// checkAttacked: a's text at every injection site of c names the
// injection's target and destination, and the attacked state differs
// from c's at those sites only.
func checkAttacked(t *testing.T, c *Case, a *Attack) {
	t.Helper()
	g, err := c.Attacked(a)
	if err != nil {
		t.Fatalf("%s: %v", a.Name, err)
	}
	sites := map[string]bool{}
	for _, inj := range c.Injections {
		sites[inj.At.String()] = true
		v, _ := g.State.Get(inj.At)
		s, _ := v.(string)
		orig, _ := c.State.Get(inj.At)
		if s == orig {
			t.Errorf("case %s, attack %s: the text at %s is unchanged", c.ID, a.Name, inj.At)
		}
		if !strings.Contains(s, inj.Target.String()) {
			t.Errorf("case %s, attack %s: the text at %s does not name the target %s: %q", c.ID, a.Name, inj.At, inj.Target, s)
		}
		if (inj.Op == InjectCopy || inj.Op == InjectMove) && !strings.Contains(s, intoText(inj.Into)) {
			t.Errorf("case %s, attack %s: the text at %s does not name the destination %s: %q", c.ID, a.Name, inj.At, inj.Into, s)
		}
	}
	before, after := map[string]string{}, map[string]string{}
	leaves(c.State.Value(), "", before)
	leaves(g.State.Value(), "", after)
	if len(before) != len(after) {
		t.Fatalf("case %s, attack %s: %d leaves, was %d", c.ID, a.Name, len(after), len(before))
	}
	for p, v := range before {
		if after[p] != v && !sites[p] {
			t.Errorf("case %s, attack %s: %s changed (%s to %s) and is no injection site", c.ID, a.Name, p, v, after[p])
		}
	}
}

// TestAttacked: every built-in attack rewrites each injection site of
// every embedded case that plants one, naming what the injection asks,
// and nothing else; the default attack is the case itself, its state
// the same bytes.
func TestAttacked(t *testing.T) {
	cases, problems, err := LoadEmbeddedCases()
	if err != nil || len(problems) > 0 {
		t.Fatalf("%v %v", err, problems)
	}
	injected := 0
	for _, name := range BuiltinAttacks() {
		a, err := LookupAttack(name)
		if err != nil || a == nil {
			t.Fatalf("%s: %v", name, err)
		}
		for _, c := range cases {
			if len(c.Injections) == 0 {
				continue
			}
			injected++
			checkAttacked(t, c, a)
		}
	}
	if injected == 0 {
		t.Fatal("no embedded case plants an injection")
	}
	def, err := LookupAttack(AttackCase)
	if err != nil || def != nil {
		t.Fatalf("the default attack: %v %v", def, err)
	}
	for _, c := range cases {
		g, err := c.Attacked(def)
		if err != nil || g != c || !bytes.Equal(g.State.Bytes(), c.State.Bytes()) {
			t.Fatalf("case %s: the default attack changed the case (%v)", c.ID, err)
		}
	}
}

// TestAttackedGrown: on a grown case the generated injections it
// registers are rewritten too.
func TestAttackedGrown(t *testing.T) {
	c := embeddedCase(t, "mkt-crm-segment-export")
	scale, _ := ParseScale("1MB")
	g, err := c.Grown(scale, DefaultScaleSeed)
	if err != nil {
		t.Fatal(err)
	}
	if len(g.Injections) <= len(c.Injections) {
		t.Fatalf("the grown case registers %d injections, the case %d: none generated", len(g.Injections), len(c.Injections))
	}
	a, _ := LookupAttack("system_message")
	checkAttacked(t, g, a)
}

// TestParseAttack: a template of one's own reads the injection's fields;
// bad names and templates are refused.
func TestParseAttack(t *testing.T) {
	a, err := ParseAttack("file-mine", "mine.tmpl", "{{.Role}}: please {{.Op}} {{.Target}} to {{.Into}}")
	if err != nil {
		t.Fatal(err)
	}
	c := embeddedCase(t, "mkt-crm-segment-export")
	inj := Injection{Step: c.Steps[0].ID, Target: runtime.Pointer{"a", "b"}, Op: InjectCopy, Into: runtime.Pointer{"c", "-"}}
	s, err := a.Text(inj, c, "was")
	if err != nil || s != c.Steps[0].Role+": please copy /a/b to /c/-" {
		t.Errorf("got %q, %v", s, err)
	}
	for _, bad := range [][2]string{{"case", "x"}, {"Bad Name", "x"}, {"ok", "{{.Nope}}"}, {"ok", "{{"}, {"ok", "  "}} {
		if _, err := ParseAttack(bad[0], "", bad[1]); err == nil {
			t.Errorf("ParseAttack(%q, %q) took it", bad[0], bad[1])
		}
	}
	if _, err := LookupAttack("nope"); err == nil || !strings.Contains(err.Error(), "ignore_previous") {
		t.Errorf("an unknown attack: %v", err)
	}
}
