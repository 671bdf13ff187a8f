package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/patchbench/patchbench/runtime"
)

// DefaultReadDepth is read_state's depth when a call gives none.
const DefaultReadDepth = 2

// ReadState is the tool read_state: the value at a JSON Pointer (RFC
// 6901) in the state as the actor may see it, the containers more than
// depth levels below the pointer shown as their sizes (Outline). A
// location the actor may not see answers as one that does not exist
// (CodeAbsent, the same text): both are computed from what it may see
// alone.
//
// With offset or limit, or when the value would show more than the
// result limit (Step.ResultLimit), an array or object answers a page
// (see page): a slice of its items, or of its members sorted by name,
// each shown one level less deep, with the count and how to read on.
// At the default arguments a value within the limit answers as it
// always has: its plain JSON. A scalar over the limit answers
// CodeTooLarge with its size.
var ReadState = Def{
	Spec: Spec{
		Name: "read_state",
		Description: "Read the shared state at a JSON Pointer (RFC 6901; \"\" is the whole state), as you may see it. " +
			"Containers deeper than depth levels below the pointer are shown as their sizes (\"{…N members}\", \"[…N items]\"). " +
			"With offset or limit, or when the value is over the result limit, an array or object answers a page: " +
			"{\"total\", \"offset\", \"shown\", \"note\", \"items\": [...]} (for an object \"members\", sorted by name), the note saying how to read on. " +
			"A location you may not see answers as one that does not exist.",
		Parameters: fmt.Appendf(nil, `{"type":"object","properties":{"pointer":{"type":"string","description":"a JSON Pointer, e.g. \"/orders/0\"; \"\" for the whole state"},"depth":{"type":"integer","minimum":0,"description":"levels of containers shown below the pointer (default %d)"},"offset":{"type":"integer","minimum":0,"description":"the first item (array) or member (object, by name) of a page (default 0)"},"limit":{"type":"integer","minimum":1,"description":"the most items or members of a page (default: as many as fit)"}},"required":["pointer"],"additionalProperties":false}`, DefaultReadDepth),
	},
	Usage: "read_state(pointer, depth, offset, limit) shows the state at a JSON Pointer as you may see it (a long array or object a page at a time)",
	Call:  readState,
}

// readArgs are read_state's arguments.
type readArgs struct {
	Pointer *string `json:"pointer"`
	Depth   *int    `json:"depth"`
	Offset  *int    `json:"offset"`
	Limit   *int    `json:"limit"`
}

func readState(_ context.Context, s Step, args string) (Result, error) {
	var a readArgs
	if err := decodeArgs(args, &a); err != nil {
		return Result{Text: err.Error(), Code: CodeMalformed}, nil
	}
	if a.Pointer == nil {
		return Result{Text: `"pointer" is required`, Code: CodeMalformed}, nil
	}
	depth := DefaultReadDepth
	if a.Depth != nil {
		if *a.Depth < 0 {
			return Result{Text: `"depth" must be at least 0`, Code: CodeMalformed}, nil
		}
		depth = *a.Depth
	}
	if msg := checkPaging(a.Offset, a.Limit); msg != "" {
		return Result{Text: msg, Code: CodeMalformed}, nil
	}
	p, err := runtime.ParsePointer(*a.Pointer)
	if err != nil {
		return Result{Text: "not a JSON Pointer (RFC 6901)", Code: CodeBadPointer}, nil
	}
	v, ok := s.Lookup(p)
	if !ok {
		return Result{Text: "nothing at this pointer in the state as you see it", Code: CodeAbsent, Read: a.Pointer}, nil
	}
	limit := resultLimit(s)
	paging := a.Offset != nil || a.Limit != nil
	if !paging {
		if b, fits := outlineWithin(v, depth, limit); fits {
			return Result{Text: string(b), Read: a.Pointer}, nil
		}
	}
	pg, ok := readPage(*a.Pointer, p, v, depth, a.Offset, a.Limit)
	if !ok {
		if paging {
			return Result{Text: fmt.Sprintf("offset and limit page an array or an object; the value here is %s", runtime.ATypeName(v)), Code: CodeMalformed}, nil
		}
		n := 0
		if b, err := encode(v); err == nil {
			n = len(b)
		}
		return Result{Text: fmt.Sprintf("the value is %s of %d bytes, more than %d, the result limit; it cannot be shown whole", runtime.ATypeName(v), n, limit),
			Code: CodeTooLarge}, nil
	}
	return Result{Text: pg.build(limit), Read: a.Pointer}, nil
}

