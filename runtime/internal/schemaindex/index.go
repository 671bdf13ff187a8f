// Package schemaindex is the analysis of a compiled JSON Schema (draft
// 2019-09 or later, github.com/santhosh-tekuri/jsonschema/v6) that lets the
// runtime validate a state without validating it whole (so that a step costs
// what its footprint costs, docs/runtime.md): Holds decides a state after a
// patch from the subtrees the patch changed, SatisfiesWhole validates a
// whole state in parts on every core where that gives the same verdict, and
// Quick accepts the simplest element schemas by look-ups. Each only ever
// says "valid" where the library would; anything else is left to the
// library's whole validation.
package schemaindex

import (
	"slices"

	"github.com/patchbench/patchbench/runtime/internal/index"
	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Incremental schema validation. A patch that the footprint path applies
// changes only its foci, the subtrees it writes (focus.go); every
// container above a focus keeps its members and length. If the state
// before the patch satisfies the schema, the state after it does exactly
// when
//
//  1. each changed focus satisfies every schema that applies to its
//     location, and
//  2. each schema that applies to a container above a focus still holds
//     for the container, knowing that only a descendant changed.
//
// The schemas that apply to a location are found from the root schema by
// the location's tokens, as the validator routes a child: properties,
// patternProperties, additionalProperties and unevaluatedProperties for a
// member; prefixItems, items and unevaluatedItems for an element; $ref and
// allOf apply to the same value. For a container above a focus, the
// keywords that look only at member names or at the length (type,
// required, min/maxProperties, dependentRequired, additionalProperties,
// propertyNames, min/maxItems) cannot change their verdict; uniqueItems
// and contains look at the elements and are checked again on the new
// array, alone. A keyword whose verdict on a container may change in
// another way (const, enum, not, anyOf, oneOf, if, dependentSchemas,
// format and content keywords on a container, contains combined with
// unevaluatedItems) makes the schema non-local there, and the whole state
// is validated as before. So do dynamic references, which depend on the
// path from the root, and schemas of drafts before 2019-09; that part is
// decided once, when the contract is compiled (Contract.IncrementalSchema).
//
// The check only decides validity. A rejection is always explained by a
// whole validation of the state after the patch, so its message, pointer
// and detail are the same as before.

// Index is the analysis of one compiled schema.
type Index struct {
	root  *jsonschema.Schema
	nodes map[*jsonschema.Schema]*node
}

type node struct {
	// inplace are the schemas applied to the same value ($ref, allOf),
	// transitively, the schema itself excluded.
	inplace []*jsonschema.Schema
	// ancestorLocal is false when the schema's verdict on a container may
	// change when only a descendant of it changes, beyond recheck.
	ancestorLocal bool
	// recheck holds the schema's uniqueItems and contains keywords alone,
	// nil when it has neither.
	recheck *jsonschema.Schema
}

// Analyse returns the index of a schema that can be validated
// incrementally, or nil.
func Analyse(root *jsonschema.Schema) *Index {
	x := &Index{root: root, nodes: map[*jsonschema.Schema]*node{}}
	seen := map[*jsonschema.Schema]bool{}
	var all []*jsonschema.Schema
	var visit func(s *jsonschema.Schema) bool
	visit = func(s *jsonschema.Schema) bool {
		if s == nil || seen[s] {
			return true
		}
		seen[s] = true
		all = append(all, s)
		if s.DraftVersion < 2019 || s.RecursiveRef != nil || s.DynamicRef != nil || len(s.Extensions) > 0 {
			return false
		}
		for _, c := range Subschemas(s) {
			if !visit(c) {
				return false
			}
		}
		return true
	}
	if !visit(root) {
		return nil
	}
	for _, s := range all {
		n := &node{inplace: inplaceClosure(s)}
		n.ancestorLocal = s.Const == nil && s.Enum == nil && s.Not == nil && len(s.AnyOf) == 0 &&
			len(s.OneOf) == 0 && s.If == nil && s.Then == nil && s.Else == nil && len(s.DependentSchemas) == 0 &&
			len(s.Dependencies) == 0 && s.Format == nil && s.ContentEncoding == nil &&
			s.ContentMediaType == nil && s.ContentSchema == nil
		if s.UnevaluatedItems != nil {
			for _, c := range append([]*jsonschema.Schema{s}, n.inplace...) {
				if c.Contains != nil {
					n.ancestorLocal = false // contains marks the elements it matches evaluated
				}
			}
		}
		if s.UniqueItems || s.Contains != nil {
			n.recheck = &jsonschema.Schema{
				DraftVersion: s.DraftVersion, Location: s.Location,
				UniqueItems: s.UniqueItems, Contains: s.Contains, MinContains: s.MinContains, MaxContains: s.MaxContains,
			}
		}
		x.nodes[s] = n
	}
	return x
}

// Subschemas lists every schema a schema refers to.
func Subschemas(s *jsonschema.Schema) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(cs ...*jsonschema.Schema) {
		for _, c := range cs {
			if c != nil {
				out = append(out, c)
			}
		}
	}
	add(s.Ref, s.Not, s.If, s.Then, s.Else, s.PropertyNames, s.UnevaluatedProperties, s.Contains,
		s.Items2020, s.UnevaluatedItems, s.ContentSchema)
	if s.RecursiveRef != nil {
		add(s.RecursiveRef)
	}
	add(s.AllOf...)
	add(s.AnyOf...)
	add(s.OneOf...)
	add(s.PrefixItems...)
	for _, c := range s.Properties {
		add(c)
	}
	for _, c := range s.PatternProperties {
		add(c)
	}
	for _, c := range s.DependentSchemas {
		add(c)
	}
	for _, d := range s.Dependencies {
		if c, ok := d.(*jsonschema.Schema); ok {
			add(c)
		}
	}
	if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok {
		add(c)
	}
	if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
		add(c)
	}
	switch it := s.Items.(type) {
	case *jsonschema.Schema:
		add(it)
	case []*jsonschema.Schema:
		add(it...)
	}
	return out
}

