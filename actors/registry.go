package actors

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
)

// Kind is one kind of actor New can make, registered (Register) by the
// file that defines it: a no-model actor ("reference"), the file, exec
// and MCP actors, or a live provider ("openai:"). New, Known, EnvVars and
// the run's manifest all go by the registered kinds, so that adding a
// provider is one file that registers its Kind.
type Kind struct {
	// Spec is the spec the kind answers: a whole spec ("reference"), or,
	// ending in ":", the prefix of its specs ("openai:").
	Spec string
	// Usage is how Known (and run --help) lists it: "openai:MODEL".
	Usage string
	// New makes the actor of a spec the kind answers, configured by p.
	New func(spec string, p Params) (Actor, error)
	// Provider, for a live kind, names its provider as its actors'
	// Live.Provider does ("openai"); "" for the others.
	Provider string
	// Env lists the environment variables the kind's actors read
	// (through Params): the command line fills Params from them
	// (EnvVars).
	Env []EnvVar
}

// EnvVar is one environment variable a live provider reads, which the
// command line copies into Params before making actors (this package
// reads no environment).
type EnvVar struct {
	// Name is the variable's name ("OPENAI_BASE_URL").
	Name string
	// Help says what it sets, for documentation and listings.
	Help string
	// Manifest, when set, is the manifest member that records the
	// variable's value (a password in a URL hidden) when a run's actors
	// use the provider ("openai_base_url"); "" for a variable that is
	// not recorded (a key).
	Manifest string
	// Field returns the Params field the value goes in; when nil the
	// value goes in Params.Env under Name.
	Field func(*Params) *string
}

// Set puts the variable's value v into p (Field, or Params.Env; an empty
// v leaves Params.Env as it is).
func (e EnvVar) Set(p *Params, v string) {
	if e.Field != nil {
		*e.Field(p) = v
		return
	}
	if v == "" {
		return
	}
	if p.Env == nil {
		p.Env = map[string]string{}
	}
	p.Env[e.Name] = v
}

// Get returns the variable's value as p holds it ("" when unset).
func (e EnvVar) Get(p Params) string {
	if e.Field != nil {
		return *e.Field(&p)
	}
	return p.Env[e.Name]
}

var (
	registryMu sync.RWMutex
	registry   = map[string]Kind{} // by Kind.Spec
)

// Register adds a kind of actor, from an init function of the file that
// defines it, and returns the function that removes it again (for tests
// that register a kind of their own). It panics when the kind has no
// Spec, Usage or New, or when its Spec is registered already, as
// database/sql.Register does for a driver: that is a mistake in the
// program, not in its input.
func Register(k Kind) (unregister func()) {
	if k.Spec == "" || k.Usage == "" || k.New == nil {
		panic(fmt.Sprintf("actors: Register: kind %q needs Spec, Usage and New", k.Spec))
	}
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[k.Spec]; dup {
		panic(fmt.Sprintf("actors: Register: kind %q is registered twice", k.Spec))
	}
	registry[k.Spec] = k
	return func() {
		registryMu.Lock()
		defer registryMu.Unlock()
		delete(registry, k.Spec)
	}
}

// Kinds returns the registered kinds, sorted by Spec.
func Kinds() []Kind {
	registryMu.RLock()
	defer registryMu.RUnlock()
	out := make([]Kind, 0, len(registry))
	for _, k := range registry {
		out = append(out, k)
	}
	slices.SortFunc(out, func(a, b Kind) int { return strings.Compare(a.Spec, b.Spec) })
	return out
}

// kindOf returns the kind a spec belongs to: the kind of that whole spec,
// or the one whose prefix ("openai:") it starts with.
func kindOf(spec string) (Kind, bool) {
	registryMu.RLock()
	defer registryMu.RUnlock()
	if k, ok := registry[spec]; ok && !strings.HasSuffix(k.Spec, ":") {
		return k, true
	}
	if prefix, _, ok := strings.Cut(spec, ":"); ok {
		k, ok := registry[prefix+":"]
		return k, ok
	}
	return Kind{}, false
}

// ProviderKind returns the registered live kind whose Provider is name
// ("openai"), and whether there is one.
func ProviderKind(name string) (Kind, bool) {
	for _, k := range Kinds() {
		if k.Provider != "" && k.Provider == name {
			return k, true
		}
	}
	return Kind{}, false
}

// EnvVars lists the environment variables of every registered kind, in
// the order of Kinds and then of each kind's Env.
func EnvVars() []EnvVar {
	var out []EnvVar
	for _, k := range Kinds() {
		out = append(out, k.Env...)
	}
	return out
}

// New returns the actor a spec names, made by the registered kind it
// belongs to (Register; Known lists them): "reference", "oversharer",
// "follower", "files:DIR" (answers written by a person or another
// program, see Files), "openai:MODEL", "ollama:MODEL" or
// "anthropic:MODEL" (with optional ?temperature=&seed=&max_output_tokens=),
// a live actor configured by p, "exec:COMMAND", an external program run
// once per attempt with p.Timeout (see Exec), or "mcp:COMMAND", an
// external agent that reaches the tools protocol's tools over MCP (see
// MCPAgent). A spec of no kind is an error listing the known ones.
func New(spec string, p Params) (Actor, error) {
	if k, ok := kindOf(spec); ok {
		return k.New(spec, p)
	}
	return nil, fmt.Errorf("unknown actor %q (known: %s)", spec, strings.Join(Known(), ", "))
}

// Known lists the actor specs New accepts (each kind's Usage), sorted.
func Known() []string {
	var k []string
	for _, kind := range Kinds() {
		k = append(k, kind.Usage)
	}
	sort.Strings(k)
	return k
}

// asActor is a constructor's actor as an Actor, or nil with its error:
// never a nil pointer in a non-nil Actor.
func asActor[T Actor](a T, err error) (Actor, error) {
	if err != nil {
		return nil, err
	}
	return a, nil
}
