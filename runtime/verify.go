package runtime

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// GateResult is the outcome of one gate for one proposal: a value, not a
// Go error, so that every gate's outcome can be recorded and shown.
// Code is CodeOK when Passed, otherwise
// one of the stable Code constants. Pointer is the location the failure
// concerns, "" for the whole document or when there is none, and is
// withheld ("") when it lies outside the view and is not one the proposal
// itself named; a location in a value the proposal appended through "-"
// to an array the view does not show keeps the "-" (the index would tell
// the array's length). Message is for the actor: it never contains a
// value from outside the view, nor a member name at a location the view
// does not show that the proposal did not name.
type GateResult struct {
	Gate    string `json:"gate"`
	Passed  bool   `json:"passed"`
	Code    string `json:"code"`
	Pointer string `json:"pointer"`
	Message string `json:"message"`
	// Detail is for the policy author, never for the actor: the schema
	// library's or CEL's own error text, which may quote any value of the
	// state, hidden ones included. It is not part of the JSON form.
	Detail string `json:"-"`
}

// Decision is the verifier's verdict on one proposal (paper §3.2:
// project, propose, verify, commit or reject).
type Decision struct {
	// Committed is true when every gate that ran passed.
	Committed bool `json:"committed"`
	// Gates lists each gate that ran, in pipeline order: parse, scope,
	// acl, phase, apply, schema, invariants. A gate after a failed stage
	// does not run (static gates run together, then apply, then schema
	// and invariants together).
	Gates []GateResult `json:"decisions"`
	// State is the state after the decision: the new document when
	// committed, the input document otherwise.
	State *Document `json:"state"`
	// Proposal is the decoded proposal, nil when it was malformed.
	Proposal *Proposal `json:"-"`
	// Footprint is the patch's concrete footprint, known once the patch
	// has been simulated against the state.
	Footprint *Footprint `json:"-"`
	// Audit lists, when VerifyOptions.Audit asked for it, the gates of the
	// audit set run on the same proposal in the same pipeline order (the
	// step's full contract: docs/run.md, illegal commits). The
	// audit never changes Committed or State: the enforcing gates alone
	// decide.
	Audit []GateResult `json:"audit,omitempty"`

	// path is the way the apply gate ran: on the patch's foci or on the
	// whole document, and why (focus.go); incremental is true when the
	// schema gate's verdict came from incremental validation.
	path        pathChoice
	incremental bool
}

// IllegalCommit returns the first audit gate that rejected a committed
// proposal, or nil when the proposal was not committed, the audit passed
// or no audit ran. A committed proposal that the step's full contract
// rejects is an illegal commit.
func (d *Decision) IllegalCommit() *GateResult {
	if !d.Committed {
		return nil
	}
	for i := range d.Audit {
		if !d.Audit[i].Passed {
			return &d.Audit[i]
		}
	}
	return nil
}

// Rejection returns the first failed gate, or nil when committed.
func (d *Decision) Rejection() *GateResult {
	for i := range d.Gates {
		if !d.Gates[i].Passed {
			return &d.Gates[i]
		}
	}
	return nil
}

// Gate returns the result of the named gate, or nil if it did not run.
func (d *Decision) Gate(name string) *GateResult {
	for i := range d.Gates {
		if d.Gates[i].Gate == name {
			return &d.Gates[i]
		}
	}
	return nil
}

// VerifyOptions choose the gates and give the workflow's current phase.
type VerifyOptions struct {
	// Gates are the enforcing gates: a proposal commits only when every
	// one of them (and parse and apply, which always run) passes.
	Gates GateSet
	Phase string
	// Audit, when not empty, is a second gate set checked on the same
	// proposal without enforcing it (usually DefaultGates, the step's
	// full contract); its results go to Decision.Audit. An audit set
	// equal to Gates reuses the enforcing results.
	Audit GateSet
}