// inplaceClosure lists the schemas applied to the same value as s
// through $ref and allOf, transitively, s excluded.
func inplaceClosure(s *jsonschema.Schema) []*jsonschema.Schema {
	seen := map[*jsonschema.Schema]bool{s: true}
	var out []*jsonschema.Schema
	var walk func(s *jsonschema.Schema)
	walk = func(s *jsonschema.Schema) {
		for _, c := range append([]*jsonschema.Schema{s.Ref}, s.AllOf...) {
			if c != nil && !seen[c] {
				seen[c] = true
				out = append(out, c)
				walk(c)
			}
		}
	}
	walk(s)
	return out
}

// closure adds to set every schema applied in place by its members.
func (x *Index) closure(set []*jsonschema.Schema) []*jsonschema.Schema {
	out := slices.Clone(set)
	for _, s := range set {
		for _, c := range x.nodes[s].inplace {
			if !slices.Contains(out, c) {
				out = append(out, c)
			}
		}
	}
	return out
}

// evaluatesMember reports whether s or a schema applied in place with it
// evaluates member tok, so that s's unevaluatedProperties does not apply.
func (x *Index) evaluatesMember(s *jsonschema.Schema, tok string) bool {
	if ownMember(s, tok) {
		return true
	}
	for _, c := range x.nodes[s].inplace {
		if ownMember(c, tok) || c.UnevaluatedProperties != nil {
			return true
		}
	}
	return false
}

func ownMember(s *jsonschema.Schema, tok string) bool {
	if _, ok := s.Properties[tok]; ok || s.AdditionalProperties != nil {
		return true
	}
	for re := range s.PatternProperties {
		if re.MatchString(tok) {
			return true
		}
	}
	return false
}

// evaluatesItem is evaluatesMember for element i and unevaluatedItems.
func (x *Index) evaluatesItem(s *jsonschema.Schema, i int) bool {
	if ownItem(s, i) {
		return true
	}
	for _, c := range x.nodes[s].inplace {
		if ownItem(c, i) || c.UnevaluatedItems != nil {
			return true
		}
	}
	return false
}

