package actors

import (
	"context"
	"fmt"
	"strings"
)

// NameMark ends a spec and starts the actor's display name:
// "exec:/tmp/x/agent.sh#name=my-agent" is the actor of
// "exec:/tmp/x/agent.sh", named my-agent in its runs' records, their ids
// and every table.
const NameMark = "#name="

// SplitName splits a spec into the spec proper and the display name its
// last NameMark gives ("" when it has none). A name is 1 to 64 letters,
// digits, '.', '_' or '-', beginning with a letter or digit; any other is
// an error, and so is a spec that gives a name twice.
func SplitName(spec string) (bare, name string, err error) {
	i := strings.LastIndex(spec, NameMark)
	if i < 0 {
		// A mistyped mark ("#nam=x", "#Name=x") would otherwise read as
		// a role map (role=spec) and fail far from the typo.
		if j := strings.LastIndex(spec, "#"); j >= 0 {
			if k := strings.Index(spec[j:], "="); k > 1 && !strings.ContainsAny(spec[j:j+k], " ,/") {
				return "", "", fmt.Errorf("actor %q: %q is no mark of a spec; a display name is given as SPEC%sNAME", spec, spec[j:j+k+1], NameMark)
			}
		}
		return spec, "", nil
	}
	bare, name = spec[:i], spec[i+len(NameMark):]
	if bare == "" {
		return "", "", fmt.Errorf("actor %q: %s names no actor", spec, NameMark+name)
	}
	// A spec whose bare part itself ends in a mark and a well-formed name
	// ("reference#name=x#name=y") gives the name twice; a mark inside a
	// command ("exec:sh -c 'echo #name=x'") is followed by what is no
	// name.
	if j := strings.LastIndex(bare, NameMark); j >= 0 && checkName(bare[j+len(NameMark):]) == "" {
		return "", "", fmt.Errorf("actor %q: the name mark %s is given twice; give one name", spec, NameMark)
	}
	if why := checkName(name); why != "" {
		return "", "", fmt.Errorf("actor %q: the name %q %s", spec, name, why)
	}
	return bare, name, nil
}

// checkName says what is wrong with a display name, "" when nothing.
func checkName(name string) string {
	switch {
	case name == "":
		return "is empty"
	case len(name) > 64:
		return "is longer than 64 bytes"
	}
	for i, r := range name {
		letter := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9'
		if i == 0 && !letter {
			return "must begin with a letter or a digit"
		}
		if !letter && r != '.' && r != '_' && r != '-' {
			return "may hold only letters, digits, '.', '_' and '-'"
		}
	}
	return ""
}

// Named gives an actor a display name (a spec's NameMark): its Name is
// the display name, so its runs are recorded, keyed and shown under it;
// Spec is the spec it was made of. It hands every request on to the
// actor it names.
type Named struct {
	Actor Actor
	name  string
	spec  string
}

// NewNamed names a, made of spec (without the NameMark), name.
func NewNamed(a Actor, spec, name string) *Named { return &Named{Actor: a, name: name, spec: spec} }

// Name implements Actor: the display name.
func (n *Named) Name() string { return n.name }

// Spec is the spec the actor was made of, without its name.
func (n *Named) Spec() string { return n.spec }

// Unwrap implements Wrapper: the actor it names.
func (n *Named) Unwrap() []Actor { return []Actor{n.Actor} }

// Propose implements Actor.
func (n *Named) Propose(ctx context.Context, req Request) (Response, error) {
	return n.Actor.Propose(ctx, req)
}

// Unnamed returns the actor a display name wraps (Named), or a itself:
// the actor to ask what kind it is (a Driver, a role map, a file actor).
func Unnamed(a Actor) Actor {
	if n, ok := a.(*Named); ok {
		return n.Actor
	}
	return a
}

// SpecOf returns the spec an actor was made of: a Named actor's Spec,
// else its Name.
func SpecOf(a Actor) string {
	if n, ok := a.(*Named); ok {
		return n.spec
	}
	return a.Name()
}
