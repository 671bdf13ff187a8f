package runtime

import "fmt"

// The six operations of RFC 6902 §4, spelled exactly (member names and
// op values are case-sensitive).
const (
	OpAdd     = "add"
	OpRemove  = "remove"
	OpReplace = "replace"
	OpMove    = "move"
	OpCopy    = "copy"
	OpTest    = "test"
)

// Operation is one decoded JSON Patch operation (RFC 6902 §4). From is
// set for move and copy only; Value for add, replace and test only (a
// JSON null value is nil).
type Operation struct {
	Op    string
	Path  Pointer
	From  Pointer
	Value any
}

// MarshalJSON encodes the operation with the members its op requires.
func (o Operation) MarshalJSON() ([]byte, error) {
	m := map[string]any{"op": o.Op, "path": o.Path.String()}
	switch o.Op {
	case OpMove, OpCopy:
		m["from"] = o.From.String()
	case OpAdd, OpReplace, OpTest:
		m["value"] = o.Value
	}
	return encodeJSON(m)
}

// UnmarshalJSON decodes an operation as MarshalJSON writes it, keeping
// numbers as their exact text (json.Number): a value any proposal may
// hold (1e400, a 400-digit integer) reads back as it was written.
func (o *Operation) UnmarshalJSON(b []byte) error {
	v, err := decodeStrict(b, maxRecordDepth)
	if err != nil {
		return err
	}
	op, err := decodeOperation(v)
	if err != nil {
		return err
	}
	*o = op
	return nil
}

// maxRecordDepth bounds the nesting of an operation read back from a
// record: far above any contract's MaxDepth, below encoding/json's own
// limit.
const maxRecordDepth = 9000

// Proposal is what an actor returns for a step: a JSON Patch and an
// optional free-text note.
type Proposal struct {
	Patch []Operation `json:"patch"`
	Note  string      `json:"note"`
}

// MalformedError explains why proposal bytes are not a well-formed
// proposal. Op is the 0-based index of the offending operation, or -1
// when the fault is not inside one operation. It becomes the
// malformed_patch code of the parse gate.
type MalformedError struct {
	Op  int
	Msg string
}

func (e *MalformedError) Error() string {
	if e.Op >= 0 {
		return fmt.Sprintf("operation %d: %s", e.Op, e.Msg)
	}
	return e.Msg
}

// DecodeProposal decodes proposal bytes, exactly once and with one
// decoder: either a JSON Patch array, or an object {"patch": [...],
// "note": "..."}. It returns a *MalformedError for invalid JSON, trailing
// data, NaN or Infinity, duplicate member names, nesting deeper than
// maxDepth (DefaultMaxDepth when 0), an op that is not one of the six
// exactly as spelled in RFC 6902, a missing or non-string "path", a
// missing "from" (copy, move), a missing "value" (add, replace, test), or
// a pointer that is not RFC 6901 syntax. Members a definition does not
// name are ignored (RFC 6902 §4).
func DecodeProposal(b []byte, maxDepth int) (*Proposal, error) {
	if maxDepth <= 0 {
		maxDepth = DefaultMaxDepth
	}
	v, err := decodeStrict(b, maxDepth)
	if err != nil {
		return nil, &MalformedError{Op: -1, Msg: "invalid JSON: " + err.Error()}
	}
	var ops []any
	p := &Proposal{}
	switch x := v.(type) {
	case []any:
		ops = x
	case map[string]any:
		pv, ok := x["patch"]
		if !ok {
			return nil, &MalformedError{Op: -1, Msg: `proposal object has no "patch" member`}
		}
		if ops, ok = pv.([]any); !ok {
			return nil, &MalformedError{Op: -1, Msg: fmt.Sprintf(`"patch" is a %s, not an array`, TypeName(pv))}
		}
		if nv, ok := x["note"]; ok {
			if p.Note, ok = nv.(string); !ok {
				return nil, &MalformedError{Op: -1, Msg: fmt.Sprintf(`"note" is a %s, not a string`, TypeName(nv))}
			}
		}
	default:
		return nil, &MalformedError{Op: -1, Msg: fmt.Sprintf("a proposal is a JSON Patch array or an object with \"patch\", not a %s", TypeName(v))}
	}
	p.Patch = make([]Operation, 0, len(ops))
	for i, ov := range ops {
		op, err := decodeOperation(ov)
		if err != nil {
			return nil, &MalformedError{Op: i, Msg: err.Error()}
		}
		p.Patch = append(p.Patch, op)
	}
	return p, nil
}

func decodeOperation(v any) (Operation, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return Operation{}, fmt.Errorf("an operation is an object, not a %s", TypeName(v))
	}
	var op Operation
	kind, ok := m["op"]
	if !ok {
		return op, fmt.Errorf(`missing "op"`)
	}
	if op.Op, ok = kind.(string); !ok {
		return op, fmt.Errorf(`"op" is a %s, not a string`, TypeName(kind))
	}
	switch op.Op {
	case OpAdd, OpRemove, OpReplace, OpMove, OpCopy, OpTest:
	default:
		return op, fmt.Errorf("unknown op %q (ops are add, remove, replace, move, copy, test, in lower case)", op.Op)
	}
	var err error
	if op.Path, err = pointerMember(m, "path"); err != nil {
		return op, err
	}
	switch op.Op {
	case OpMove, OpCopy:
		if op.From, err = pointerMember(m, "from"); err != nil {
			return op, err
		}
	case OpAdd, OpReplace, OpTest:
		val, ok := m["value"]
		if !ok {
			return op, fmt.Errorf(`%s without "value"`, op.Op)
		}
		op.Value = val
	}
	return op, nil
}

func pointerMember(m map[string]any, name string) (Pointer, error) {
	v, ok := m[name]
	if !ok {
		return nil, fmt.Errorf("missing %q", name)
	}
	s, ok := v.(string)
	if !ok {
		return nil, fmt.Errorf("%q is a %s, not a string", name, TypeName(v))
	}
	p, err := ParsePointer(s)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", name, err)
	}
	return p, nil
}
