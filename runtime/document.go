package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
	"github.com/patchbench/patchbench/runtime/internal/schemaindex"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// DefaultMaxDepth is the default limit on container nesting for decoded
// documents and proposals.
const DefaultMaxDepth = 512

// Document is an immutable JSON document: the shared state of a workflow.
// Any JSON value (object, array or scalar) is a valid document. It holds
// both the encoded text, in which every number keeps its exact spelling,
// and the decoded value (see the package documentation for the value
// types). A Document is never modified; a commit produces a new one, so a
// Document is safe for concurrent use.
//
// A document built from a value (NewDocument) holds both at once. A
// document parsed from text (ParseDocument) holds its text, checked
// whole, and builds its value when first asked for (Value, or a
// verification that needs it whole), once, on every core for its long
// arrays; until then a verification reads the containers it needs from
// the text (lazytree.go), and validates the whole state against a schema
// from the text where it can (schemaindex.Quick.AcceptsText). A document
// committed by a
// verification shares every subtree the patch did not touch with the
// state it was verified against: its value and its text are built from
// the changed subtrees when first asked for (Value, Bytes), once, so a
// commit costs what the patch's footprint costs, not what the state
// costs.
type Document struct {
	// raw is the text and value the decoded value of a document that has
	// them; a committed state built on demand keeps them in lazy.
	raw   []byte
	value any
	lazy  *lazyDoc

	// A parsed document's value is built from raw when first needed
	// (plain), on every core for its long arrays (bigs): ParseDocument
	// only checks the text. deferred is set once, at construction.
	deferred  bool
	valueOnce sync.Once
	bigs      []*bigArray
	// built is set once a deferred value is built. Until then the
	// document's tree (tree) is read from its text (lazytree.go):
	// lazyTree is that tree, made once, and lazyBuilt the bytes of text
	// it built child by child (bounded: lazyBuildShare).
	built     atomic.Bool
	lazyOnce  sync.Once
	lazyTree  any
	lazyBuilt atomic.Int64

	// prep is the canonical text of a document that has raw, built on
	// first use (or shared, when a commit keeps the text).
	prepOnce sync.Once
	prep     *textModel
	// seed is what ParseDocument learned of raw for the canonical text
	// (jsonparse.go), used once, when the text model is built.
	seed *parseSeed

	// depth bounds the depth of the deepest value (the root is at 0); it
	// is exact for parsed documents. A document committed on the
	// whole-document path learns it when first asked (depthOnce).
	depth     int
	depthLazy bool
	depthOnce sync.Once
	// consistent is true when value is exactly what raw decodes to (always,
	// except for a NewDocument value with strings that are not UTF-8).
	consistent bool
	// sorted is true when raw is encodeJSON(value) (NewDocument): members
	// sorted by name, no white space. Its text model's base then says so
	// (textBase.sorted), which lets SetString work at the footprint.
	sorted bool
	// valid caches, per compiled schema, whether the document satisfies
	// it (a validity).
	valid sync.Map
}

// lazyDoc is a committed state's value and text, kept as changes against
// the state before and built whole on demand.
type lazyDoc struct {
	tree any        // the value, with overlays on the changed paths
	text *textModel // the canonical text

	valOnce sync.Once
	val     any
	valDone atomic.Bool

	rawOnce sync.Once
	raw     []byte
}

// ParseDocument decodes one JSON value strictly: it rejects invalid JSON,
// duplicate member names, nesting deeper than DefaultMaxDepth and trailing
// data, with a *SyntaxError giving line and column. The bytes are copied.
// The text is checked whole here; the decoded value is built from it when
// first needed, and is what decoding would have given.
func ParseDocument(b []byte) (*Document, error) {
	return parseDocument(b, DefaultMaxDepth)
}

