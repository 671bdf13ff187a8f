package runtime

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"cel.dev/cel-go/cel"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Gate names, as they appear in a GateResult. Parse and apply run in
// every configuration; the others are chosen with a GateSet.
const (
	GateParse      = "parse"
	GateScope      = "scope"
	GateACL        = "acl"
	GatePhase      = "phase"
	GateApply      = "apply"
	GateSchema     = "schema"
	GateInvariants = "invariants"
)

// Stable codes of a GateResult. Tests and reports compare codes, never
// message text.
const (
	CodeOK                = "ok"
	CodeMalformed         = "malformed_patch"
	CodeLimitExceeded     = "limit_exceeded"
	CodeWriteOutside      = "write_outside_region"
	CodeSourceOutside     = "source_outside_region"
	CodePhaseNotAllowed   = "phase_not_allowed"
	CodeDoesNotApply      = "patch_does_not_apply"
	CodeTestFailed        = "test_failed"
	CodeApplyMismatch     = "apply_engine_mismatch"
	CodeSchemaViolation   = "schema_violation"
	CodeOutputSchema      = "output_schema_violation"
	CodeInvariantViolated = "invariant_violated"
	CodeInvariantError    = "invariant_error"
	CodeInvariantNotBool  = "invariant_not_boolean"
	// CodeInexactNumber: an invariant read a number that no CEL int,
	// uint or double holds exactly (its float64 round trip changes it),
	// so the rule could only have judged a rounded value (invariants.go).
	CodeInexactNumber = "inexact_number"
)

// GateSet is the set of optional gates a configuration runs
// (docs/cases.md, Configurations): scope, acl, phase, schema and invariants.
type GateSet struct {
	Scope, ACL, Phase, Schema, Invariants bool
}

// DefaultGates is PatchOptic's set: scope, phase, schema, invariants.
var DefaultGates = GateSet{Scope: true, Phase: true, Schema: true, Invariants: true}

// ParseGates reads a comma-separated list of gate names ("scope,phase"),
// or "none" for the empty set. Unknown or repeated names are errors.
func ParseGates(s string) (GateSet, error) {
	var g GateSet
	s = strings.TrimSpace(s)
	if s == "none" {
		return g, nil
	}
	if s == "" {
		return g, errors.New(`empty gate list (use "none" for no optional gate)`)
	}
	return GatesFromList(strings.Split(s, ","))
}

// GatesFromList builds a GateSet from gate names. Unknown or repeated
// names are errors.
func GatesFromList(names []string) (GateSet, error) {
	var g GateSet
	seen := map[string]bool{}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if seen[n] {
			return g, fmt.Errorf("gate %q listed twice", n)
		}
		seen[n] = true
		switch n {
		case GateScope:
			g.Scope = true
		case GateACL:
			g.ACL = true
		case GatePhase:
			g.Phase = true
		case GateSchema:
			g.Schema = true
		case GateInvariants:
			g.Invariants = true
		default:
			return g, fmt.Errorf("unknown gate %q (gates: scope, acl, phase, schema, invariants)", n)
		}
	}
	return g, nil
}

// Names lists the gates in the set, in pipeline order.
func (g GateSet) Names() []string {
	var out []string
	for _, x := range []struct {
		on   bool
		name string
	}{{g.Scope, GateScope}, {g.ACL, GateACL}, {g.Phase, GatePhase}, {g.Schema, GateSchema}, {g.Invariants, GateInvariants}} {
		if x.on {
			out = append(out, x.name)
		}
	}
	return out
}

// String returns the comma-separated names, or "none".
func (g GateSet) String() string {
	if n := g.Names(); len(n) > 0 {
		return strings.Join(n, ",")
	}
	return "none"
}

// Limits bound the work one verification may do. A zero field takes its
// default (DefaultLimits).
type Limits struct {
	// MaxOps is the most operations a patch may have.
	MaxOps int `json:"max_ops" yaml:"max_ops"`
	// MaxProposalBytes bounds the proposal text, in bytes.
	MaxProposalBytes int64 `json:"max_proposal_bytes" yaml:"max_proposal_bytes"`
	// MaxDocumentBytes bounds the encoded state after the patch, in bytes.
	MaxDocumentBytes int64 `json:"max_document_bytes" yaml:"max_document_bytes"`
	// MaxCopyBytes bounds the bytes that copy operations add in total.
	MaxCopyBytes int64 `json:"max_copy_bytes" yaml:"max_copy_bytes"`
	// MaxDepth bounds container nesting in a proposal.
	MaxDepth int `json:"max_depth" yaml:"max_depth"`
	// MaxWorkMS bounds the wall time of one verification, in milliseconds.
	MaxWorkMS int64 `json:"max_work_ms" yaml:"max_work_ms"`
	// MaxInvariantCost bounds the CEL cost of each invariant evaluation
	// (cel-go's cost units).
	MaxInvariantCost uint64 `json:"max_invariant_cost" yaml:"max_invariant_cost"`
}

