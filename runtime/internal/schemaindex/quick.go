package schemaindex

import (
	"bytes"
	"encoding/json"
	"reflect"

	"github.com/patchbench/patchbench/internal/jsonskip"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Quick acceptance for the whole validation (whole.go). Most
// elements of a state's long arrays are checked against schemas that say
// only which type a value has, which members an object requires and what
// the schemas of some members are (the benchmark's records:
// {"type":"object","required":[...],"properties":{"id":{"type":"string"}}}).
// For such a schema the library's verdict follows from a few map look-ups,
// without the validator's allocations; a Quick gives it. It only
// ever accepts: a value it does not accept is validated by the library,
// so a decision never rests on it but where the library would say the
// same.

// Quick is a schema made of type, required and properties only,
// each property's schema quick too; any means no type constraint.
type Quick struct {
	accept   bool // a true boolean schema
	types    uint8
	required []string
	props    map[string]*Quick
}

// Type bits of a Quick.
const (
	qNull uint8 = 1 << iota
	qBool
	qNumber
	qInteger
	qString
	qArray
	qObject
)

// quickFields are the fields of jsonschema.Schema a quick schema may have
// set: the library's bookkeeping, annotations (no effect on validity),
// and the three keywords it checks. Every other field must be zero.
var quickFields = map[string]bool{
	"up": true, "resource": true, "dynamicAnchors": true,
	"allPropsEvaluated": true, "allItemsEvaluated": true, "numItemsEvaluated": true,
	"DraftVersion": true, "Location": true, "ID": true, "Anchor": true,
	"Title": true, "Description": true, "Default": true, "Comment": true,
	"ReadOnly": true, "WriteOnly": true, "Examples": true, "Deprecated": true,
	"Bool": true, "Types": true, "Required": true, "Properties": true,
}

// NewQuick returns the quick form of s, or nil when s uses anything
// but type, required and properties (with quick schemas), or is nested
// deeper than a few levels.
func NewQuick(s *jsonschema.Schema) *Quick {
	return quickOf(s, 0)
}

func quickOf(s *jsonschema.Schema, depth int) *Quick {
	if s == nil || depth > 8 {
		return nil
	}
	rv := reflect.ValueOf(s).Elem()
	rt := rv.Type()
	for i := range rt.NumField() {
		if !quickFields[rt.Field(i).Name] && !rv.Field(i).IsZero() {
			return nil
		}
	}
	q := &Quick{}
	if s.Bool != nil {
		if !*s.Bool || s.Types != nil || len(s.Required) > 0 || len(s.Properties) > 0 {
			return nil
		}
		q.accept = true
		return q
	}
	if s.Types != nil {
		for _, t := range s.Types.ToStrings() {
			switch t {
			case "null":
				q.types |= qNull
			case "boolean":
				q.types |= qBool
			case "number":
				q.types |= qNumber
			case "integer":
				q.types |= qInteger
			case "string":
				q.types |= qString
			case "array":
				q.types |= qArray
			case "object":
				q.types |= qObject
			default:
				return nil
			}
		}
	}
	q.required = s.Required
	if len(s.Properties) > 0 {
		q.props = make(map[string]*Quick, len(s.Properties))
		for name, sub := range s.Properties {
			if q.props[name] = quickOf(sub, depth+1); q.props[name] == nil {
				return nil
			}
		}
	}
	return q
}

// accepts reports that v certainly satisfies the schema; false means the
// library must decide.
func (q *Quick) Accepts(v any) bool {
	if q.accept {
		return true
	}
	var t uint8
	switch v.(type) {
	case nil:
		t = qNull
	case bool:
		t = qBool
	case json.Number:
		t = qNumber
	case string:
		t = qString
	case []any:
		t = qArray
	case map[string]any:
		t = qObject
	default:
		return false // the library's to judge
	}
	if q.types != 0 && q.types&t == 0 {
		return false // a number against "integer" alone, or a type error
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return true
	}
	for _, name := range q.required {
		if _, ok := obj[name]; !ok {
			return false
		}
	}
	if len(q.props) <= len(obj) {
		for name, sub := range q.props {
			if m, ok := obj[name]; ok && !sub.Accepts(m) {
				return false
			}
		}
	} else {
		for name, m := range obj {
			if sub := q.props[name]; sub != nil && !sub.Accepts(m) {
				return false
			}
		}
	}
	return true
}

// AcceptsText is Accepts on a value's text, b: compact JSON text (no
// white space outside strings) that is valid, as a parsed state's
// canonical text is. It reads the names of an object's members and the
// first byte of each value it looks at, and builds nothing; an object
// with a member name spelled with escapes is left to the library (false),
// as is anything else Accepts would leave.
func (q *Quick) AcceptsText(b []byte) bool {
	if q.accept {
		return true
	}
	if len(b) == 0 {
		return false
	}
	var t uint8
	switch b[0] {
	case 'n':
		t = qNull
	case 't', 'f':
		t = qBool
	case '"':
		t = qString
	case '[':
		t = qArray
	case '{':
		t = qObject
	default:
		t = qNumber
	}
	if q.types != 0 && q.types&t == 0 {
		return false
	}
	if t != qObject {
		return true
	}
	if len(q.required) > 64 {
		return false
	}
	var found uint64
	i := 1
	if i < len(b) && b[i] != '}' {
		for {
			if i >= len(b) || b[i] != '"' {
				return false
			}
			k := jsonskip.String(b, i)
			if k < 0 || k >= len(b) || b[k] != ':' {
				return false
			}
			name := b[i+1 : k-1]
			if bytes.IndexByte(name, '\\') >= 0 {
				return false
			}
			j := jsonskip.Value(b, k+1)
			if j < 0 || j >= len(b) {
				return false
			}
			for r, want := range q.required {
				if want == string(name) {
					found |= 1 << r
				}
			}
			if sub := q.props[string(name)]; sub != nil && !sub.AcceptsText(b[k+1:j]) {
				return false
			}
			if b[j] != ',' {
				break
			}
			i = j + 1
		}
	}
	return found == 1<<len(q.required)-1
}
