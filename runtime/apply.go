package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	jsonpatch "github.com/evanphx/json-patch/v5"
)

// libraryOp reports whether the apply library (evanphx/json-patch/v5)
// applies op. It is given every operation that changes the document
// except the cases it is known to get wrong, which the reference semantics
// (simulate) apply instead: test (it passes a test of a missing path
// against null and fails on the member name ""), any operation whose path
// or from is the whole document (it cannot replace a scalar document and
// treats a move or copy to "" as the member ""), and pointers with an
// empty member name before the last token (it skips them).
func libraryOp(op Operation) bool {
	if op.Op == OpTest || len(op.Path) == 0 || emptyInner(op.Path) {
		return false
	}
	if op.Op == OpMove || op.Op == OpCopy {
		return len(op.From) > 0 && !emptyInner(op.From)
	}
	return true
}

func emptyInner(p Pointer) bool {
	for _, t := range p[:len(p)-1] {
		if t == "" {
			return true
		}
	}
	return false
}

// applyLibrary applies ops to the document text with evanphx/json-patch/v5
// under strict options (no negative indexes, a copy-size limit, no HTML
// escaping). Runs of operations the library handles go to it as one
// patch; after any other operation the text is the reference state
// recorded in roots. Untouched values keep their exact text.
func applyLibrary(raw []byte, ops []Operation, roots []any, lim Limits) ([]byte, error) {
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = lim.MaxCopyBytes
	opts.EscapeHTML = false
	opts.AllowMissingPathOnRemove = false
	opts.EnsurePathExistsOnAdd = false

	doc := bytes.TrimLeft(raw, " \t\r\n") // the library tells arrays by the first byte
	var batch []Operation
	flush := func() error {
		if len(batch) == 0 {
			return nil
		}
		text, err := encodeJSON(batch)
		if err != nil {
			return err
		}
		p, err := jsonpatch.DecodePatch(text)
		if err != nil {
			return err
		}
		if doc, err = p.ApplyWithOptions(doc, opts); err != nil {
			return err
		}
		batch = batch[:0]
		return nil
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
// at every location the patch wrote. It returns the first location where
// they differ.
func crossCheck(ref, got any, t *trace) (Pointer, bool) {
	same := func(p Pointer) bool {
		a, errA := getAt(ref, p)
		b, errB := getAt(got, p)
		if errA != nil || errB != nil {
			return (errA != nil) == (errB != nil)
		}
		return equalJSON(a, b)
	}
	for _, w := range t.writes {
		if !same(w.ptr) {
			return w.ptr, false
		}
	}
	seen := map[string]bool{}
	for _, s := range t.spans {
		key := s.array.String()
		if seen[key] {
			continue
		}
		seen[key] = true
		if !same(s.array) {
			return s.array, false
		}
	}
	return nil, true
}
