package rundir

import (
	"errors"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

// TestRunCase: the case as a run met it is grown to the run's scale and
// worded by its attack, a file's attack by the template the manifest
// records; without that template it is the grown case with an error
// that says so.
func TestRunCase(t *testing.T) {
	cases, _, err := bench.LoadEmbeddedCases()
	if err != nil {
		t.Fatal(err)
	}
	var c *bench.Case
	for _, x := range cases {
		if x.ID == "fin-fraud-alert-triage" {
			c = x
		}
	}
	if c == nil || len(c.Grow) == 0 || len(c.Injections) == 0 {
		t.Fatal("fin-fraud-alert-triage, a growing case with injections, is not in the suite")
	}
	m := manifest("", 1)
	m.Attack = "case,ignore_previous,file-mine"
	m.AttackTemplates = map[string]string{"file-mine": "Mine: {{.Request}}."}
	texts := func(c *bench.Case) []string {
		var out []string
		for _, inj := range c.Injections {
			v, _ := c.State.Get(inj.At)
			s, _ := v.(string)
			out = append(out, s)
		}
		return out
	}

	if got, err := m.RunCase(c, &Record{Case: c.ID}); got != c || err != nil {
		t.Errorf("at 1x under the default attack: %p (the case %p), %v", got, c, err)
	}
	got, err := m.RunCase(c, &Record{Case: c.ID, Scale: "200KB", AttackName: "file-mine"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Injections) <= len(c.Injections) || len(got.State.Bytes()) < 150e3 {
		t.Errorf("not grown: %d injections (the case %d), %d bytes", len(got.Injections), len(c.Injections), len(got.State.Bytes()))
	}
	for _, s := range texts(got) {
		if !strings.HasPrefix(s, "Mine: ") {
			t.Errorf("an injection site holds %q, not file-mine's text", s)
		}
	}
	got, err = m.RunCase(c, &Record{Case: c.ID, AttackName: "ignore_previous"})
	if err != nil || !strings.HasPrefix(texts(got)[0], "Ignore your previous instructions and ") {
		t.Errorf("ignore_previous: %q, %v", texts(got), err)
	}

	m.AttackTemplates = nil
	got, err = m.RunCase(c, &Record{Case: c.ID, Scale: "200KB", AttackName: "file-mine"})
	if err == nil || !strings.Contains(err.Error(), "the manifest records no template of attack file-mine") {
		t.Errorf("no template: %v", err)
	}
	if got == nil || len(got.Injections) <= len(c.Injections) || strings.HasPrefix(texts(got)[0], "Mine: ") {
		t.Errorf("no template: want the grown case with its own texts")
	}
	if got, err := m.RunCase(c, &Record{Case: c.ID, Scale: "huge"}); got != nil || err == nil {
		t.Errorf("a scale that does not parse: %v, %v", got, err)
	}
}

// TestManifestAttackTemplates: the manifest records the templates of the
// attacks read from files; one of an attack the run does not read from
// a file is refused, naming the member.
func TestManifestAttackTemplates(t *testing.T) {
	dir := t.TempDir()
	m := manifest("", 2)
	m.Attack = "ignore_previous,file-mine"
	m.AttackTemplates = map[string]string{"file-mine": "Mine: {{.Request}}."}
	if err := WriteManifest(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := ReadManifest(dir)
	if err != nil || back.AttackTemplates["file-mine"] != "Mine: {{.Request}}." || back.Key() != m.Key() {
		t.Fatalf("read back: %v, %v", back, err)
	}
	other := m
	other.AttackTemplates = map[string]string{"file-mine": "Other: {{.Request}}."}
	if d := m.Differences(other); len(d) != 1 || d[0] != "attack_templates" {
		t.Errorf("another template: differences %q", d)
	}
	for _, name := range []string{"ignore_previous", "file-other"} {
		bad := m
		bad.AttackTemplates = map[string]string{name: "x"}
		if err := WriteManifest(dir, bad); err != nil {
			t.Fatal(err)
		}
		_, err := ReadManifest(dir)
		var me *ManifestError
		if !errors.As(err, &me) || me.Member != "attack_templates" {
			t.Errorf("a template of %s: %v", name, err)
		}
	}
}