func parseDocument(b []byte, maxDepth int) (*Document, error) {
	raw := append([]byte(nil), b...)
	depth, seed, bigs, err := scanJSON(raw, maxDepth)
	if err != nil {
		return nil, err
	}
	return &Document{raw: raw, deferred: true, bigs: bigs, depth: depth, consistent: true, seed: seed}, nil
}

// plain returns the value of a document that has raw, building it first
// when it is deferred.
func (d *Document) plain() any {
	if d.deferred {
		d.valueOnce.Do(func() {
			d.value = buildJSON(d.raw, d.bigs)
			d.bigs = nil
			d.built.Store(true)
		})
	}
	return d.value
}

// NewDocument builds a Document from a decoded JSON value made of the
// types listed in the package documentation (json.Number for numbers). The
// value is retained and must not be modified afterwards.
func NewDocument(v any) (*Document, error) {
	var st valueStats
	if err := checkValue(v, 0, &st); err != nil {
		return nil, err
	}
	raw, err := encodeJSON(v)
	if err != nil {
		return nil, err
	}
	return &Document{raw: raw, value: v, depth: st.depth, consistent: !st.badUTF8, sorted: true}, nil
}

// valueStats are what checkValue learns on its way: the depth of the
// deepest value, and whether some string is not UTF-8 (its encoding then
// replaces bytes, so text and value differ).
type valueStats struct {
	depth   int
	badUTF8 bool
}

