package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

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

// TestAttackBounds: a template that runs too long or writes too much is
// stopped and refused, as is a name no attack can have and a template
// file too large, each with an error that says which.
func TestAttackBounds(t *testing.T) {
	defer func(d time.Duration) { attackTimeLimit = d }(attackTimeLimit)
	attackTimeLimit = 20 * time.Millisecond
	// About a quarter of a second: the goroutine left to finish it does
	// not spin for long.
	if _, err := ParseAttack("file-spin", "spin.tmpl", "{{range 10000000}}{{end}}{{.Request}}"); err == nil || !strings.Contains(err.Error(), "the template did not finish within 20ms") {
		t.Errorf("a template that spins: %v", err)
	}
	attackTimeLimit = time.Second
	var double strings.Builder
	double.WriteString(`{{define "t0"}}{{.Request}}{{end}}`)
	for i := 1; i <= 24; i++ {
		fmt.Fprintf(&double, `{{define "t%d"}}{{template "t%d" .}}{{template "t%d" .}}{{end}}`, i, i-1, i-1)
	}
	double.WriteString(`{{template "t24" .}}`)
	if _, err := ParseAttack("file-double", "double.tmpl", double.String()); err == nil || !strings.Contains(err.Error(), "the template writes more than 65536 bytes for one injection") {
		t.Errorf("a template that writes 1 GB: %v", err)
	}
	big := strings.Repeat("x", 10<<20)
	if _, err := ParseAttack("file-big", "big.tmpl", big); err == nil || !strings.Contains(err.Error(), "the template is more than 65536 bytes") {
		t.Errorf("a 10 MB template: %v", err)
	}
	for name, want := range map[string]string{
		"file-my weird name!": `want 1 to 64 lower-case letters, digits, '_', '.' or '-', starting with a letter or digit`,
		"file-":               "the file's name is empty before its extension",
		"case":                "is the default's",
	} {
		_, err := ParseAttack(name, "", "{{.Request}}")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), `not "case"`) && name != "case" {
			t.Errorf("ParseAttack(%q): %v, want %q", name, err, want)
		}
	}
}

// TestAttackSample: the check executes a template for each op, with a
// role and an original text, so that a template blank for one op is
// refused and one that writes the original alone is taken; a text that
// is blank for a case's injection all the same is refused at run time,
// naming the attack, the case and the injection site.
func TestAttackSample(t *testing.T) {
	if _, err := ParseAttack("file-moveblank", "", `{{if eq .Op "move"}} {{else}}{{.Request}}{{end}}`); err == nil || !strings.Contains(err.Error(), "blank text for a sample move injection") {
		t.Errorf("a template blank for a move: %v", err)
	}
	if _, err := ParseAttack("file-orig", "", `{{.Original}}`); err != nil {
		t.Errorf("a template of the original text: %v", err)
	}
	if _, err := ParseAttack("file-role", "", `{{.Role}}`); err != nil {
		t.Errorf("a template of the role: %v", err)
	}
	a, err := ParseAttack("file-s1", "", `{{if eq .Step "s1"}}{{.Request}}{{end}}`)
	if err != nil {
		t.Fatal(err)
	}
	cases, _, err := LoadEmbeddedCases()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		for _, inj := range c.Injections {
			if inj.Step == "s1" {
				continue
			}
			_, err := c.Attacked(a)
			want := "case " + c.ID + ": attack file-s1: the template writes a blank text for the injection at "
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Errorf("case %s: %v, want %q", c.ID, err, want)
			}
			return
		}
	}
	t.Fatal("no embedded case plants an injection for a step other than s1")
}

// TestAttackRecords: the default records no name and no template, a
// built-in attack its name, a file attack its name and its template.
func TestAttackRecords(t *testing.T) {
	ip, err := LookupAttack("ignore_previous")
	if err != nil {
		t.Fatal(err)
	}
	mine, err := ParseAttack("file-mine", "mine.tmpl", "{{.Role}}: please {{.Op}} {{.Target}} to {{.Into}}")
	if err != nil {
		t.Fatal(err)
	}
	names, recorded, templates := AttackRecords([]*Attack{nil, ip, mine})
	if strings.Join(names, ",") != AttackCase+",ignore_previous,file-mine" || strings.Join(recorded, ",") != ",ignore_previous,file-mine" {
		t.Errorf("names %q, recorded %q", names, recorded)
	}
	if len(templates) != 1 || templates["file-mine"] != mine.Template {
		t.Errorf("templates %q", templates)
	}
	if _, _, none := AttackRecords([]*Attack{nil, ip}); none != nil {
		t.Errorf("no file attack, templates %q", none)
	}
}
