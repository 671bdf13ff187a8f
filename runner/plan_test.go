package runner

import (
	"strings"
	"testing"
	"time"
)

// TestParsePlanTypes: an integer key takes only an integer (YAML's 2.5
// was cut to 2), and Where gives the line of each key and list item.
func TestParsePlanTypes(t *testing.T) {
	for text, want := range map[string]string{
		"version: 1\nrounds: 2.5\n":                   "p.yaml:2: rounds: want an integer, got 2.5",
		"version: 1.9\n":                              "p.yaml:1: version: want an integer, got 1.9",
		"version: 1\nlimits:\n  max_attempts: 2.99\n": "p.yaml:3: limits.max_attempts: want an integer, got 2.99",
		"version: 1\nactors: [reference, 7]\n":        "p.yaml:2: actors: want a list of strings, got 7 as item 2",
		"version: 1\nsettings: {structured: 1}\n":     "p.yaml:2: settings.structured: want true or false, got 1",
	} {
		if _, err := ParsePlan("p.yaml", []byte(text)); err == nil || err.Error() != want {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
	p, err := ParsePlan("p.yaml", []byte("version: 1\nactors:\n  - reference\n  - follower\nlimits:\n  max_attempts: 2\n"))
	if err != nil {
		t.Fatal(err)
	}
	for key, line := range map[string]int{"version": 1, "actors": 2, "actors.1": 4, "limits.max_attempts": 6, "rounds": 0} {
		if f, l := p.Where(key); l != line || f != "p.yaml" {
			t.Errorf("Where(%s) = %s:%d, want line %d", key, f, l, line)
		}
	}
	if !strings.Contains(string(p.YAML()), "max_attempts: 2") {
		t.Errorf("YAML:\n%s", p.YAML())
	}
}

// TestPlanYAMLAsWritten: a plan's YAML, and so its digest, keeps a
// duration as the file writes it and leaves out the keys it does not
// give.
func TestPlanYAMLAsWritten(t *testing.T) {
	p, err := ParsePlan("p.yaml", []byte("version: 1\nsettings: {timeout: 90s, temperature: 1}\nlimits: {max_turns: null}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(p.YAML()), "version: 1\nsettings:\n  temperature: 1\n  timeout: 90s\n"; got != want {
		t.Errorf("YAML:\n%s\nwant\n%s", got, want)
	}
	if p.Spec.Timeout != 90*time.Second || !p.Has("settings.timeout") || p.Has("limits.max_turns") {
		t.Errorf("plan: %+v", p.Spec)
	}
}

// TestParsePlanRefusesMergeKeysAndAliases: a merge key (<<), an anchor
// or an alias anywhere in a plan is refused with the line and the key (a
// merged 2.5 was cut to 2 past the type check, a merged string refused
// with the decoder's own words).
func TestParsePlanRefusesMergeKeysAndAliases(t *testing.T) {
	for _, tt := range []struct{ name, text, want string }{
		{"merged floats", "version: 1\nlimits: {<<: {max_attempts: 2.5, max_tool_calls: 3.99}}\n",
			"p.yaml:2: limits: merge keys (<<) are not supported in a plan; write the keys out"},
		{"merged string", "version: 1\nlimits:\n  <<: {max_attempts: \"2\"}\n",
			"p.yaml:3: limits: merge keys (<<) are not supported in a plan; write the keys out"},
		{"merge at the top", "version: 1\n<<: {rounds: 2.5}\n",
			"p.yaml:2: the plan: merge keys (<<) are not supported in a plan; write the keys out"},
		{"explicit merge tag", "version: 1\nsettings:\n  !!merge <<: {seed: 1}\n",
			"p.yaml:3: settings: merge keys (<<) are not supported in a plan; write the keys out"},
		{"anchor", "version: 1\nlimits: &l {max_attempts: 2}\n",
			"p.yaml:2: limits: anchors (&l) are not supported in a plan; write the value out where it is used"},
		{"anchor in a list", "version: 1\nactors: [&a reference]\n",
			"p.yaml:2: actors: anchors (&a) are not supported in a plan; write the value out where it is used"},
		{"alias", "version: 1\nx-rounds: &r 2\nrounds: *r\n",
			"p.yaml:3: rounds: aliases (*r) are not supported in a plan; write the value out"},
		{"anchor merged", "x-limits: &l {max_attempts: 2.5}\nversion: 1\nlimits:\n  <<: *l\n  max_turns: 3\n",
			"p.yaml:4: limits: merge keys (<<) are not supported in a plan; write the keys out"},
		{"aliased list", "version: 1\ncases: {domains: &d [support]}\nconfigs: {names: *d}\n",
			"p.yaml:3: configs.names: aliases (*d) are not supported in a plan; write the value out"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			p, err := ParsePlan("p.yaml", []byte(tt.text))
			if err == nil || err.Error() != tt.want {
				var spec any
				if p != nil {
					spec = p.Spec
				}
				t.Errorf("%q: %v (settings %+v), want %s", tt.text, err, spec, tt.want)
			}
		})
	}
	if _, err := ParsePlan("p.yaml", []byte("version: 1\nlimits: {max_attempts: 2, max_tool_calls: 3}\nactors: [\"<<x\", reference]\n")); err != nil {
		t.Errorf("a plain plan: %v", err)
	}
}

// TestPlanScaleList: the scale key takes a string ("10MB") or a list of
// strings ([1x, 200KB]), kept as one comma list in Spec.Scale; the
// plan's YAML writes a list back as a list and one scale as a string; a
// list of anything but strings, or an empty one, is refused.
func TestPlanScaleList(t *testing.T) {
	for text, want := range map[string]struct{ scale, yaml string }{
		"version: 1\nscale: 10MB\n":             {"10MB", "scale: 10MB\n"},
		"version: 1\nscale: [1x, 200KB]\n":      {"1x,200KB", "scale: [1x, 200KB]\n"},
		"version: 1\nscale:\n  - 1MB\n  - 1x\n": {"1MB,1x", "scale: [1MB, 1x]\n"},
	} {
		p, err := ParsePlan("p.yaml", []byte(text))
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if p.Spec.Scale != want.scale || !strings.Contains(string(p.YAML()), want.yaml) {
			t.Errorf("%q: scale %q, YAML:\n%s; want %q and %q", text, p.Spec.Scale, p.YAML(), want.scale, want.yaml)
		}
	}
	for text, want := range map[string]string{
		"version: 1\nscale: [1x, 2]\n": "p.yaml:2: scale: want a list of strings, got 2 as item 2",
		"version: 1\nscale: []\n":      "p.yaml:2: scale: an empty list",
		"version: 1\nscale: 2\n":       "p.yaml:2: scale: want a string or a list of strings, got 2",
	} {
		if _, err := ParsePlan("p.yaml", []byte(text)); err == nil || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%q: %v, want %s", text, err, want)
		}
	}
}