func checkValue(v any, depth int, st *valueStats) error {
	if depth > DefaultMaxDepth {
		return fmt.Errorf("value nested deeper than %d levels", DefaultMaxDepth)
	}
	st.depth = max(st.depth, depth)
	switch x := v.(type) {
	case nil, bool:
	case string:
		if !utf8.ValidString(x) {
			st.badUTF8 = true
		}
	case json.Number:
		if _, ok := normalizeNumber(string(x)); !ok {
			return fmt.Errorf("invalid number %q", string(x))
		}
		if err := checkNumber(x); err != nil {
			return err
		}
	case []any:
		for _, e := range x {
			if err := checkValue(e, depth+1, st); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, e := range x {
			if !utf8.ValidString(k) {
				st.badUTF8 = true
			}
			if err := checkValue(e, depth+1, st); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// maxDepth returns depth, computing it first when it is not known yet.
func (d *Document) maxDepth() int {
	if d.depthLazy {
		d.depthOnce.Do(func() { d.depth = valueDepth(d.Value()) })
	}
	return d.depth
}

// valueDepth returns the depth of the deepest value in v (v at 0).
func valueDepth(v any) int {
	d := 0
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			d = max(d, 1+valueDepth(e))
		}
	case map[string]any:
		for _, e := range x {
			d = max(d, 1+valueDepth(e))
		}
	}
	return d
}

// Bytes returns the document's JSON text. The caller must not modify it.
// The text of a committed state is built on the first call.
func (d *Document) Bytes() []byte {
	if d.lazy == nil {
		return d.raw
	}
	l := d.lazy
	l.rawOnce.Do(func() { l.raw = l.text.bytes() })
	return l.raw
}

// Value returns the decoded document. The caller must not modify it. The
// value of a committed state is built on the first call, sharing every
// unchanged subtree with the state before it.
func (d *Document) Value() any {
	if d.lazy == nil {
		return d.plain()
	}
	l := d.lazy
	l.valOnce.Do(func() {
		l.val = overlay.Plain(l.tree)
		l.valDone.Store(true)
	})
	return l.val
}

// tree returns the value, possibly with overlays (internal/overlay), without
// building it: a parsed document's value not built yet is read from its
// text (lazytree.go).
func (d *Document) tree() any {
	if d.lazy == nil {
		if d.deferred && !d.built.Load() {
			d.lazyOnce.Do(func() {
				if r := d.lazyRoot(); r != nil {
					d.lazyTree = r
				}
			})
			if d.lazyTree != nil {
				return d.lazyTree
			}
		}
		return d.plain()
	}
	if d.lazy.valDone.Load() {
		return d.lazy.val
	}
	return d.lazy.tree
}

// text returns the canonical text model, or nil when the text cannot
// serve the footprint path (see canonicalText).
func (d *Document) text() *textModel {
	if d.lazy != nil {
		return d.lazy.text
	}
	d.prepOnce.Do(func() {
		seed := d.seed
		d.seed = nil
		if d.prep != nil {
			return
		}
		var buf []byte
		switch trimmed := bytes.TrimLeft(d.raw, " \t\r\n"); {
		case seed != nil && seed.compact:
			buf = trimmed
		case seed != nil:
			buf = compactValid(trimmed)
		default:
			buf = canonicalText(trimmed)
		}
		if buf != nil {
			d.prep = newTextModel(buf)
			d.prep.base.sorted = d.sorted
			if seed != nil && seed.tables != nil {
				d.prep.base.tables = seed.tables
			}
		}
	})
	return d.prep
}

// validity is what a document knows about one compiled schema: whether it
// satisfies it, and the schema's analysis for incremental validation (nil
// when there is none), with which a commit on the footprint path carries
// the knowledge to the state after it.
type validity struct {
	ok  bool
	idx *schemaindex.Index
}

// maxCarriedSchemas bounds how many schemas a commit re-checks
// incrementally to carry their verdicts to the new state.
const maxCarriedSchemas = 8

// satisfies reports whether the document is valid against s, validating
// it whole the first time (the answer is kept), on every core where s's
// analysis idx (or nil) allows it (schemaindex.Index.SatisfiesWhole).
func (d *Document) satisfies(s *jsonschema.Schema, idx *schemaindex.Index) bool {
	if v, ok := d.valid.Load(s); ok {
		return v.(validity).ok
	}
	var ok bool
	if idx != nil && idx.Root() == s {
		// A parsed document's value not built yet is validated from its
		// lazy tree, its long arrays' elements from their text
		// (schemaindex.Index.SatisfiesWhole).
		v := d.Value
		if d.lazy == nil {
			v = d.tree
		}
		ok = idx.SatisfiesWhole(v())
	} else {
		f, err := validateSchema(s, d.Value())
		ok = err == nil && f == nil
	}
	d.valid.Store(s, validity{ok, idx})
	return ok
}

// carryValidity records on next, committed from d by changing the subtrees
// in changes (next's value being post), that it still satisfies the
// schemas d is known to satisfy, where incremental validation shows it
// (internal/schemaindex); done is the schema already recorded.
func (d *Document) carryValidity(next *Document, post any, changes []schemaindex.Change, done *jsonschema.Schema) {
	n := 0
	d.valid.Range(func(k, v any) bool {
		s, val := k.(*jsonschema.Schema), v.(validity)
		if s == done || !val.ok || val.idx == nil {
			return true
		}
		if n++; n > maxCarriedSchemas {
			return false
		}
		if val.idx.Holds(post, changes) {
			next.valid.Store(s, val)
		}
		return true
	})
}

// Get returns the value at pointer p, and whether it exists. Array tokens
// must be valid indexes (ParseIndex).
func (d *Document) Get(p Pointer) (any, bool) {
	v, err := getAt(d.tree(), p)
	if err != nil {
		return nil, false
	}
	return overlay.Plain(v), true
}

// MarshalJSON returns the document's text, so a Document embeds as itself
// in encoded records.
func (d *Document) MarshalJSON() ([]byte, error) { return d.Bytes(), nil }

// Lookup returns the value at pointer p inside a decoded JSON value (as
// Document.Value returns), and whether it exists.
func Lookup(v any, p Pointer) (any, bool) {
	got, err := getAt(v, p)
	return got, err == nil
}

// EqualJSON reports whether two decoded JSON values are equal: objects by
// members regardless of order, arrays element by element, numbers by
// exact value (1.0 equals 1 and 1e0) (RFC 6902 §4.6).
func EqualJSON(a, b any) bool { return equalJSON(a, b) }
