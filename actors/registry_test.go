package actors

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// fakeLive is the actor of a provider registered by a test: a Live actor
// that answers with the reference proposal.
type fakeLive struct {
	spec, host string
	breaker    *Breaker
}

func (f *fakeLive) Name() string      { return f.spec }
func (f *fakeLive) Provider() string  { return "fakeprov" }
func (f *fakeLive) Endpoint() string  { return "fakeprov " + f.host }
func (f *fakeLive) Breaker() *Breaker { return f.breaker }
func (f *fakeLive) SpeaksTools() bool { return true }
func (f *fakeLive) CacheKey() map[string]any {
	return map[string]any{"provider": "fakeprov", "host": f.host, "spec": f.spec}
}
func (f *fakeLive) Propose(_ context.Context, req Request) (Response, error) {
	return Response{Raw: string(req.Reference)}, nil
}

// registerFake registers the fakeprov: kind for the test, its host read
// from FAKEPROV_HOST (kept in Params.Env: the kind has no field of its
// own) and recorded in the manifest as fakeprov_host.
func registerFake(t *testing.T) {
	t.Helper()
	t.Cleanup(Register(Kind{Spec: "fakeprov:", Usage: "fakeprov:MODEL", Provider: "fakeprov",
		New: func(spec string, p Params) (Actor, error) {
			a := &fakeLive{spec: spec, host: p.Env["FAKEPROV_HOST"]}
			if p.Breakers != nil {
				a.breaker = p.Breakers.For(a.Endpoint())
			}
			return a, nil
		},
		Env: []EnvVar{{Name: "FAKEPROV_HOST", Help: "the fake provider's server", Manifest: "fakeprov_host"}},
	}))
}

// A kind registered in one place is what New makes, Known and EnvVars
// list, Build wraps as a live actor and Providers names; removed, it is
// gone from all of them.
func TestRegistryDrivesNewKnownEnv(t *testing.T) {
	registerFake(t)
	if !slices.Contains(Known(), "fakeprov:MODEL") || !slices.IsSorted(Known()) {
		t.Errorf("Known() = %v, want fakeprov:MODEL among them, sorted", Known())
	}
	var env *EnvVar
	for _, v := range EnvVars() {
		if v.Name == "FAKEPROV_HOST" {
			env = &v
		}
	}
	if env == nil || env.Manifest != "fakeprov_host" {
		t.Fatalf("EnvVars() has no FAKEPROV_HOST recorded as fakeprov_host: %v", EnvVars())
	}
	var p Params
	env.Set(&p, "http://127.0.0.1:7")
	if env.Get(p) != "http://127.0.0.1:7" {
		t.Errorf("FAKEPROV_HOST reads back as %q", env.Get(p))
	}
	a, err := New("fakeprov:m", p)
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := a.(*fakeLive); !ok || f.host != "http://127.0.0.1:7" {
		t.Fatalf("New made %#v", a)
	}
	as, err := Build([]string{"fakeprov:m", "agent=fakeprov:n,reference"}, BuildOptions{Params: p, CacheDir: t.TempDir(), RPS: 5})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := as[0].(*Cached); !ok {
		t.Errorf("Build did not put the live actor behind the cache: %T", as[0])
	}
	for _, a := range as {
		if got := Providers(a); !slices.Equal(got, []string{"fakeprov"}) {
			t.Errorf("%s: Providers = %v", a.Name(), got)
		}
	}
	if k, ok := ProviderKind("fakeprov"); !ok || k.Spec != "fakeprov:" {
		t.Errorf("ProviderKind(fakeprov) = %v, %v", k, ok)
	}
	// The existing providers' variables fill their Params fields.
	for _, name := range []string{"OPENAI_BASE_URL", "OPENAI_API_KEY", "OLLAMA_HOST", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"} {
		i := slices.IndexFunc(EnvVars(), func(v EnvVar) bool { return v.Name == name })
		if i < 0 || EnvVars()[i].Field == nil {
			t.Errorf("%s is not registered with a Params field", name)
		}
	}

	t.Run("unregistered", func(t *testing.T) {
		unregister := Register(Kind{Spec: "gone:", Usage: "gone:MODEL", New: func(string, Params) (Actor, error) { return Reference{}, nil }})
		unregister()
		if _, err := New("gone:m", Params{}); err == nil || !strings.Contains(err.Error(), "unknown actor") {
			t.Errorf("an unregistered kind: %v", err)
		}
		if slices.Contains(Known(), "gone:MODEL") {
			t.Error("an unregistered kind is still known")
		}
	})
}

