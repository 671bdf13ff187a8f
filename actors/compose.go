package actors

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"

	"golang.org/x/time/rate"
)

// RoleMap is an actor that hands each step to the actor of the step's
// role, for multi-agent cases: "analyst=openai:gpt-5-mini,reviewer=ollama:mistral".
// An entry without a role is the actor of every other role.
type RoleMap struct {
	spec     string
	byRole   map[string]Actor
	fallback Actor
}

// ParseRoleMap parses a role map spec, making each actor with newActor.
// An entry is "role=spec" (a role has no ":"), or a spec alone for the
// roles not named.
func ParseRoleMap(spec string, newActor func(string) (Actor, error)) (*RoleMap, error) {
	m := &RoleMap{spec: spec, byRole: map[string]Actor{}}
	for _, part := range strings.Split(spec, ",") {
		part = strings.TrimSpace(part)
		role, actorSpec, ok := strings.Cut(part, "=")
		if !ok || strings.ContainsAny(role, ":?") {
			role, actorSpec = "", part
		}
		a, err := newActor(actorSpec)
		if err != nil {
			return nil, err
		}
		if role == "" {
			if m.fallback != nil {
				return nil, fmt.Errorf("actor %q: two actors for the other roles (a comma list is a role map, role=spec,role=spec); to run several actors, give --actor once per actor (in a plan, one item of actors each)", spec)
			}
			m.fallback = a
			continue
		}
		if _, dup := m.byRole[role]; dup {
			return nil, fmt.Errorf("actor %q: role %s is given twice", spec, role)
		}
		m.byRole[role] = a
	}
	return m, nil
}

// Name implements Actor: the whole spec.
func (m *RoleMap) Name() string { return m.spec }

// Unwrap implements Wrapper: the actors of the roles, by role name, then
// the actor of the other roles when there is one.
func (m *RoleMap) Unwrap() []Actor {
	var out []Actor
	for _, role := range slices.Sorted(maps.Keys(m.byRole)) {
		out = append(out, m.byRole[role])
	}
	if m.fallback != nil {
		out = append(out, m.fallback)
	}
	return out
}

// Missing returns the roles, among those given, that no actor of the map
// takes.
func (m *RoleMap) Missing(roles []string) []string {
	var out []string
	for _, r := range roles {
		if _, ok := m.byRole[r]; !ok && m.fallback == nil {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// Unknown returns the roles the map names, sorted, that are not among
// roles (a typo, or a role of no case run): their actors would never be
// asked.
func (m *RoleMap) Unknown(roles []string) []string {
	var out []string
	for r := range m.byRole {
		if !slices.Contains(roles, r) {
			out = append(out, r)
		}
	}
	sort.Strings(out)
	return out
}

// Propose implements Actor.
func (m *RoleMap) Propose(ctx context.Context, req Request) (Response, error) {
	a, ok := m.byRole[req.Role]
	if !ok {
		a = m.fallback
	}
	if a == nil {
		return Response{}, fmt.Errorf("actor %q: no actor for role %q", m.spec, req.Role)
	}
	return a.Propose(ctx, req)
}

// Limited makes a live actor wait for a shared rate limiter before each
// request (--rps per provider). Cache hits, answered before it, do not
// wait.
type Limited struct {
	Actor   Actor
	Limiter *rate.Limiter
}

// Name implements Actor.
func (l *Limited) Name() string { return l.Actor.Name() }

// Unwrap implements Wrapper: the actor it limits.
func (l *Limited) Unwrap() []Actor { return []Actor{l.Actor} }

// Propose implements Actor.
func (l *Limited) Propose(ctx context.Context, req Request) (Response, error) {
	if err := l.Limiter.Wait(ctx); err != nil {
		return Response{}, err
	}
	return l.Actor.Propose(ctx, req)
}

// CacheKey implements Keyer when the wrapped actor does.
func (l *Limited) CacheKey() map[string]any {
	if k, ok := l.Actor.(Keyer); ok {
		return k.CacheKey()
	}
	return nil
}

// Limiters hands out one limiter per provider endpoint, so that every
// actor on one server shares its requests per second.
type Limiters struct {
	RPS float64
	mu  sync.Mutex
	m   map[string]*rate.Limiter
}

// For returns the limiter of an endpoint ("openai https://…").
func (l *Limiters) For(endpoint string) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.m == nil {
		l.m = map[string]*rate.Limiter{}
	}
	lim, ok := l.m[endpoint]
	if !ok {
		lim = rate.NewLimiter(rate.Limit(l.RPS), 1)
		l.m[endpoint] = lim
	}
	return lim
}

// Endpoint names the provider endpoint of a live actor (Live.Endpoint),
// for Limiters and Breakers: "openai " and the base URL (OpenAI's own
// when none is set), "ollama " and the host, "anthropic " and the base
// URL; "" for any other actor, a wrapper included.
func Endpoint(a Actor) string {
	if l, ok := a.(Live); ok {
		return l.Endpoint()
	}
	return ""
}

// Providers lists the live providers an actor sends requests to
// ("anthropic", "ollama", "openai", sorted, each once): those of the Live
// actors Walk finds in it, through a role map and the wrappers (Cached,
// Limited). A no-model, file or exec actor has none. The manifest records
// the endpoint of each provider a run used.
func Providers(a Actor) []string {
	var out []string
	Walk(a, func(x Actor) bool {
		if l, ok := x.(Live); ok && !slices.Contains(out, l.Provider()) {
			out = append(out, l.Provider())
		}
		return true
	})
	slices.Sort(out)
	return out
}
