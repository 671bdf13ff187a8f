package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// libraryOp reports whether the apply library (evanphx/json-patch/v5)
// applies op. It is given every operation that changes the document
// except the cases it is known to get wrong, which the reference semantics
// (simulate) apply instead: test (it passes a test of a missing path
// against null and fails on the member name ""), any operation whose path
// or from is the whole document (it cannot replace a scalar document and
// treats a move or copy to "" as the member ""), any pointer with an empty
// member name (it skips or misreads them), and a move onto itself (a
// no-op it mishandles for empty names).
func libraryOp(op Operation) bool {
	if op.Op == OpTest || len(op.Path) == 0 || hasEmptyToken(op.Path) {
		return false
	}
	if op.Op == OpMove || op.Op == OpCopy {
		return len(op.From) > 0 && !hasEmptyToken(op.From) && !(op.Op == OpMove && op.From.Equal(op.Path))
	}
	return true
}

func hasEmptyToken(p Pointer) bool {
	for _, t := range p {
		if t == "" {
			return true
		}
	}
	return false
}

// applyBatch applies a run of operations the library handles (libraryOp)
// to the document text as one patch with evanphx/json-patch/v5; an empty
// batch leaves doc as it is.
func applyBatch(doc []byte, batch []Operation, opts *jsonpatch.ApplyOptions) ([]byte, error) {
	if len(batch) == 0 {
		return doc, nil
	}
	text, err := encodeJSON(batch)
	if err != nil {
		return nil, err
	}
	p, err := jsonpatch.DecodePatch(text)
	if err != nil {
		return nil, err
	}
	return p.ApplyWithOptions(doc, opts)
}

// applyLibrary applies ops to the document text with evanphx/json-patch/v5
// under strict options (no negative indexes, a copy-size limit, no HTML
// escaping). Runs of operations the library handles go to it as one
// patch, and untouched values keep their exact text; after any other
// operation the text is the reference state recorded in roots, encoded
// anew (numbers keep their text; member order and string escapes may
// change).
func applyLibrary(raw []byte, ops []Operation, roots []any, lim Limits) ([]byte, error) {
	opts := libraryOptions(lim)
	doc := bytes.TrimLeft(raw, " \t\r\n") // the library tells arrays by the first byte
	var batch []Operation
	flush := func() (err error) {
		doc, err = applyBatch(doc, batch, opts)
		batch = batch[:0]
		return err
	}
	for i, op := range ops {
		if libraryOp(op) {
			batch = append(batch, op)
			continue
		}
		if err := flush(); err != nil {
			return nil, err
		}
		if op.Op == OpTest {
			continue
		}
		text, err := encodeJSON(roots[i])
		if err != nil {
			return nil, err
		}
		doc = text
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return doc, nil
}

// libraryOptions are the strict options under which the apply library
// runs: no negative indexes, the copy-size limit, no HTML escaping, no
// missing paths tolerated on remove, no paths created on add.
func libraryOptions(lim Limits) *jsonpatch.ApplyOptions {
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = lim.MaxCopyBytes
	opts.EscapeHTML = false
	opts.AllowMissingPathOnRemove = false
	opts.EnsurePathExistsOnAdd = false
	return opts
}

// isCopyLimit reports whether err is the library's copy-size limit.
func isCopyLimit(err error) bool {
	var e *jsonpatch.AccumulatedCopySizeError
	return errors.As(err, &e)
}

// decodeFast decodes JSON text the apply library produced (valid, without
// duplicate names), keeping numbers as json.Number.
func decodeFast(b []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, fmt.Errorf("decoding the applied document: %w", err)
	}
	return v, nil
}

// crossCheck compares the library's result with the reference semantics
// over the whole document, and checks its nesting depth. It returns the
// first location where they differ (ok false), or tooDeep when the
// document nests deeper than maxDepth.
func crossCheck(ref, got any, maxDepth int) (at Pointer, ok, tooDeep bool) {
	var walk func(a, b any, depth int) bool
	path := Pointer{}
	walk = func(a, b any, depth int) bool {
		if depth > maxDepth {
			tooDeep = true
			return false
		}
		switch x := a.(type) {
		case map[string]any:
			y, isMap := b.(map[string]any)
			if !isMap || len(x) != len(y) {
				return false
			}
			for k, xv := range x {
				yv, found := y[k]
				path = append(path, k)
				if !found || !walk(xv, yv, depth+1) {
					return false
				}
				path = path[:len(path)-1]
			}
			return true
		case []any:
			y, isArr := b.([]any)
			if !isArr || len(x) != len(y) {
				return false
			}
			for i := range x {
				path = append(path, strconv.Itoa(i))
				if !walk(x[i], y[i], depth+1) {
					return false
				}
				path = path[:len(path)-1]
			}
			return true
		default:
			return equalJSON(a, b)
		}
	}
	if walk(ref, got, 0) {
		return nil, true, false
	}
	return path.Append(), false, tooDeep
}