// Verify decodes proposal bytes with DecodeProposal and verifies the
// proposal against state (see VerifyProposal). The bytes are decoded once,
// here; no other decoder sees them.
func (c *Contract) Verify(ctx context.Context, state *Document, proposal []byte, opts VerifyOptions) (*Decision, error) {
	d := &Decision{State: state}
	if int64(len(proposal)) > c.limits.MaxProposalBytes {
		d.fail(GateParse, CodeLimitExceeded, "", fmt.Sprintf("the proposal has %d bytes; the limit is %d", len(proposal), c.limits.MaxProposalBytes))
		return d, nil
	}
	p, err := DecodeProposal(proposal, c.limits.MaxDepth)
	if err != nil {
		d.fail(GateParse, CodeMalformed, "", err.Error())
		if opts.Audit != (GateSet{}) {
			d.Audit = append([]GateResult(nil), d.Gates...)
		}
		return d, nil
	}
	return c.verifyAudited(ctx, state, p, opts, d)
}

// VerifyProposal runs the pipeline of paper §3.2 on a decoded proposal:
//
//  1. parse: the operation count is within the limit;
//  2. scope, acl, phase (as chosen): every location the patch names lies
//     in the write region (and, for scope, every source in the source
//     region); the current phase is one the step may commit in;
//  3. apply: the patch applies under RFC 6902 to a copy of the state, and
//     the writes that shift array elements also lie in the write region;
//  4. schema and invariants (as chosen) on the state after the patch.
//
// It commits only when every gate that ran passed. The input state is
// never modified. The error is non-nil only when ctx is cancelled by the
// caller; every property of the proposal is reported as a GateResult.
func (c *Contract) VerifyProposal(ctx context.Context, state *Document, p *Proposal, opts VerifyOptions) (*Decision, error) {
	return c.verifyAudited(ctx, state, p, opts, &Decision{State: state})
}

// verifyAudited runs the enforcing pipeline, then, when asked, the audit:
// the same pipeline with the audit gates, on the same decoded proposal and
// state, whose results are kept beside the enforcing ones and decide
// nothing.
func (c *Contract) verifyAudited(ctx context.Context, state *Document, p *Proposal, opts VerifyOptions, d *Decision) (*Decision, error) {
	d, err := c.verify(ctx, state, p, opts, d)
	if err != nil || opts.Audit == (GateSet{}) {
		return d, err
	}
	if opts.Audit == opts.Gates {
		d.Audit = append([]GateResult(nil), d.Gates...)
		return d, nil
	}
	a, err := c.verify(ctx, state, p, VerifyOptions{Gates: opts.Audit, Phase: opts.Phase}, &Decision{State: state})
	if err != nil {
		return nil, err
	}
	d.Audit = a.Gates
	return d, nil
}

// errWorkTime is the cause of a verification's context when the
// contract's work-time limit (Limits.MaxWorkMS) ran out, as opposed to the
// caller's own context ending: the first is a property of the proposal
// (limit_exceeded), the second an error of Verify.
var errWorkTime = errors.New("runtime: the verification ran past its work-time limit")

// workContext bounds ctx by the contract's work-time limit, with
// errWorkTime as the cause when that limit is what ends it.
func (c *Contract) workContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeoutCause(ctx, c.workLimit(), errWorkTime)
}

// callerEnded returns the error of the caller's own context when ctx (a
// workContext) ended for any reason but the work-time limit, else nil.
func callerEnded(ctx context.Context) error {
	if ctx.Err() != nil && !errors.Is(context.Cause(ctx), errWorkTime) {
		return ctx.Err()
	}
	return nil
}