// Ceilings on limits: deeper nesting would overflow the decoders' stacks,
// and longer work times overflow a time.Duration.
const (
	maxMaxDepth  = 10_000
	maxMaxWorkMS = 86_400_000
)

// DefaultLimits are the limits used for zero fields.
var DefaultLimits = Limits{
	MaxOps:           1000,
	MaxProposalBytes: 4 << 20,
	MaxDocumentBytes: 64 << 20,
	MaxCopyBytes:     16 << 20,
	MaxDepth:         DefaultMaxDepth,
	MaxWorkMS:        10_000,
	MaxInvariantCost: 1_000_000,
}

func (l Limits) withDefaults() (Limits, error) {
	if l.MaxOps < 0 || l.MaxProposalBytes < 0 || l.MaxDocumentBytes < 0 || l.MaxCopyBytes < 0 || l.MaxDepth < 0 || l.MaxWorkMS < 0 {
		return l, errors.New("limits must not be negative")
	}
	if l.MaxDepth > maxMaxDepth {
		return l, fmt.Errorf("max_depth %d is above %d", l.MaxDepth, maxMaxDepth)
	}
	if l.MaxWorkMS > maxMaxWorkMS {
		return l, fmt.Errorf("max_work_ms %d is above %d (one day)", l.MaxWorkMS, maxMaxWorkMS)
	}
	d := DefaultLimits
	if l.MaxOps == 0 {
		l.MaxOps = d.MaxOps
	}
	if l.MaxProposalBytes == 0 {
		l.MaxProposalBytes = d.MaxProposalBytes
	}
	if l.MaxDocumentBytes == 0 {
		l.MaxDocumentBytes = d.MaxDocumentBytes
	}
	if l.MaxCopyBytes == 0 {
		l.MaxCopyBytes = d.MaxCopyBytes
	}
	if l.MaxDepth == 0 {
		l.MaxDepth = d.MaxDepth
	}
	if l.MaxWorkMS == 0 {
		l.MaxWorkMS = d.MaxWorkMS
	}
	if l.MaxInvariantCost == 0 {
		l.MaxInvariantCost = d.MaxInvariantCost
	}
	return l, nil
}

// ViewSpec is the projection of a step contract as written: region
// patterns to include and to exclude.
type ViewSpec struct {
	Include []string `json:"include" yaml:"include"`
	Exclude []string `json:"exclude" yaml:"exclude"`
}

// InvariantSpec is a named CEL rule over pre, post and phase that must
// evaluate to true after a commit.
type InvariantSpec struct {
	Name string `json:"name" yaml:"name"`
	Rule string `json:"rule" yaml:"rule"`
}

// ContractSpec is a step contract as written in a case or a contract file
// (docs/contracts-and-gates.md): the authority triple (view, write, source;
// paper §3.1), the phases in which the step may commit, the schema of the
// whole state, output schemas for written values keyed by region pattern,
// invariants and limits. Schema and OutputSchema values are decoded JSON
// (numbers as json.Number).
type ContractSpec struct {
	View         ViewSpec        `json:"view"`
	Write        []string        `json:"write"`
	Source       []string        `json:"source"`
	Phases       []string        `json:"phases"`
	Schema       any             `json:"schema"`
	OutputSchema map[string]any  `json:"output_schema"`
	Invariants   []InvariantSpec `json:"invariants"`
	Limits       Limits          `json:"limits"`
}

// Contract is a compiled step contract. Compile it once; Verify is then
// safe to call from many goroutines at once.
type Contract struct {
	spec       ContractSpec
	view       ViewRegion
	write      Region
	source     Region
	phases     []string
	schema     *jsonschema.Schema
	outputs    []outputSchema
	invariants []invariant
	limits     Limits

	// incremental is the analysis of schema for incremental validation
	// (internal/schemaindex), nil when the schema does not allow it.
	incremental *schemaindex.Index
	// wholeOnly turns the footprint path off (tests and benchmarks).
	wholeOnly bool
}

