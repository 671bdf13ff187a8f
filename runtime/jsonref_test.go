package runtime

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"
)

// decodeStrictRef is the strict decoder ParseDocument used before the
// lazy tree (a json.Decoder read token by token), kept unchanged as the
// reference of the differential tests of the one-pass parser
// (jsonparse.go). It decodes exactly one JSON value (RFC 8259) from b,
// keeping numbers as json.Number. It rejects text that is not UTF-8, duplicate
// member names, nesting deeper than maxDepth containers, numbers outside
// the supported range (checkNumber), and anything after the value but
// white space. NaN and Infinity are not JSON and are rejected as syntax
// errors.
func decodeStrictRef(b []byte, maxDepth int) (any, error) {
	v, _, err := decodeStrictDepthRef(b, maxDepth)
	return v, err
}

// decodeStrictDepthRef is decodeStrictRef that also returns the depth of the
// deepest value (the root is at depth 0, its members at 1).
func decodeStrictDepthRef(b []byte, maxDepth int) (any, int, error) {
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, size := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return nil, 0, syntaxErrorAt(b, int64(off), "invalid UTF-8")
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	sd := refDecoder{d: d, src: b, maxDepth: maxDepth}
	v, err := sd.value(0)
	if err != nil {
		return nil, 0, err
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, 0, syntaxErrorAt(b, d.InputOffset(), "data after the JSON value")
	}
	return v, sd.deepest, nil
}

type refDecoder struct {
	d        *json.Decoder
	src      []byte
	maxDepth int
	deepest  int // depth of the deepest value read
}

func (s *refDecoder) fail(err error) error {
	var se *json.SyntaxError
	if errors.As(err, &se) {
		// A Decoder's offsets count from different origins (the input,
		// or the start of the current token); a check of the whole
		// text counts from its start, the offending byte included.
		var whole *json.SyntaxError
		if errors.As(json.Unmarshal(s.src, new(any)), &whole) {
			return syntaxErrorAt(s.src, whole.Offset-1, whole.Error())
		}
		return syntaxErrorAt(s.src, se.Offset, se.Error())
	}
	if err == io.EOF || errors.Is(err, io.ErrUnexpectedEOF) {
		return syntaxErrorAt(s.src, int64(len(s.src)), "unexpected end of JSON input")
	}
	return syntaxErrorAt(s.src, s.d.InputOffset(), err.Error())
}

func (s *refDecoder) value(depth int) (any, error) {
	s.deepest = max(s.deepest, depth)
	tok, err := s.d.Token()
	if err != nil {
		return nil, s.fail(err)
	}
	switch t := tok.(type) {
	case json.Delim:
		if depth+1 > s.maxDepth {
			return nil, syntaxErrorAt(s.src, s.d.InputOffset()-1, fmt.Sprintf("nesting deeper than %d levels", s.maxDepth))
		}
		if t == '[' {
			arr := []any{}
			for s.d.More() {
				v, err := s.value(depth + 1)
				if err != nil {
					return nil, err
				}
				arr = append(arr, v)
			}
			if _, err := s.d.Token(); err != nil {
				return nil, s.fail(err)
			}
			return arr, nil
		}
		obj := map[string]any{}
		for s.d.More() {
			kt, err := s.d.Token()
			if err != nil {
				return nil, s.fail(err)
			}
			key := kt.(string) // the decoder guarantees a string key here
			if _, dup := obj[key]; dup {
				return nil, syntaxErrorAt(s.src, s.d.InputOffset(), fmt.Sprintf("duplicate member name %q", key))
			}
			v, err := s.value(depth + 1)
			if err != nil {
				return nil, err
			}
			obj[key] = v
		}
		if _, err := s.d.Token(); err != nil {
			return nil, s.fail(err)
		}
		return obj, nil
	default:
		if n, ok := t.(json.Number); ok {
			if err := checkNumber(n); err != nil {
				return nil, syntaxErrorAt(s.src, s.d.InputOffset(), err.Error())
			}
		}
		return t, nil // nil, bool, string, json.Number
	}
}