func ownItem(s *jsonschema.Schema, i int) bool {
	if s.DraftVersion < 2020 {
		if s.AdditionalItems != nil {
			return true
		}
		switch it := s.Items.(type) {
		case *jsonschema.Schema:
			return true
		case []*jsonschema.Schema:
			return i < len(it)
		}
		return false
	}
	return s.Items2020 != nil || i < len(s.PrefixItems)
}

// route returns the schemas that the schemas of set (closed under in-place
// application) apply to the member or element tok of a container.
func (x *Index) route(set []*jsonschema.Schema, tok string, object bool) []*jsonschema.Schema {
	var out []*jsonschema.Schema
	add := func(c *jsonschema.Schema) {
		if c != nil && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	idx := -1
	if !object {
		idx, _ = index.Parse(tok)
	}
	for _, s := range set {
		if s.Bool != nil {
			continue
		}
		if object {
			matched := false
			if c, ok := s.Properties[tok]; ok {
				add(c)
				matched = true
			}
			for re, c := range s.PatternProperties {
				if re.MatchString(tok) {
					add(c)
					matched = true
				}
			}
			if c, ok := s.AdditionalProperties.(*jsonschema.Schema); ok && !matched {
				add(c)
			}
			if s.UnevaluatedProperties != nil && !x.evaluatesMember(s, tok) {
				add(s.UnevaluatedProperties)
			}
			continue
		}
		if s.DraftVersion < 2020 {
			switch it := s.Items.(type) {
			case *jsonschema.Schema:
				add(it)
			case []*jsonschema.Schema:
				if idx < len(it) {
					add(it[idx])
				} else if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					add(c)
				}
			default:
				if c, ok := s.AdditionalItems.(*jsonschema.Schema); ok {
					add(c)
				}
			}
		} else if idx < len(s.PrefixItems) {
			add(s.PrefixItems[idx])
		} else {
			add(s.Items2020)
		}
		if s.UnevaluatedItems != nil && !x.evaluatesItem(s, idx) {
			add(s.UnevaluatedItems)
		}
	}
	return out
}

// Change is a changed focus of a patch applied at its foci: its location
// (JSON Pointer reference tokens, unescaped) and its new value (which may
// hold overlays).
type Change struct {
	Path  []string
	Value any
}

// holds reports whether the state after the patch, post (which may hold
// overlays), satisfies the schema, given that the state before it did and
// that only the subtrees in changes differ. ok is false when that cannot
// be decided this way (a non-local schema on a changed path) or the
// answer is no; the caller then Validates the whole state.
func (x *Index) Holds(post any, changes []Change) bool {
	for _, ch := range changes {
		set := x.closure([]*jsonschema.Schema{x.root})
		var target []*jsonschema.Schema
		for d, tok := range ch.Path {
			parent, ok := overlay.Lookup(post, ch.Path[:d])
			if !ok {
				return false
			}
			object, isArray := overlay.IsObject(parent), overlay.IsArray(parent)
			if !object && !isArray {
				return false
			}
			for _, s := range set {
				n := x.nodes[s]
				if !n.ancestorLocal {
					return false
				}
				if n.recheck != nil && isArray && !Validates(n.recheck, overlay.Plain(parent)) {
					return false
				}
			}
			next := x.route(set, tok, object)
			if d == len(ch.Path)-1 {
				target = next
			} else {
				set = x.closure(next)
			}
		}
		for _, s := range target {
			if !Validates(s, ch.Value) {
				return false
			}
		}
	}
	return true
}

// Validates reports whether v satisfies s; a schema that cannot be
// evaluated (a panic in the library) counts as not satisfied.
func Validates(s *jsonschema.Schema, v any) (ok bool) {
	defer func() {
		if recover() != nil {
			ok = false
		}
	}()
	return s.Validate(v) == nil
}

// Root is the schema the index analysed.
func (x *Index) Root() *jsonschema.Schema { return x.root }
