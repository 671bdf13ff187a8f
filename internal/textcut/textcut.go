// Package textcut cuts text to a number of bytes without splitting a
// UTF-8 sequence: what the actors keep of an over-long answer, what the
// runner keeps of a tool call's text and what a run record keeps of a
// message or a pointer.
package textcut

import "unicode/utf8"

// Cut returns the longest prefix of s of at most n bytes (n >= 0) that
// does not end inside a UTF-8 sequence. It steps back at most
// utf8.UTFMax-1 bytes from n, down to the first byte (a sequence that
// starts at 0 and runs past n leaves ""): where s is not valid UTF-8
// there (a run of continuation bytes), the cut is at n, so that a bad
// text still keeps its first n bytes.
func Cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for k := n; k > n-utf8.UTFMax && k >= 0; k-- {
		if utf8.RuneStart(s[k]) {
			return s[:k]
		}
	}
	return s[:n]
}