// verify is the one gate pipeline of paper §3.2 (see VerifyProposal):
// parse, the static gates, apply (at the patch's foci when it can, else
// on the whole document: the two paths differ only inside the apply
// stage, see applied), then schema and invariants on the state after the
// patch, and the commit.
func (c *Contract) verify(parent context.Context, state *Document, p *Proposal, opts VerifyOptions, d *Decision) (*Decision, error) {
	ctx, cancel := c.workContext(parent)
	defer cancel()
	d.Proposal = p
	ops := p.Patch

	// 1. parse
	if len(ops) > c.limits.MaxOps {
		d.fail(GateParse, CodeLimitExceeded, "", fmt.Sprintf("the patch has %d operations; the limit is %d", len(ops), c.limits.MaxOps))
		return d, nil
	}
	d.pass(GateParse)

	// 2. static gates: they look only at the pointers the patch names,
	// so their cost does not depend on the state.
	if opts.Gates.Scope {
		d.add(c.scopeGate(GateScope, ops, true))
	}
	if opts.Gates.ACL {
		d.add(c.scopeGate(GateACL, ops, false))
	}
	if opts.Gates.Phase {
		d.add(c.phaseGate(opts.Phase))
	}
	if d.Rejection() != nil {
		return d, nil
	}
	if stop, err := d.timeUp(ctx, GateApply); stop {
		return d, err
	}

	// 3. apply, on the footprint path when the patch allows it (focus.go),
	// else on the whole document.
	a, why, err := c.applyAtFoci(ctx, state, ops, opts, d)
	if err == nil && why != pathFootprint {
		a, err = c.applyWhole(ctx, state, ops, opts, d)
	}
	d.path = why
	if err != nil {
		return nil, err
	}
	if a == nil { // the apply stage rejected the patch
		return d, nil
	}

	// 4. gates on the state after the patch
	if opts.Gates.Schema {
		if stop, err := d.timeUp(ctx, GateSchema); stop {
			return d, err
		}
		d.add(c.schemaCheck(a.pre, a.post, ops, a.trace, a.footprint, a.incremental))
	}
	if opts.Gates.Invariants {
		if stop, err := d.timeUp(ctx, GateInvariants); stop {
			return d, err
		}
		d.add(c.invariantGate(ctx, a.pre, a.post, opts.Phase))
		if err := callerEnded(ctx); err != nil {
			return nil, err
		}
	}

	// 5. commit, or reject with the state as it was
	if d.Rejection() != nil {
		return d, nil
	}
	c.noteValid(a.next, opts)
	if a.carry != nil {
		a.carry(a.next, c.noteSchema(opts))
	}
	d.Committed = true
	d.State = a.next
	return d, nil
}

// applied is what the apply stage hands the gates after it, on either
// path: the states before and after the patch (post may hold overlays on
// the footprint path), the reference semantics' trace and the patch's
// concrete footprint, and the state to commit.
type applied struct {
	pre, post any
	trace     *trace
	footprint *Footprint
	// incremental, when not nil, tells the schema gate whether the state
	// after the patch is known to satisfy the schema without validating
	// it whole (the footprint path; internal/schemaindex); nil validates whole.
	incremental func() bool
	next        *Document
	// carry, when not nil, carries the state before's known validity
	// against other schemas over to next (the footprint path).
	carry func(next *Document, checked *jsonschema.Schema)
}

// applyWhole is the apply stage on the whole document: the state's whole
// value is simulated, its whole text given to the apply library, and the
// library's whole result decoded and checked. It returns nil when a gate
// of the stage rejected the patch (recorded in d).
func (c *Contract) applyWhole(ctx context.Context, state *Document, ops []Operation, opts VerifyOptions, d *Decision) (*applied, error) {
	pre := state.Value()
	post, t, err := simulate(ctx, pre, ops, c.limits.MaxCopyBytes)
	if err != nil {
		return nil, c.applyFailed(ctx, d, ops, err)
	}
	fp := t.footprint()
	d.Footprint = &fp
	if !c.shiftChecks(d, ops, opts, t) {
		return nil, nil
	}
	raw, err := applyLibrary(state.Bytes(), ops, t.roots, c.limits)
	if err != nil {
		if isCopyLimit(err) {
			d.fail(GateApply, CodeLimitExceeded, "", copyLimitMessage(c.limits.MaxCopyBytes))
		} else {
			// The reference semantics accepted the patch; the library
			// did not. Its message may quote the state, so it is not
			// passed on.
			d.fail(GateApply, CodeApplyMismatch, "", "the apply library rejected a patch that RFC 6902 allows; not committed")
			d.Gates[len(d.Gates)-1].Detail = err.Error()
		}
		return nil, nil
	}
	if !c.withinSize(d, ops, len(raw)) {
		return nil, nil
	}
	got, err := decodeFast(raw)
	if err != nil {
		// encoding/json refuses nesting past 10000 levels.
		c.failDepth(d, ops)
		return nil, nil
	}
	if at, ok, tooDeep := crossCheck(post, got, c.limits.MaxDepth); tooDeep {
		c.failDepth(d, ops)
		return nil, nil
	} else if !ok {
		d.fail(GateApply, CodeApplyMismatch, c.shown(at, pre, ops, t), "the apply library and RFC 6902 disagree on the result; not committed")
		return nil, nil
	}
	d.pass(GateApply)
	next := &Document{raw: raw, value: got, depthLazy: true, consistent: true}
	return &applied{pre: pre, post: got, trace: t, footprint: &fp, next: next}, nil
}

// shiftChecks runs shiftCheck for the scope and acl gates that are on;
// it reports whether the patch is still accepted.
func (c *Contract) shiftChecks(d *Decision, ops []Operation, opts VerifyOptions, t *trace) bool {
	if opts.Gates.Scope {
		c.shiftCheck(d, GateScope, ops, t)
	}
	if opts.Gates.ACL {
		c.shiftCheck(d, GateACL, ops, t)
	}
	return d.Rejection() == nil
}

// withinSize records the apply gate's document-size failure when size,
// the bytes of the state after the patch, is over the limit; it reports
// whether the state is within it.
func (c *Contract) withinSize(d *Decision, ops []Operation, size int) bool {
	if int64(size) > c.limits.MaxDocumentBytes {
		d.fail(GateApply, CodeLimitExceeded, "", c.sizeLimitMessage(ops))
		return false
	}
	return true
}

// failDepth records the apply gate's depth-limit failure.
func (c *Contract) failDepth(d *Decision, ops []Operation) {
	d.fail(GateApply, CodeLimitExceeded, "", c.depthLimitMessage(ops))
}

// applyFailed records the apply gate's rejection of a patch the reference
// semantics could not apply; it returns the caller's own context error,
// or an error that is not a property of the patch.
func (c *Contract) applyFailed(ctx context.Context, d *Decision, ops []Operation, err error) error {
	if err := callerEnded(ctx); err != nil {
		return err
	}
	ae, ok := err.(*applyError)
	if !ok {
		return err
	}
	if ae.whole {
		d.fail(GateApply, ae.code, "", ae.msg)
		return nil
	}
	d.fail(GateApply, ae.code, ae.ptr.String(), fmt.Sprintf("operation %d (%s): %s", ae.op, ops[ae.op].Op, ae.msg))
	return nil
}

// The messages of the limits on the state after the patch. The state's size
// and depth count data outside the view, so a message never gives them: it
// names the limit, and a measure of the patch's own values only when those
// alone break it.

// copyLimitMessage is the message of the copy-size limit. The bytes the
// copies add are their sources' sizes, which may be hidden.
func copyLimitMessage(limit int64) string {
	return fmt.Sprintf("the patch's copies add more than the copy-size limit of %d bytes", limit)
}

// sizeLimitMessage is the message of the document-size limit: the encoded
// size of the values the patch writes (add and replace) when it alone is
// over the limit, else no size.
func (c *Contract) sizeLimitMessage(ops []Operation) string {
	limit := c.limits.MaxDocumentBytes
	var written int64
	for _, op := range ops {
		if op.Op == OpAdd || op.Op == OpReplace {
			if b, err := encodeJSON(op.Value); err == nil {
				written += int64(len(b))
			}
		}
	}
	if written > limit {
		return fmt.Sprintf("the values the patch writes have %d bytes, %d more than the document-size limit of %d bytes", written, written-limit, limit)
	}
	return fmt.Sprintf("the state after the patch would be over the document-size limit of %d bytes", limit)
}

// depthLimitMessage is the message of the depth limit: how deep the
// deepest value the patch writes (add and replace) nests at its location,
// counting the containers above it, when that alone is over the limit,
// else no depth.
func (c *Contract) depthLimitMessage(ops []Operation) string {
	deepest := 0
	for _, op := range ops {
		if op.Op == OpAdd || op.Op == OpReplace {
			deepest = max(deepest, len(op.Path)+containerDepth(op.Value))
		}
	}
	if deepest > c.limits.MaxDepth {
		return fmt.Sprintf("the values the patch writes nest %d levels deep at their locations; the depth limit is %d levels", deepest, c.limits.MaxDepth)
	}
	return fmt.Sprintf("the state after the patch would nest deeper than the depth limit of %d levels", c.limits.MaxDepth)
}

// containerDepth is the number of nested containers of v: 0 for a
// scalar, 1 for a container of scalars.
func containerDepth(v any) int {
	n := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			n = max(n, containerDepth(e))
		}
	case map[string]any:
		for _, e := range x {
			n = max(n, containerDepth(e))
		}
	default:
		return 0
	}
	return n + 1
}

func (d *Decision) add(r GateResult) { d.Gates = append(d.Gates, r) }

func (d *Decision) pass(gate string) {
	d.add(GateResult{Gate: gate, Passed: true, Code: CodeOK})
}

func (d *Decision) fail(gate, code, ptr, msg string) {
	d.add(GateResult{Gate: gate, Code: code, Pointer: ptr, Message: msg})
}

// timeUp records a limit_exceeded result for gate when the work-time
// limit is spent; when the caller's own context ended it returns its
// error.
func (d *Decision) timeUp(ctx context.Context, gate string) (bool, error) {
	if ctx.Err() == nil {
		return false, nil
	}
	if err := callerEnded(ctx); err != nil {
		return true, err
	}
	d.fail(gate, CodeLimitExceeded, "", "the verification ran past its work-time limit")
	return true, nil
}

// scopeGate checks the pointers each operation names: write targets
// (path; and from for move, which removes it) against W, and, when
// sources is set (the scope gate, not acl), copy/move from and test path
// against P.
func (c *Contract) scopeGate(gate string, ops []Operation, sources bool) GateResult {
	for i, op := range ops {
		var writes, reads []Pointer
		switch op.Op {
		case OpAdd, OpReplace, OpRemove:
			writes = []Pointer{op.Path}
		case OpCopy:
			writes, reads = []Pointer{op.Path}, []Pointer{op.From}
		case OpMove:
			writes, reads = []Pointer{op.From, op.Path}, []Pointer{op.From}
		case OpTest:
			reads = []Pointer{op.Path}
		}
		for _, w := range writes {
			if !c.write.Contains(w) {
				return GateResult{Gate: gate, Code: CodeWriteOutside, Pointer: w.String(),
					Message: fmt.Sprintf("operation %d (%s) writes %s, outside the write region", i, op.Op, w)}
			}
		}
		if !sources {
			continue
		}
		for _, r := range reads {
			if !c.source.Contains(r) {
				return GateResult{Gate: gate, Code: CodeSourceOutside, Pointer: r.String(),
					Message: fmt.Sprintf("operation %d (%s) reads %s, outside the patch-source region", i, op.Op, r)}
			}
		}
	}
	return GateResult{Gate: gate, Passed: true, Code: CodeOK}
}

// shiftCheck turns the named gate's result into a failure when an
// insertion or removal shifts array elements outside the write region
// (RFC 6902 §4.1, §4.2: every later index changes). An append through
// "-" was checked as named.
func (c *Contract) shiftCheck(d *Decision, gate string, ops []Operation, t *trace) {
	r := d.Gate(gate)
	for _, s := range t.spans {
		if s.dash || c.write.Contains(s.array.Append(Wildcard)) {
			continue
		}
		for i := s.lo; i <= s.hi; i++ {
			at := s.array.Append(strconv.Itoa(i))
			if c.write.Contains(at) {
				continue
			}
			op := ops[s.op]
			named := op.Path
			if op.Op == OpMove && s.array.Equal(op.From.Parent()) && s.lo == mustIndex(op.From.Last()) {
				named = op.From
			}
			*r = GateResult{Gate: gate, Code: CodeWriteOutside, Pointer: named.String(),
				Message: fmt.Sprintf("operation %d (%s) at %s shifts %s, outside the write region", s.op, op.Op, named, at)}
			return
		}
	}
}

func mustIndex(tok string) int {
	i, err := ParseIndex(tok)
	if err != nil {
		return -1
	}
	return i
}

func (c *Contract) phaseGate(phase string) GateResult {
	r := GateResult{Gate: GatePhase, Passed: true, Code: CodeOK}
	if len(c.phases) == 0 {
		return r
	}
	for _, p := range c.phases {
		if p == phase {
			return r
		}
	}
	r.Passed, r.Code = false, CodePhaseNotAllowed
	if phase == "" {
		r.Message = fmt.Sprintf("no current phase was given; the step may commit in %q", c.phases)
	} else {
		r.Message = fmt.Sprintf("the current phase is %q; the step may commit in %q", phase, c.phases)
	}
	return r
}

// shown returns p's string form when the actor may be told about it:
// p is a pointer the proposal itself named, a location inside a literal
// value the proposal wrote, or a location that exists in the state before
// the patch and is visible in the view. Any other location may have been
// named by copied hidden data, so it is withheld (""), as is everything
// outside the view. A location inside a value the proposal appended
// through "-" to an array whose length the view does not show is spelled
// with "-", as the proposal named it, not with the index "-" resolved to
// (spell): that index is the hidden array's length.
func (c *Contract) shown(p Pointer, pre any, ops []Operation, t *trace) string {
	if t != nil && t.ownLocation(p) {
		return c.spell(p, pre, t).String()
	}
	if namedByProposal(p, ops) {
		return p.String()
	}
	if c.view.Visible(p) {
		if _, err := getAt(pre, p); err == nil {
			return p.String()
		}
	}
	return ""
}

// namedByProposal reports whether p is a path or from of an operation.
func namedByProposal(p Pointer, ops []Operation) bool {
	for _, op := range ops {
		if p.Equal(op.Path) || (op.From != nil && p.Equal(op.From)) {
			return true
		}
	}
	return false
}

// spell returns p, a location inside values the proposal wrote, with the
// index of each element the proposal appended through "-" above it put
// back to "-" when the view does not show the array (lengthShown).
func (c *Contract) spell(p Pointer, pre any, t *trace) Pointer {
	var out Pointer
	for _, pl := range t.placed {
		if !pl.dash || !p.HasPrefix(pl.at) || c.lengthShown(pl.at.Parent(), pre) {
			continue
		}
		if out == nil {
			out = slices.Clone(p)
		}
		out[len(pl.at)-1] = AppendToken
	}
	if out == nil {
		return p
	}
	return out
}

// lengthShown reports whether the view of pre shows an array at p, and so
// its length: the array exists before the patch and is projected (View
// keeps every position of an array it shows). pre may hold overlays.
func (c *Contract) lengthShown(p Pointer, pre any) bool {
	v, err := getAt(pre, p)
	if err != nil || !overlay.IsArray(v) {
		return false
	}
	_, shown := project(overlay.Plain(v), slices.Clip(slices.Clone(p)), c.view)
	return shown
}

// schemaCheck is the schema gate. On the footprint path, incremental says
// whether the state after the patch is known to satisfy the schema without
// validating it whole (internal/schemaindex); post may then hold overlays, and
// output schemas are looked up only where the patch wrote. Any failure is
// explained by the same whole validation as on the whole-document path.
func (c *Contract) schemaCheck(pre, post any, ops []Operation, t *trace, fp *Footprint, incremental func() bool) GateResult {
	vis := visibility{
		shown: func(p Pointer) string { return c.shown(p, pre, ops, t) },
		named: func(p Pointer) bool { return c.view.Visible(p) || namedByProposal(p, ops) },
	}
	shown := vis.shown
	if c.schema != nil && (incremental == nil || !incremental()) {
		f, err := validateSchema(c.schema, overlay.Plain(post))
		if err != nil {
			return GateResult{Gate: GateSchema, Code: CodeSchemaViolation, Message: "the schema could not be evaluated", Detail: err.Error()}
		}
		if f != nil {
			return schemaResult(CodeSchemaViolation, "the state after the patch", f, vis)
		}
	}
	for _, o := range c.outputs {
		var ats []Pointer
		if incremental == nil {
			ats = matches(post, o.pattern)
		} else {
			ats = matchesWritten(post, o.pattern, fp.Write)
		}
		for _, at := range ats {
			if !fp.Write.OverlapsSubtree(at) {
				continue
			}
			v, _ := getAt(post, at)
			f, err := validateSchema(o.schema, overlay.Plain(v))
			if err != nil {
				return GateResult{Gate: GateSchema, Code: CodeOutputSchema, Message: "the output schema could not be evaluated", Detail: err.Error()}
			}
			if f != nil {
				f.at = at.Append(f.at...)
				what := "a value the patch changed"
				if s := shown(at); s != "" || len(at) == 0 {
					what = fmt.Sprintf("the value at %q, which the patch changed,", s)
				}
				return schemaResult(CodeOutputSchema, what, f, vis)
			}
		}
	}
	return GateResult{Gate: GateSchema, Passed: true, Code: CodeOK}
}

// visibility is what a gate's result may tell the actor: shown is the
// form of a location it may name ("" when withheld, see
// Contract.shown), and named reports whether it may name a member at a
// location (the view shows the location, or the proposal named it).
type visibility struct {
	shown func(Pointer) string
	named func(Pointer) bool
}