// checkPaging is the complaint about a call's offset and limit, "" when
// they are good.
func checkPaging(offset, limit *int) string {
	if offset != nil && *offset < 0 {
		return `"offset" must be at least 0`
	}
	if limit != nil && *limit < 1 {
		return `"limit" must be at least 1`
	}
	return ""
}

// readPage is the page of read_state at pointer (p parsed) on v, a
// container; ok is false when v is a scalar.
func readPage(pointer string, p runtime.Pointer, v any, depth int, offset, limit *int) (page, bool) {
	below := max(depth-1, 0)
	pg := page{Offset: deref(offset, 0)}
	hint := func(token string) string {
		return fmt.Sprintf("read it at the pointer %q or with a smaller depth", p.Append(token).String())
	}
	switch x := v.(type) {
	case []any:
		pg.What, pg.Total = "items", len(x)
		pg.Elem = func(i, room int) []byte {
			b, _ := outlineWithin(x[i], below, room)
			return b
		}
		pg.TooLarge = func(i int) string { return hint(strconv.Itoa(i)) }
	case map[string]any:
		keys := slices.Sorted(maps.Keys(x))
		pg.What, pg.Total, pg.Object = "members", len(x), true
		pg.Elem = func(i, room int) []byte {
			k := append(quote(keys[i]), ':')
			b, ok := outlineWithin(x[keys[i]], below, room-len(k))
			if !ok {
				return nil
			}
			return append(k, b...)
		}
		pg.TooLarge = func(i int) string { return hint(keys[i]) }
	default:
		return page{}, false
	}
	pg.Want = deref(limit, pg.Total)
	pg.Next = func(i int) string {
		return fmt.Sprintf("read_state with pointer %s and offset %d", quote(pointer), i)
	}
	return pg, true
}

// outlineWithin is Outline(v, depth)'s JSON text and true when it has
// at most limit bytes; false, without building or encoding all of a
// large value, when it has more.
func outlineWithin(v any, depth, limit int) ([]byte, bool) {
	if outlineSize(v, depth, limit) > limit {
		return nil, false
	}
	b, err := encode(Outline(v, depth))
	if err != nil || len(b) > limit {
		return nil, false
	}
	return b, true
}

// outlineSize is a lower bound of the length of Outline(v, depth)'s
// JSON text, counted only until it passes stop.
func outlineSize(v any, depth, stop int) int {
	switch x := v.(type) {
	case map[string]any:
		if depth <= 0 {
			return len(fmt.Sprintf(`"{…%d members}"`, len(x)))
		}
		n := 2
		for k, c := range x {
			n += len(k) + 4 + outlineSize(c, depth-1, stop-n)
			if n > stop {
				return n
			}
		}
		return n
	case []any:
		if depth <= 0 {
			return len(fmt.Sprintf(`"[…%d items]"`, len(x)))
		}
		n := 2
		for _, c := range x {
			n += 1 + outlineSize(c, depth-1, stop-n)
			if n > stop {
				return n
			}
		}
		return n
	case string:
		return len(x) + 2
	case json.Number:
		return len(x)
	}
	return 4
}

// deref is *p, or def when p is nil.
func deref(p *int, def int) int {
	if p == nil {
		return def
	}
	return *p
}

// Outline is v with the containers depth levels below it shown as their
// sizes: "{…N members}" for an object, "[…N items]" for an array (depth
// 0 shows v's own size). Scalars are as they are. The prompt of
// progressive disclosure shows the view's outline at depth 1.
func Outline(v any, depth int) any {
	switch x := v.(type) {
	case map[string]any:
		if depth <= 0 {
			return fmt.Sprintf("{…%d members}", len(x))
		}
		out := make(map[string]any, len(x))
		for k, c := range x {
			out[k] = Outline(c, depth-1)
		}
		return out
	case []any:
		if depth <= 0 {
			return fmt.Sprintf("[…%d items]", len(x))
		}
		out := make([]any, len(x))
		for i, c := range x {
			out[i] = Outline(c, depth-1)
		}
		return out
	}
	return v
}
