package runtime

import (
	"encoding/json"
	"fmt"
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
type Document struct {
	raw   []byte
	value any
}

// ParseDocument decodes one JSON value strictly: it rejects invalid JSON,
// duplicate member names, nesting deeper than DefaultMaxDepth and trailing
// data, with a *SyntaxError giving line and column. The bytes are copied.
func ParseDocument(b []byte) (*Document, error) {
	return parseDocument(b, DefaultMaxDepth)
}

func parseDocument(b []byte, maxDepth int) (*Document, error) {
	v, err := decodeStrict(b, maxDepth)
	if err != nil {
		return nil, err
	}
	return &Document{raw: append([]byte(nil), b...), value: v}, nil
}

// NewDocument builds a Document from a decoded JSON value made of the
// types listed in the package documentation (json.Number for numbers). The
// value is retained and must not be modified afterwards.
func NewDocument(v any) (*Document, error) {
	if err := checkValue(v, 0); err != nil {
		return nil, err
	}
	raw, err := encodeJSON(v)
	if err != nil {
		return nil, err
	}
	return &Document{raw: raw, value: v}, nil
}

func checkValue(v any, depth int) error {
	if depth > DefaultMaxDepth {
		return fmt.Errorf("value nested deeper than %d levels", DefaultMaxDepth)
	}
	switch x := v.(type) {
	case nil, bool, string:
	case json.Number:
		if _, ok := normalizeNumber(string(x)); !ok {
			return fmt.Errorf("invalid number %q", string(x))
		}
		if err := checkNumber(x); err != nil {
			return err
		}
	case []any:
		for _, e := range x {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range x {
			if err := checkValue(e, depth+1); err != nil {
				return err
			}
		}
	default:
		return fmt.Errorf("unsupported value type %T", v)
	}
	return nil
}

// Bytes returns the document's JSON text. The caller must not modify it.
func (d *Document) Bytes() []byte { return d.raw }

// Value returns the decoded document. The caller must not modify it.
func (d *Document) Value() any { return d.value }

// Get returns the value at pointer p, and whether it exists. Array tokens
// must be valid indexes (ParseIndex).
func (d *Document) Get(p Pointer) (any, bool) {
	v, err := getAt(d.value, p)
	return v, err == nil
}

// MarshalJSON returns the document's text, so a Document embeds as itself
// in encoded records.
func (d *Document) MarshalJSON() ([]byte, error) { return d.raw, nil }

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
