package tools

import (
	"context"
	"fmt"

	"github.com/patchbench/patchbench/runtime"
)

// DefaultReadDepth is read_state's depth when a call gives none.
const DefaultReadDepth = 2

// ReadState is the tool read_state: the value at a JSON Pointer (RFC
// 6901) in the state as the actor may see it, the containers more than
// depth levels below the pointer shown as their sizes (Outline). A
// location the actor may not see answers as one that does not exist
// (CodeAbsent, the same text): both are computed from what it may see
// alone. A value that would show more than MaxResultBytes answers
// CodeTooLarge with its size.
var ReadState = Def{
	Spec: Spec{
		Name: "read_state",
		Description: "Read the shared state at a JSON Pointer (RFC 6901; \"\" is the whole state), as you may see it. " +
			"Containers deeper than depth levels below the pointer are shown as their sizes (\"{…N members}\", \"[…N items]\"). " +
			"A location you may not see answers as one that does not exist.",
		Parameters: fmt.Appendf(nil, `{"type":"object","properties":{"pointer":{"type":"string","description":"a JSON Pointer, e.g. \"/orders/0\"; \"\" for the whole state"},"depth":{"type":"integer","minimum":0,"description":"levels of containers shown below the pointer (default %d)"}},"required":["pointer"],"additionalProperties":false}`, DefaultReadDepth),
	},
	Usage: "read_state(pointer, depth) shows the state at a JSON Pointer as you may see it",
	Call:  readState,
}

// readArgs are read_state's arguments.
type readArgs struct {
	Pointer *string `json:"pointer"`
	Depth   *int    `json:"depth"`
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
	p, err := runtime.ParsePointer(*a.Pointer)
	if err != nil {
		return Result{Text: "not a JSON Pointer (RFC 6901)", Code: CodeBadPointer}, nil
	}
	v, ok := s.Lookup(p)
	if !ok {
		return Result{Text: "nothing at this pointer in the state as you see it", Code: CodeAbsent, Read: a.Pointer}, nil
	}
	b, err := runtime.EncodeIndent(Outline(v, depth), "")
	if err != nil {
		return Result{Text: "the value cannot be shown", Code: CodeTooLarge}, nil
	}
	if len(b) > MaxResultBytes {
		return Result{Text: fmt.Sprintf("the value has %d bytes as shown, more than %d; read a smaller depth or a deeper pointer", len(b), MaxResultBytes),
			Code: CodeTooLarge}, nil
	}
	return Result{Text: string(b), Read: a.Pointer}, nil
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