// A kind registered twice, or without New, is a mistake of the program:
// Register panics at init rather than letting one shadow the other.
func TestRegisterRefusesDuplicates(t *testing.T) {
	for _, k := range []Kind{
		{Spec: "openai:", Usage: "openai:MODEL", New: func(string, Params) (Actor, error) { return nil, nil }},
		{Spec: "nonew:", Usage: "nonew:MODEL"},
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("Register(%q) did not panic", k.Spec)
				}
			}()
			Register(k)
		}()
	}
}

// One Walk finds the leaves inside Cached(Limited(RoleMap(...))), which
// is how SpeaksTools, Providers and Down see through the wrappers.
func TestWalkFindsLeafInsideWrappers(t *testing.T) {
	registerFake(t)
	bs := &Breakers{After: 1}
	leaf, err := New("fakeprov:m", Params{Env: map[string]string{"FAKEPROV_HOST": "h"}, Breakers: bs})
	if err != nil {
		t.Fatal(err)
	}
	rm := &RoleMap{spec: "x", byRole: map[string]Actor{"b": Follower{}, "a": leaf}, fallback: Reference{}}
	a := &Cached{Actor: &Limited{Actor: rm}}
	if got, want := Leaves(a), []Actor{leaf, Follower{}, Reference{}}; !slices.Equal(got, want) {
		t.Fatalf("Leaves = %v, want %v", got, want)
	}
	var seen []string
	Walk(a, func(x Actor) bool { seen = append(seen, fmt.Sprintf("%T", x)); return true })
	if want := []string{"*actors.Cached", "*actors.Limited", "*actors.RoleMap", "*actors.fakeLive", "actors.Follower", "actors.Reference"}; !slices.Equal(seen, want) {
		t.Errorf("Walk order %v, want %v", seen, want)
	}
	stopped := 0
	if Walk(a, func(x Actor) bool { stopped++; return x != leaf }) || stopped != 4 {
		t.Errorf("Walk did not stop at the leaf: %d visits", stopped)
	}
	if !SpeaksTools(a) || !slices.Equal(Providers(a), []string{"fakeprov"}) {
		t.Errorf("SpeaksTools %v, Providers %v", SpeaksTools(a), Providers(a))
	}
	if Down(a) != nil {
		t.Fatal("Down before any failure")
	}
	bs.For("fakeprov h").observe(context.Background(), errRefused)
	if d := Down(a); d == nil || d.Endpoint != "fakeprov h" {
		t.Errorf("Down through the wrappers = %v", d)
	}
	rm.byRole["c"] = &Exec{spec: "exec:x"}
	if SpeaksTools(a) {
		t.Error("a role map with an exec actor inside speaks tools")
	}
}

// An anthropic: actor whose endpoint is down stops its runs as the other
// live actors' do: Down finds its breaker through the cache.
func TestDownFindsAnthropic(t *testing.T) {
	bs := &Breakers{After: 1}
	as, err := Build([]string{"anthropic:claude-x"}, BuildOptions{Params: Params{AnthropicBaseURL: "http://127.0.0.1:1", Breakers: bs}, CacheDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	bs.For("anthropic http://127.0.0.1:1").observe(context.Background(), errRefused)
	if d := Down(as[0]); d == nil || d.Endpoint != "anthropic http://127.0.0.1:1" {
		t.Errorf("Down = %v, want the anthropic endpoint's breaker", d)
	}
}

// Leaves returns the actors that a holds and that hold no others (a
// itself when it is no Wrapper), in Walk's order.
func Leaves(a Actor) []Actor {
	var out []Actor
	Walk(a, func(x Actor) bool {
		if _, ok := x.(Wrapper); !ok {
			out = append(out, x)
		}
		return true
	})
	return out
}
