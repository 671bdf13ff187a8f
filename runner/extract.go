package runner

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
)

// ErrExtractLimit is ExtractProposal's error when finding the proposal
// would take more work than its bound (a few passes over the answer): an
// answer built to defeat the search. The runner rejects such an answer
// with limit_exceeded, as it does one that runs past the work-time limit.
var ErrExtractLimit = errors.New("finding the proposal in the answer takes more work than its bound")

// ExtractProposal finds the proposal in an actor's raw response: the whole
// text when it is JSON, else the first fenced ``` block when it is JSON,
// else the leftmost '{' at which a JSON object starts (the object alone,
// whatever follows it). It returns the bytes for the verifier, which
// decides whether they are a well-formed proposal; text with no JSON
// object is returned as it is, and the verifier rejects it as malformed (a
// legality failure, never a harness error).
//
// The search reads the answer a bounded number of times, whatever its
// shape (searchObject): its time is linear in the answer's length. ctx
// bounds it too: the error is ctx's when ctx ends first (the runner gives
// it the step's work-time limit), or ErrExtractLimit when the answer is
// built so that the search would need more than its budget of work.
func ExtractProposal(ctx context.Context, raw string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	trimmed := strings.TrimSpace(raw)
	if json.Valid([]byte(trimmed)) {
		return []byte(trimmed), nil
	}
	if i := strings.Index(trimmed, "```"); i >= 0 {
		rest := trimmed[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			block := strings.TrimSpace(rest[:j])
			if json.Valid([]byte(block)) {
				return []byte(block), nil
			}
		}
	}
	start, end, err := searchObject(ctx, trimmed, 4*len(trimmed)+1<<16)
	if err != nil {
		return nil, err
	}
	if start < 0 {
		return []byte(raw), nil
	}
	return []byte(trimmed[start:end]), nil
}

// searchObject returns the extent [start, end) of the JSON object that
// starts at the leftmost '{' of text where one starts (start is -1 when
// there is none): the object a json.Decoder reads from there, whatever
// follows it.
//
// Decoding from every '{' in turn takes time quadratic in the length of
// text ("{\"a\":[" repeated decodes to the end from each brace). Instead,
// a decode from a brace that fails at offset f also settles the braces
// it read as structure on the way (settle): one that it opened and that
// was still open at f fails at f too when decoded on its own (JSON is
// context-free, and the error is in the innermost object), and one whose
// object closed before f holds a valid object, with the same extent. A
// decode stopped by encoding/json's nesting limit is read again without
// the limit to settle them (settleDeep). Only the braces it read inside
// strings, and those after f, are decoded again. On ordinary answers each
// character is then read a bounded number of times; text built so that
// many braces inside strings each start a long decode spends the budget
// (bytes read, a few times the length of text), and the search stops with
// ErrExtractLimit. ctx is checked between decodes.
func searchObject(ctx context.Context, text string, budget int) (int, int, error) {
	failed := map[int]bool{} // braces known not to start an object
	objects := map[int]int{} // braces known to start one, to its end
	for i := strings.IndexByte(text, '{'); i >= 0; {
		if end, ok := objects[i]; ok {
			return i, end, nil
		}
		if !failed[i] {
			if err := ctx.Err(); err != nil {
				return -1, -1, err
			}
			end, f := decodeObject(text[i:])
			if end > 0 {
				return i, i + end, nil
			}
			if budget -= f; budget < 0 {
				return -1, -1, ErrExtractLimit
			}
			if !settle(text[i:i+f], i, failed, objects) {
				if budget -= settleDeep(text[i:], i, failed, objects); budget < 0 {
					return -1, -1, ErrExtractLimit
				}
			}
		}
		next := strings.IndexByte(text[i+1:], '{')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	return -1, -1, nil
}

// decodeObject decodes the JSON value at the start of s (which starts
// with '{') as json.Decoder does. It returns the value's length when it
// is an object, or 0 and the length of the prefix of s that is valid JSON
// text before the error (all of s when it ends too soon).
func decodeObject(s string) (end, failedAt int) {
	dec := json.NewDecoder(strings.NewReader(s))
	var m json.RawMessage
	err := dec.Decode(&m)
	if err == nil {
		if len(m) > 0 && m[0] == '{' {
			return int(dec.InputOffset()), 0
		}
		return 0, 1
	}
	var se *json.SyntaxError
	if errors.As(err, &se) && se.Offset >= 1 && se.Offset <= int64(len(s)) {
		// Offset counts the bytes read, the offending one included.
		return 0, max(1, int(se.Offset-1))
	}
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return 0, len(s)
	}
	return 0, len(s)
}

// maxDecodeDepth is encoding/json's limit on nesting.
const maxDecodeDepth = 10000

// settle records, for a decode from offset base that read prefix as
// valid JSON text and then failed, which braces it read as structure:
// those still open at the end fail on their own (failed), and those
// whose object closed hold one (objects, with its end). Braces inside
// strings are left undecided. It returns false, recording nothing, when
// the decode stopped at encoding/json's nesting limit, which a brace
// further in does not reach (settleDeep settles those).
func settle(prefix string, base int, failed map[int]bool, objects map[int]int) bool {
	var open []int
	depth := 0 // of objects and arrays, as the decoder counts it
	inString, escaped := false, false
	for k := 0; k < len(prefix); k++ {
		c := prefix[k]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[':
			depth++
		case c == ']':
			depth--
		case c == '{':
			depth++
			open = append(open, base+k)
		case c == '}' && len(open) > 0:
			depth--
			objects[open[len(open)-1]] = base + k + 1
			open = open[:len(open)-1]
		}
	}
	if depth >= maxDecodeDepth {
		return false
	}
	for _, p := range open {
		failed[p] = true
	}
	return true
}

// settleDeep settles the braces of s (which starts with '{' at offset
// base) for a decode that stopped at encoding/json's nesting limit: it
// reads s as JSON tokens, which have no such limit, to the end of the
// first value or the first syntax error. A brace whose object closed
// holds one when it nests no deeper than the limit, and fails otherwise;
// a brace still open at the end fails. It returns the bytes it read.
func settleDeep(s string, base int, failed map[int]bool, objects map[int]int) int {
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	type container struct {
		pos, depth int // depth: the nesting inside it, itself included
		object     bool
	}
	var stack []container
	for {
		tok, err := dec.Token()
		if err != nil {
			break
		}
		d, ok := tok.(json.Delim)
		if !ok {
			continue
		}
		pos := int(dec.InputOffset()) - 1
		if d == '{' || d == '[' {
			stack = append(stack, container{pos: pos, depth: 1, object: d == '{'})
			continue
		}
		c := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if c.object && c.depth <= maxDecodeDepth {
			objects[base+c.pos] = base + pos + 1
		} else if c.object {
			failed[base+c.pos] = true
		}
		if len(stack) == 0 {
			break
		}
		stack[len(stack)-1].depth = max(stack[len(stack)-1].depth, c.depth+1)
	}
	for _, c := range stack {
		if c.object {
			failed[base+c.pos] = true
		}
	}
	return int(dec.InputOffset())
}
