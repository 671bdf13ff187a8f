package actors

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
)

// BuildOptions say how Build makes actors: the parameters of live actors,
// their rate limit and their response cache. The command line fills them
// from its flags and the environment; this package reads neither.
type BuildOptions struct {
	Params Params
	// RPS, when positive, allows at most RPS live requests per second to
	// each provider endpoint, shared by the actors on it (Limiters).
	RPS float64
	// NoCache sends every live request and keeps no answer.
	NoCache bool
	// CacheDir is the response cache's directory (Cached). When it is ""
	// and a live actor is made, DefaultCacheDir gives it, once.
	// Params.CacheOnly answers from the cache only.
	CacheDir        string
	DefaultCacheDir func() (string, error)
	// OnCacheWriteError, when set, is told of each answer the response
	// cache could not keep (Cached.OnWriteError); the run keeps it.
	OnCacheWriteError func(error)
	// CheckOnly makes the actors only to check their specs (patchbench
	// plan FILE): no directory is made or probed (a files: actor's, the
	// response cache's), no rate limit or cache wraps them, and a live
	// actor needs no key (as with Params.CacheOnly). Such actors are not
	// for asking.
	CheckOnly bool
}

// CacheDirError is a response cache directory that cannot be written.
type CacheDirError struct {
	Dir string
	Err error
}

func (e *CacheDirError) Error() string {
	return fmt.Sprintf("the response cache %s is not writable (%v)", e.Dir, e.Err)
}

func (e *CacheDirError) Unwrap() error { return e.Err }

// DuplicateSpecError is a spec given twice to Build, or two specs of one
// name (Name, a display name: NameMark): two actors of one name would
// share their runs' ids.
type DuplicateSpecError struct {
	Spec string
	Name string
}

func (e *DuplicateSpecError) Error() string {
	if e.Name != "" {
		return fmt.Sprintf("actor %s: another actor is named %s", e.Spec, e.Name)
	}
	return fmt.Sprintf("actor %s is given twice", e.Spec)
}

// SpecError is a spec Build cannot make an actor of; its message is
// Err's.
type SpecError struct {
	Spec string
	Err  error
}

func (e *SpecError) Error() string { return e.Err.Error() }

func (e *SpecError) Unwrap() error { return e.Err }

// Build makes the actor of each spec: New's specs, or a role map
// ("role=spec,role=spec,spec", ParseRoleMap) for multi-agent cases, each
// maybe ending in a display name (NameMark: the actor is then a Named). A file
// actor's directory is checked writable (Files.CheckDir); a live actor is
// wrapped with the rate limit of its endpoint (Limited, when RPS > 0) and
// the response cache (Cached, unless NoCache), whose directory is checked
// writable unless the cache is only read (*CacheDirError); a spec it
// cannot make an actor of is a *SpecError. The live actors
// of one endpoint share its circuit breaker (Breakers, unless
// Params.Breakers gives one): after BreakAfter consecutive connection
// failures no request is sent to it. The actors come back in the order of
// specs; a spec given twice, or two of one name, is a *DuplicateSpecError.
func Build(specs []string, o BuildOptions) ([]Actor, error) {
	if o.Params.Breakers == nil {
		o.Params.Breakers = &Breakers{}
	}
	b := &builder{o: o, limiters: &Limiters{RPS: o.RPS}}
	var out []Actor
	for i, given := range specs {
		if slices.Contains(specs[:i], given) {
			return nil, &DuplicateSpecError{Spec: given}
		}
		spec, name, err := SplitName(given)
		if err != nil {
			return nil, &SpecError{Spec: given, Err: err}
		}
		var a Actor
		if strings.Contains(spec, ",") || isRoleEntry(spec) {
			a, err = ParseRoleMap(spec, b.one)
		} else {
			a, err = b.one(spec)
		}
		if err != nil {
			var ce *CacheDirError
			if !errors.As(err, &ce) {
				err = &SpecError{Spec: given, Err: err}
			}
			return nil, err
		}
		if name != "" {
			a = NewNamed(a, spec, name)
		}
		if slices.ContainsFunc(out, func(o Actor) bool { return o.Name() == a.Name() }) {
			return nil, &DuplicateSpecError{Spec: given, Name: a.Name()}
		}
		out = append(out, a)
	}
	if err := checkNames(specs, out); err != nil {
		return nil, err
	}
	return out, nil
}

// checkNames refuses a display name that reads as another actor: the
// bare spec of another actor of the run (named or not), or the spec of a
// kind that is a whole spec (a no-model actor: "reference", "follower")
// unless the name is that very actor's spec. Either would make the runs
// of one actor pass as another's (compare's exact actors go by the
// name). The error is a *SpecError of the spec given.
func checkNames(specs []string, acts []Actor) error {
	for i, a := range acts {
		n, ok := a.(*Named)
		if !ok {
			continue
		}
		for j, o := range acts {
			if j != i && SpecOf(o) == n.name {
				return &SpecError{Spec: specs[i], Err: fmt.Errorf("actor %q: the name %q is the spec of another actor of the run (%s): give another name", specs[i], n.name, specs[j])}
			}
		}
		if k, ok := kindOf(n.name); ok && k.Spec == n.name && n.spec != n.name {
			return &SpecError{Spec: specs[i], Err: fmt.Errorf("actor %q: the name %q is the no-model actor %s's: only that actor may be named so; give another name", specs[i], n.name, n.name)}
		}
	}
	return nil
}

// builder makes the actors of one Build, sharing the limiters and the
// cache directory.
type builder struct {
	o        BuildOptions
	limiters *Limiters
}

// one makes the actor of a single spec, with the rate limit and the
// response cache of live actors.
func (b *builder) one(spec string) (Actor, error) {
	if b.o.CheckOnly {
		p := b.o.Params
		p.CacheOnly = true
		return New(spec, p)
	}
	a, err := New(spec, b.o.Params)
	if err != nil {
		return nil, err
	}
	if f, ok := a.(*Files); ok {
		if err := f.CheckDir(); err != nil {
			return nil, err
		}
	}
	if _, live := a.(Keyer); !live {
		return a, nil
	}
	if b.o.RPS > 0 {
		a = &Limited{Actor: a, Limiter: b.limiters.For(Endpoint(a))}
	}
	if b.o.NoCache {
		return a, nil
	}
	if b.o.CacheDir == "" && b.o.DefaultCacheDir != nil {
		if b.o.CacheDir, err = b.o.DefaultCacheDir(); err != nil {
			return nil, err
		}
	}
	if !b.o.Params.CacheOnly {
		if err := checkWritable(b.o.CacheDir); err != nil {
			return nil, &CacheDirError{Dir: b.o.CacheDir, Err: err}
		}
	}
	return &Cached{Actor: a, Dir: b.o.CacheDir, Only: b.o.Params.CacheOnly, OnWriteError: b.o.OnCacheWriteError,
		MaxAnswerBytes: b.o.Params.MaxAnswerBytes}, nil
}

// isRoleEntry reports whether a spec is one role=spec entry (a role has
// no ":" or "?"; a spec's own query holds "=" after them).
func isRoleEntry(spec string) bool {
	role, _, ok := strings.Cut(spec, "=")
	return ok && !strings.ContainsAny(role, ":?")
}

// checkWritable makes dir if needed and checks a file can be written in
// it, so that a run never pays for an answer it cannot keep.
func checkWritable(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".probe-*")
	if err != nil {
		return err
	}
	f.Close()
	return os.Remove(f.Name())
}
