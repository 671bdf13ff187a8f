package runtime

import (
	"context"
	"fmt"
	"unicode/utf8"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
)

// Session is the step engine of one workflow run on a shared state (paper
// §3.2): it holds the state and the workflow's current phase, and runs each
// step as verify, then commit or reject, then move the phase. It is the one
// place where a patch is committed: the benchmark's runner, its reference
// run, its pair check and its stress test all step through a Session. A
// Session is not safe for concurrent use; contracts are.
type Session struct {
	state     *Document
	phase     string
	phasePath Pointer
}

// NewSession starts a session on state. phasePath is where the workflow's
// phase lives in the state (nil when the workflow has none); the phase
// starts as the string found there ("" when there is none).
func NewSession(state *Document, phasePath Pointer) *Session {
	s := &Session{state: state, phasePath: phasePath}
	if phasePath != nil {
		if v, ok := state.Get(phasePath); ok {
			s.phase, _ = v.(string)
		}
	}
	return s
}

// State is the session's current state.
func (s *Session) State() *Document { return s.state }

// Phase is the workflow's current phase.
func (s *Session) Phase() string { return s.phase }

// StepOptions choose how one step runs.
type StepOptions struct {
	// Gates and Audit are as in VerifyOptions.
	Gates, Audit GateSet
	// SubmitPhase, when set, is the phase the proposal is verified in
	// instead of the session's (a stress artifact submitted out of its
	// phase). The session's phase is not changed by it.
	SubmitPhase string
	// AdvanceTo, when set, is the phase the workflow moves to after a
	// commit: the session writes it at the phase path and keeps it.
	AdvanceTo string
}

// StepResult is the outcome of one step: the verifier's decision and, for
// a commit that should move the phase, whether it did.
type StepResult struct {
	*Decision
	// PhaseError is set when the proposal committed but the phase could
	// not be moved to AdvanceTo: the committed state has no place for it
	// at the phase path. The session keeps the committed state and its
	// old phase. PhaseBroken then says the phase could not have been
	// moved before the commit either: the workflow itself is broken, not
	// the proposal.
	PhaseError  error
	PhaseBroken bool
}

// Step runs one step: it verifies proposal (the bytes an actor answered)
// against the session's state with contract c, in the session's phase (or
// opts.SubmitPhase); on a commit the session's state becomes the
// decision's, and the phase is moved when opts.AdvanceTo asks. The error is
// non-nil only when ctx is cancelled.
func (s *Session) Step(ctx context.Context, c *Contract, proposal []byte, opts StepOptions) (StepResult, error) {
	phase := s.phase
	if opts.SubmitPhase != "" {
		phase = opts.SubmitPhase
	}
	d, err := c.Verify(ctx, s.state, proposal, VerifyOptions{Gates: opts.Gates, Phase: phase, Audit: opts.Audit})
	if err != nil {
		return StepResult{}, err
	}
	r := StepResult{Decision: d}
	if !d.Committed {
		return r, nil
	}
	before := s.state
	s.state = d.State
	if opts.AdvanceTo == "" {
		return r, nil
	}
	next, err := SetString(s.state, s.phasePath, opts.AdvanceTo)
	if err != nil {
		r.PhaseError = err
		_, pre := SetString(before, s.phasePath, opts.AdvanceTo)
		r.PhaseBroken = pre != nil
		return r, nil
	}
	s.state, s.phase = next, opts.AdvanceTo
	return r, nil
}

// SetString returns a copy of doc with the string v at p, which must
// already exist (RFC 6902 replace, with the runtime's copy-on-write: only
// the containers on the path to p are copied). It is how the workflow's
// phase is moved. The copy's text is its value encoded with members sorted
// by name, as NewDocument writes it; when doc's text is such a text with
// the changes of commits made on the footprint path since, only the
// changed subtrees are encoded again (setStringAtFocus), otherwise the
// whole value is.
func SetString(doc *Document, p Pointer, v string) (*Document, error) {
	if p == nil {
		return nil, fmt.Errorf("no phase path")
	}
	if nd := setStringAtFocus(doc, p, v); nd != nil {
		return nd, nil
	}
	post, _, err := simulate(context.Background(), doc.Value(), []Operation{{Op: OpReplace, Path: p, Value: v}}, 0)
	if err != nil {
		if ae, ok := err.(*applyError); ok {
			return nil, fmt.Errorf("phase path %s: %s", p, ae.msg)
		}
		return nil, fmt.Errorf("phase path %s: %w", p, err)
	}
	return NewDocument(post)
}

// setStringAtFocus is SetString at the cost of what changed since doc's
// text was last written whole by NewDocument (or by SetString): doc's
// text is then a sorted base (textBase.sorted) with edits, and the
// result's text is that base with each edit, and the new string at p,
// encoded anew from the value, which is NewDocument's text of the
// result, since encodeJSON writes each subtree as it would alone. Its
// value shares everything else with doc's. It returns nil when doc's text
// is not such a text, when p does not name an existing member or element
// (SetString then reports the error), or when NewDocument could refuse or
// re-spell the result (a state nested deeper than DefaultMaxDepth, text
// and value that may differ).
func setStringAtFocus(doc *Document, p Pointer, v string) *Document {
	if len(p) == 0 || !doc.consistent || !utf8.ValidString(v) || doc.maxDepth() > DefaultMaxDepth {
		return nil
	}
	m := doc.text()
	if m == nil || !m.base.sorted {
		return nil
	}
	tree := doc.tree()
	if overlay.Size(tree) > maxOverlayNodes {
		tree = doc.Value()
	}
	parent, ok := overlay.Lookup(tree, p.Parent())
	if !ok {
		return nil
	}
	if _, ok := overlay.Child(parent, p.Last()); !ok {
		return nil
	}
	post := overlay.Set(tree, p, v)
	var changes []textChange
	covered := false
	for _, e := range m.edits {
		if p.HasPrefix(e.path) {
			covered = true
		} else if e.path.HasPrefix(p) {
			continue // replaced with the string at p
		}
		x, _ := overlay.Lookup(post, e.path)
		text, err := encodeJSON(overlay.Plain(x))
		if err != nil {
			return nil
		}
		changes = append(changes, textChange{path: e.path, old: e.text, new: text})
	}
	if !covered {
		old, _, ok := m.valueText(p)
		if !ok {
			return nil
		}
		text, err := encodeJSON(v)
		if err != nil {
			return nil
		}
		changes = append(changes, textChange{path: p, old: old, new: text})
	}
	next, ok := m.with(changes)
	if !ok {
		return nil
	}
	if settled := next.settled(); settled != next {
		settled.base.sorted = true // the whole text is encodeJSON's now
		next = settled
	}
	nd := &Document{lazy: &lazyDoc{tree: post, text: next}, depth: doc.maxDepth(), consistent: true}
	doc.carryValidity(nd, post, []schemaindex.Change{{Path: p, Value: v}}, nil)
	return nd
}