type outputSchema struct {
	pattern Pointer
	schema  *jsonschema.Schema
}

// ContractError is a contract that cannot be compiled. Field names the key
// at fault ("write", "invariants[2].rule").
type ContractError struct {
	Field string
	Err   error
}

func (e *ContractError) Error() string { return e.Field + ": " + e.Err.Error() }
func (e *ContractError) Unwrap() error { return e.Err }

// Compile checks and compiles a contract: region patterns (RFC 6901 with
// "*" segments), JSON Schemas (draft 2020-12, no remote references), CEL
// rules (which must have a boolean or dynamic result) and limits. Errors
// are *ContractError. It is new(Compiler).Compile: nothing is shared with
// other contracts.
func Compile(spec ContractSpec) (*Contract, error) {
	return new(Compiler).Compile(spec)
}

// A Compiler compiles contracts and shares what equal inputs build
// between them: a JSON Schema is compiled (and analysed for incremental
// validation) once per distinct document, and a CEL rule checked and
// planned once per rule text and cost limit. The steps of a case mostly
// repeat the case's schema and invariants, so compiling a case's
// contracts with one Compiler does that work once instead of once a step.
// What it shares is immutable, and safe to use from several sessions at
// once. A Compiler is safe for concurrent use; the zero value is ready.
// It keeps everything it compiled, so its memory grows with the distinct
// schemas and rules: use one per case or case set, not one per process.
type Compiler struct {
	mu      sync.Mutex
	schemas map[string]*compiledSchema
	rules   map[ruleKey]cel.Program
}

// compiledSchema is a compiled JSON Schema and, for the state schema, its
// analysis (nil until asked for, and when it does not allow incremental
// validation).
type compiledSchema struct {
	schema   *jsonschema.Schema
	analysed bool
	index    *schemaindex.Index
}

// ruleKey names a CEL program: its rule text and cost limit.
type ruleKey struct {
	rule string
	cost uint64
}

// schema returns the compiled schema doc, compiled now or before; field
// names it in errors (which are not kept: a failing schema is compiled
// again, to name its own field). analyse asks for its analysis too.
func (cc *Compiler) schema(field string, doc any, analyse bool) (*jsonschema.Schema, *schemaindex.Index, error) {
	key, err := json.Marshal(doc) // maps in key order: equal documents, equal keys
	if err != nil {
		s, err := compileSchema(field, doc)
		return s, nil, err
	}
	cc.mu.Lock()
	e := cc.schemas[string(key)]
	cc.mu.Unlock()
	if e == nil {
		s, err := compileSchema(field, doc)
		if err != nil {
			return nil, nil, err
		}
		e = &compiledSchema{schema: s}
		cc.mu.Lock()
		if prev := cc.schemas[string(key)]; prev != nil {
			e = prev // compiled meanwhile by another contract
		} else {
			if cc.schemas == nil {
				cc.schemas = map[string]*compiledSchema{}
			}
			cc.schemas[string(key)] = e
		}
		cc.mu.Unlock()
	}
	if !analyse {
		return e.schema, nil, nil
	}
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if !e.analysed {
		e.index, e.analysed = schemaindex.Analyse(e.schema), true
	}
	return e.schema, e.index, nil
}

