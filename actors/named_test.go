package actors

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestSplitName: a spec's last #name= gives the display name; a name of
// other characters, an empty one or a name alone is refused.
func TestSplitName(t *testing.T) {
	for _, c := range []struct{ spec, bare, name, err string }{
		{"reference", "reference", "", ""},
		{"exec:/tmp/x/agent.sh#name=my-agent", "exec:/tmp/x/agent.sh", "my-agent", ""},
		{"mcp:python3 /tmp/x/a.py#name=a.v2_1", "mcp:python3 /tmp/x/a.py", "a.v2_1", ""},
		{"exec:sh -c 'echo #name=x'#name=y", "exec:sh -c 'echo #name=x'", "y", ""},
		{"reference#name=", "", "", "is empty"},
		{"reference#name=my agent", "", "", "may hold only"},
		{"reference#name=-a", "", "", "must begin"},
		{"reference#name=a@b", "", "", "may hold only"},
		{"#name=a", "", "", "names no actor"},
		{"reference#name=" + strings.Repeat("a", 65), "", "", "longer than 64"},
		{"reference#nam=r", "", "", `"#nam=" is no mark of a spec; a display name is given as SPEC#name=NAME`},
		{"exec:/tmp/a.sh#Name=r", "", "", `"#Name=" is no mark`},
		{"exec:sh -c 'echo # a=b'", "exec:sh -c 'echo # a=b'", "", ""},
	} {
		bare, name, err := SplitName(c.spec)
		if c.err != "" {
			if err == nil || !strings.Contains(err.Error(), c.err) {
				t.Errorf("%q: %v, want an error with %q", c.spec, err, c.err)
			}
			continue
		}
		if err != nil || bare != c.bare || name != c.name {
			t.Errorf("%q: %q %q %v, want %q %q", c.spec, bare, name, err, c.bare, c.name)
		}
	}
}

// TestBuildNamed: a named actor is a Named over the actor of its spec,
// found through it by Walk and Unnamed; two actors of one name are
// refused.
func TestBuildNamed(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "fa")
	acts, err := Build([]string{"reference", "oversharer#name=over", "writer=files:" + dir + ",reference#name=mixed", "files:" + dir + "#name=panel"}, BuildOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, a := range acts {
		names = append(names, a.Name())
	}
	if got := strings.Join(names, " "); got != "reference over mixed panel" {
		t.Errorf("names %q", got)
	}
	if SpecOf(acts[1]) != "oversharer" || SpecOf(acts[0]) != "reference" {
		t.Errorf("specs %q %q", SpecOf(acts[1]), SpecOf(acts[0]))
	}
	if _, ok := Unnamed(acts[1]).(Oversharer); !ok {
		t.Errorf("unnamed %T", Unnamed(acts[1]))
	}
	if _, ok := Unnamed(acts[2]).(*RoleMap); !ok {
		t.Errorf("a named role map unnamed is %T", Unnamed(acts[2]))
	}
	if _, ok := Unnamed(acts[3]).(*Files); !ok {
		t.Errorf("a named file actor unnamed is %T", Unnamed(acts[3]))
	}
	found := false
	Walk(acts[1], func(a Actor) bool { _, found = a.(Oversharer); return !found })
	if !found {
		t.Error("Walk does not reach the named actor")
	}
	for _, specs := range [][]string{{"reference", "oversharer#name=reference"}, {"oversharer#name=a", "follower#name=a"}} {
		_, err := Build(specs, BuildOptions{})
		var dup *DuplicateSpecError
		if !errors.As(err, &dup) || dup.Name == "" || !strings.Contains(err.Error(), "another actor is named") {
			t.Errorf("%q: %v", specs, err)
		}
	}
	var se *SpecError
	if _, err := Build([]string{"reference#name=a b"}, BuildOptions{}); !errors.As(err, &se) {
		t.Errorf("a bad name: %v", err)
	}
}

// TestBuildRefusesNamesOfOtherActors: a display name that is another
// actor's spec (named or not), or a no-model actor's name given to
// another actor, is refused naming the name; a no-model actor named as
// itself is not. A name mark given twice is said to be so.
func TestBuildRefusesNamesOfOtherActors(t *testing.T) {
	for _, c := range []struct {
		specs []string
		err   string
	}{
		{[]string{"reference#name=follower", "follower#name=reference"}, `the name "follower" is the spec of another actor of the run (follower#name=reference)`},
		{[]string{"oversharer#name=follower", "follower#name=f"}, `the name "follower" is the spec of another actor of the run (follower#name=f)`},
		{[]string{"reference#name=bulk"}, `the name "bulk" is the no-model actor bulk's`},
		{[]string{"exec:/bin/sh#name=oversharer", "reference"}, `the name "oversharer" is the no-model actor`},
		{[]string{"reference#name=x#name=y"}, "the name mark #name= is given twice"},
	} {
		_, err := Build(c.specs, BuildOptions{CheckOnly: true})
		var se *SpecError
		if !errors.As(err, &se) || !strings.Contains(err.Error(), c.err) {
			t.Errorf("%q: %v, want a *SpecError with %q", c.specs, err, c.err)
		}
	}
	for _, specs := range [][]string{{"reference#name=reference", "follower"}, {"follower#name=f", "reference#name=r"}} {
		if _, err := Build(specs, BuildOptions{CheckOnly: true}); err != nil {
			t.Errorf("%q: %v", specs, err)
		}
	}
}
