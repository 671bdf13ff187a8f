package runner

import (
	"crypto/sha256"
	"encoding/hex"
	"sync"
	"sync/atomic"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// stepView is what a step's actor is shown of a state: the value (the
// state's, or its projection by the step's contract), its text as
// runtime.EncodeIndent writes it, and the SHA-256 of that text (hex).
// It is only read.
type stepView struct {
	value  any
	text   []byte
	digest string
}

// viewCache keeps the views of the states that many runs share: a
// case's initial state (grown once per session at a scale, and the same
// Document in every run of the case), whose view each run's first step
// would otherwise project, encode and hash anew (at 10 MB, some 100 ms
// and 100 MB a run). Each view is built once (the runs that ask for it
// meanwhile wait for it); at most maxCachedViews are kept, of at most
// maxCachedViewBytes of text, the cache starting again empty when full
// (a view in use stays alive with its runs, and one over the bound is
// built anew, as without the cache). Safe for concurrent use.
type viewCache struct {
	mu    sync.Mutex
	m     map[viewKey]*cachedView
	bytes int // the text of the views built in m
}

// viewKey names a view: the state, the step, and whether the view is
// projected (else the whole state).
type viewKey struct {
	doc       *runtime.Document
	step      *bench.Step
	projected bool
}

// cachedView is a view built once.
type cachedView struct {
	once sync.Once
	v    stepView
	err  error
}

// maxCachedViews and maxCachedViewBytes bound the views a viewCache
// keeps, and their texts' bytes: a case's views at 10 MB, some 14 MB of
// text each, hold their values besides (a projection's own).
const (
	maxCachedViews     = 32
	maxCachedViewBytes = 256 << 20
)

// caseViews is the process's cache of the views of cases' initial
// states.
var caseViews = &viewCache{m: map[viewKey]*cachedView{}}

// view is the view of state at step s (projected or whole), from the
// cache when shared is set (state is a case's initial state, which
// every run of the case shows its first step), else built for the
// caller alone.
func (c *viewCache) view(state *runtime.Document, s *bench.Step, projected, shared bool) (stepView, error) {
	if !shared {
		return buildView(state, s, projected)
	}
	k := viewKey{state, s, projected}
	c.mu.Lock()
	e := c.m[k]
	if e == nil {
		if len(c.m) >= maxCachedViews || c.bytes >= maxCachedViewBytes {
			clear(c.m)
			c.bytes = 0
		}
		e = &cachedView{}
		c.m[k] = e
	}
	c.mu.Unlock()
	e.once.Do(func() {
		e.v, e.err = buildView(state, s, projected)
		c.mu.Lock()
		if c.m[k] == e {
			c.bytes += len(e.v.text)
		}
		c.mu.Unlock()
	})
	return e.v, e.err
}

// buildView is the view of state at step s (the slow path, which the
// cache only keeps).
func buildView(state *runtime.Document, s *bench.Step, projected bool) (stepView, error) {
	v := state.Value()
	if projected {
		v = s.Contract.View(state)
	}
	text, err := runtime.EncodeIndent(v, "  ")
	if err != nil {
		return stepView{}, err
	}
	sum := sha256.Sum256(text)
	return stepView{value: v, text: text, digest: hex.EncodeToString(sum[:])}, nil
}

// phasePlaceKey names a case's initial state and phase path, for
// hasPhasePlace's answers (phasePlaces).
type phasePlaceKey struct {
	doc  *runtime.Document
	path string
}

// phasePlace is one answer of hasPhasePlace, found once (the runs that
// ask meanwhile wait for it).
type phasePlace struct {
	once sync.Once
	ok   bool
}

// phasePlaces holds hasPhasePlace's answers (phasePlaceKey to *phasePlace):
// the check writes the phase into the case's initial state, a copy of
// the state's changed text, once per case and not once per run.
// phasePlaceCount bounds it (maxPhasePlaces), the cache starting again
// empty when full.
var (
	phasePlaces     sync.Map
	phasePlaceCount atomic.Int64
)

// maxPhasePlaces bounds the answers phasePlaces keeps.
const maxPhasePlaces = 1024