// Compile is the package's Compile, sharing compiled schemas and rules
// with the other contracts this Compiler compiled.
func (cc *Compiler) Compile(spec ContractSpec) (*Contract, error) {
	c := &Contract{spec: spec}
	var err error
	region := func(field string, ps []string) Region {
		if err != nil {
			return Region{}
		}
		for i, p := range ps {
			if _, e := NewRegion(p); e != nil {
				err = &ContractError{Field: fmt.Sprintf("%s[%d]", field, i), Err: e}
				return Region{}
			}
		}
		r, _ := NewRegion(ps...)
		return r
	}
	if len(spec.View.Include) == 0 {
		return nil, &ContractError{Field: "view.include", Err: errors.New(`empty: a contract must say what its actor sees (use [""] for the whole document)`)}
	}
	c.view.Include = region("view.include", spec.View.Include)
	c.view.Exclude = region("view.exclude", spec.View.Exclude)
	c.write = region("write", spec.Write)
	c.source = region("source", spec.Source)
	if err != nil {
		return nil, err
	}
	for i, p := range spec.Phases {
		if p == "" {
			return nil, &ContractError{Field: fmt.Sprintf("phases[%d]", i), Err: errors.New("empty phase name")}
		}
		if slices.Contains(spec.Phases[:i], p) {
			return nil, &ContractError{Field: fmt.Sprintf("phases[%d]", i), Err: fmt.Errorf("phase %q listed twice", p)}
		}
	}
	c.phases = slices.Clone(spec.Phases)
	if c.limits, err = spec.Limits.withDefaults(); err != nil {
		return nil, &ContractError{Field: "limits", Err: err}
	}
	if spec.Schema != nil {
		if c.schema, c.incremental, err = cc.schema("schema", spec.Schema, true); err != nil {
			return nil, err
		}
	}
	keys := make([]string, 0, len(spec.OutputSchema))
	for k := range spec.OutputSchema {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		field := fmt.Sprintf("output_schema[%q]", k)
		p, e := ParsePointer(k)
		if e != nil {
			return nil, &ContractError{Field: field, Err: e}
		}
		s, _, e := cc.schema(field, spec.OutputSchema[k], false)
		if e != nil {
			return nil, e
		}
		if p.Last() == AppendToken {
			// "/audit/-" keys the values appended to /audit: any element
			// the patch changed.
			p = p.Parent().Append(Wildcard)
		}
		c.outputs = append(c.outputs, outputSchema{pattern: p, schema: s})
	}
	if c.invariants, err = cc.invariants(spec.Invariants, c.limits); err != nil {
		return nil, err
	}
	return c, nil
}

// MustCompile is Compile for contracts known to be valid; it panics on an
// error. Use it in tests and examples.
func MustCompile(spec ContractSpec) *Contract {
	c, err := Compile(spec)
	if err != nil {
		panic(err)
	}
	return c
}

// Spec returns the contract as written.
func (c *Contract) Spec() ContractSpec { return c.spec }

// ViewRegion returns the compiled projection O_s.
func (c *Contract) ViewRegion() ViewRegion { return c.view }

// Write returns the write region W_s.
func (c *Contract) Write() Region { return c.write }

// Source returns the patch-source region P_s.
func (c *Contract) Source() Region { return c.source }

// Phases returns the phases in which the step may commit; empty means any.
func (c *Contract) Phases() []string { return c.phases }

// IncrementalSchema reports whether the state schema can be validated
// incrementally, decided when the contract is compiled: a schema of draft
// 2019-09 or later, without $dynamicRef, $recursiveRef or vocabulary
// extensions. Then a patch applied at its foci has the state after it
// validated on the changed subtrees (against the schemas that apply to
// them) and on the keywords of the containers above them that may change
// their verdict (uniqueItems, contains), provided the state before it is
// valid and no schema on the changed paths is non-local there (const,
// enum, not, anyOf, oneOf, if, dependentSchemas, format or content
// keywords on a container above a change); otherwise the whole state is
// validated, as it always is when this reports false. The decisions are
// the same either way. It is false when the contract has no schema.
func (c *Contract) IncrementalSchema() bool { return c.incremental != nil }

// Limits returns the effective limits, defaults filled in.
func (c *Contract) Limits() Limits { return c.limits }

// WithLimits returns a copy of the contract bounded by l instead (a zero
// field takes DefaultLimits), sharing its compiled regions, schema and
// invariants; c is unchanged. It fails as Compile does on a negative or
// too large limit. A state grown to a larger scale takes larger bounds
// on the operations of a patch and the size of the state this way.
func (c *Contract) WithLimits(l Limits) (*Contract, error) {
	l, err := l.withDefaults()
	if err != nil {
		return nil, &ContractError{Field: "limits", Err: err}
	}
	out := *c
	out.limits = l
	return &out, nil
}

// Footprint returns the step's static footprint (R_s, W_s, P_s) of paper
// §3.4, R_s being the view region.
func (c *Contract) Footprint() Footprint {
	return Footprint{Read: c.view, Write: c.write, Source: c.source}
}

// View projects doc to what this step's actor may see (see View).
func (c *Contract) View(doc *Document) any { return View(doc.Value(), c.view) }

// workLimit is the verification's wall-time budget.
func (c *Contract) workLimit() time.Duration {
	return time.Duration(c.limits.MaxWorkMS) * time.Millisecond
}