func schemaResult(code, what string, f *schemaFailure, v visibility) GateResult {
	ptr := v.shown(f.at)
	where := "at " + ptr
	if ptr == "" && len(f.at) > 0 {
		where = "at a location outside the view"
	} else if len(f.at) == 0 {
		where = "at the root"
	}
	msg, keyword := f.told(func(name string) bool { return v.named(f.at.Append(name)) })
	return GateResult{Gate: GateSchema, Code: code, Pointer: ptr,
		Message: fmt.Sprintf("%s breaks the schema %s: %s (keyword %s)", what, where, msg, keyword),
		Detail:  fmt.Sprintf("at %q: %s", f.at.String(), f.detail)}
}

// matchesWritten is matches restricted to the locations whose subtree
// overlaps the write region w: the same list, found by following the
// pattern only where w can overlap it, so its cost follows the patch, not
// the state. doc may hold overlays.
func matchesWritten(doc any, pat Pointer, w Region) []Pointer {
	var out []Pointer
	var walk func(v any, i int, at Pointer, live []Pointer)
	walk = func(v any, i int, at Pointer, live []Pointer) {
		if len(live) == 0 {
			return
		}
		if i == len(pat) {
			out = append(out, at.Append())
			return
		}
		follow := func(tok string) {
			c, ok := overlay.Child(v, tok)
			if !ok {
				return
			}
			var next []Pointer
			for _, q := range live {
				if len(q) <= i || q[i] == Wildcard || q[i] == tok {
					next = append(next, q)
				}
			}
			walk(c, i+1, append(at, tok), next)
		}
		if tok := pat[i]; tok != Wildcard {
			follow(tok)
			return
		}
		all := false
		var toks []string
		for _, q := range live {
			if len(q) <= i || q[i] == Wildcard {
				all = true
				break
			}
			if !slices.Contains(toks, q[i]) {
				toks = append(toks, q[i])
			}
		}
		if !all {
			for _, tok := range toks {
				follow(tok)
			}
			return
		}
		switch x := overlay.Plain(v).(type) {
		case map[string]any:
			for k := range x {
				follow(k)
			}
		case []any:
			for k := range x {
				follow(strconv.Itoa(k))
			}
		}
	}
	walk(doc, 0, make(Pointer, 0, len(pat)), w.Patterns())
	sortPointers(out)
	return out
}

// matches expands a region pattern to the locations it names that exist
// in doc.
func matches(doc any, pat Pointer) []Pointer {
	var out []Pointer
	var walk func(v any, i int, at Pointer)
	walk = func(v any, i int, at Pointer) {
		if i == len(pat) {
			out = append(out, at.Append())
			return
		}
		tok := pat[i]
		switch x := v.(type) {
		case map[string]any:
			if tok == Wildcard {
				for k, c := range x {
					walk(c, i+1, append(at, k))
				}
			} else if c, ok := x[tok]; ok {
				walk(c, i+1, append(at, tok))
			}
		case []any:
			if tok == Wildcard {
				for k, c := range x {
					walk(c, i+1, append(at, strconv.Itoa(k)))
				}
			} else if k, err := ParseIndex(tok); err == nil && k < len(x) {
				walk(x[k], i+1, append(at, tok))
			}
		}
	}
	walk(doc, 0, make(Pointer, 0, len(pat)))
	sortPointers(out)
	return out
}

// invariantGate is the invariants gate: the contract's CEL rules in order
// on pre and post, stopping at the first that does not hold. ctx is a
// workContext: its limit gives limit_exceeded; the caller's own ending
// gives a result the pipeline drops for the caller's error.
func (c *Contract) invariantGate(ctx context.Context, pre, post any, phase string) GateResult {
	for _, inv := range c.invariants {
		code, msg, detail := evalInvariant(ctx, inv, pre, post, phase)
		if callerEnded(ctx) != nil {
			return GateResult{Gate: GateInvariants, Code: CodeLimitExceeded, Message: "cancelled"}
		}
		if code != CodeOK {
			return GateResult{Gate: GateInvariants, Code: code, Message: msg, Detail: detail}
		}
	}
	return GateResult{Gate: GateInvariants, Passed: true, Code: CodeOK}
}
