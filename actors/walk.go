package actors

// Wrapper is an actor that holds other actors and hands requests on to
// them: the response cache (Cached), the rate limit (Limited), a role map
// (RoleMap). Walk goes through it to the actors inside.
type Wrapper interface {
	Actor
	// Unwrap returns the actors it holds, in a fixed order (a role
	// map's by role name, then the actor of the other roles).
	Unwrap() []Actor
}

// Walk calls fn on a and, through every Wrapper, on each actor inside,
// depth first, wrappers before what they hold. It stops as soon as fn
// returns false, and reports whether it went through to the end. The
// capabilities of the actors inside (ToolSpeaker, Live) are found this
// way, whatever wraps them.
func Walk(a Actor, fn func(Actor) bool) bool {
	if a == nil {
		return true
	}
	if !fn(a) {
		return false
	}
	if w, ok := a.(Wrapper); ok {
		for _, in := range w.Unwrap() {
			if !Walk(in, fn) {
				return false
			}
		}
	}
	return true
}

// Live is a leaf actor that sends requests to a provider's endpoint (the
// openai:, ollama: and anthropic: actors): Providers, Endpoint and Down
// find it through any wrapper.
type Live interface {
	Actor
	// Provider names the provider, as its Kind's Provider does
	// ("openai").
	Provider() string
	// Endpoint names the endpoint its requests go to: the provider and
	// its address ("openai https://api.openai.com/v1"), with the
	// default address when none is set. Limiters and Breakers share one
	// per endpoint.
	Endpoint() string
	// Breaker is the circuit breaker of its endpoint, nil when it has
	// none.
	Breaker() *Breaker
}
