package bench

import (
	"strings"
	"testing"
	"testing/fstest"
)

func embeddedConfigs(t *testing.T) []*Config {
	t.Helper()
	cfgs, err := LoadConfigs(EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return cfgs
}

func TestEmbeddedConfigs(t *testing.T) {
	cfgs := embeddedConfigs(t)
	var names []string
	for _, c := range cfgs {
		names = append(names, c.Name+":"+c.View+":"+strings.Join(c.Gates, ","))
	}
	got := strings.Join(names, " ")
	want := "unconstrained:full: schema-only:full:schema fsm-acl:full:phase,acl view-only:projected: " +
		"verify-only:full:scope,phase,schema,invariants patchoptic:projected:scope,phase,schema,invariants"
	if got != want {
		t.Errorf("configurations:\n got %s\nwant %s", got, want)
	}
	for _, c := range cfgs {
		if c.Runs("parse") != true || c.Runs("apply") != true {
			t.Errorf("%s does not run parse and apply", c.Name)
		}
		if c.Runs("acl") != (c.Name == "fsm-acl") {
			t.Errorf("%s: Runs(acl) = %v", c.Name, c.Runs("acl"))
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct{ name, text, want string }{
		{"x.yaml", "name: x\nlabel: X\nview: full\ngates: []\ncolour: red\n", `x.yaml:5: unknown key "colour"`},
		{"x.yaml", "name: y\nlabel: X\nview: full\ngates: []\n", `x.yaml:1: name "y" differs from the file name "x"`},
		{"x.yaml", "name: x\nlabel: X\nview: partial\ngates: []\n", `x.yaml:3: view must be "full" or "projected"`},
		{"x.yaml", "name: x\nlabel: X\nview: full\ngates: [scope, firewall]\n", `x.yaml:4: `},
		{"x.yaml", "name: x\nlabel: X\nview: full\n", `x.yaml: gates is required`},
		{"x.yaml", "name: x\nview: full\ngates: []\n", `x.yaml: label is required`},
		{"x.yaml", "name: x\nlabel: X\nview: full\ngates: scope\n", `x.yaml:4: `},
		{"x.yaml", "", `x.yaml: empty configuration`},
	}
	for _, tt := range tests {
		_, err := ParseConfig(tt.name, []byte(tt.text))
		if err == nil || !strings.HasPrefix(err.Error(), tt.want) {
			t.Errorf("%q: error %v, want prefix %q", tt.text, err, tt.want)
		}
	}
}

func TestDuplicateConfigurationName(t *testing.T) {
	fsys := fstest.MapFS{
		"patchoptic.yaml": {Data: []byte("name: patchoptic\nlabel: A\nview: projected\ngates: [scope]\n")},
		"patchoptic.yml":  {Data: []byte("name: patchoptic\nlabel: B\nview: projected\ngates: [scope]\n")},
	}
	_, err := LoadConfigs(fsys, nil)
	if err == nil || !strings.Contains(err.Error(), `configuration "patchoptic" is also defined by`) {
		t.Fatalf("error %v", err)
	}
}
