// Package jsonskip finds where a JSON value ends in a text, without
// decoding it: the runtime's canonical text (runtime/jsontext.go), the
// whole validation's element texts (schemaindex.Quick.AcceptsText) and
// the run directory's index of runs.jsonl (rundir/scan.go) step over
// members and elements with it (RFC 8259 §2-7: strings end at an
// unescaped quote; containers nest).
package jsonskip

import "bytes"

// String returns the index just after the JSON string that starts at
// b[i] (a '"'), or -1 when it does not end.
func String(b []byte, i int) int {
	j := i + 1
	for {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return -1
		}
		j += k
		n := 0
		for m := j - 1; m > i && b[m] == '\\'; m-- {
			n++
		}
		if n%2 == 0 {
			return j + 1
		}
		j++
	}
}

// Value returns the index just after the JSON value that starts at
// b[i], or -1 when b is not well formed there. b is valid JSON text; the
// checks only keep a malformed input from being misread.
func Value(b []byte, i int) int {
	if i >= len(b) {
		return -1
	}
	switch b[i] {
	case '"':
		return String(b, i)
	case '{', '[':
		depth := 0
		for j := i; j < len(b); j++ {
			switch b[j] {
			case '"':
				k := String(b, j)
				if k < 0 {
					return -1
				}
				j = k - 1
			case '{', '[':
				depth++
			case '}', ']':
				depth--
				if depth == 0 {
					return j + 1
				}
			}
		}
		return -1
	default:
		j := i
		for j < len(b) {
			switch c := b[j]; {
			case c == ',' || c == '}' || c == ']' || c == ':' || space(c):
				return j
			}
			j++
		}
		if j == i {
			return -1
		}
		return j
	}
}

// space reports whether c is JSON white space (RFC 8259 §2).
func space(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }
