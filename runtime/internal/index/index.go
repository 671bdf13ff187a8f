// Package index parses the reference tokens of a JSON Pointer that index
// an array (RFC 6901 §4, RFC 6902 §4). It is the one definition that the
// runtime's pointers (runtime.ParseIndex) and its internal packages share.
package index

import (
	"errors"
	"fmt"
	"strconv"
)

// ErrSyntax is wrapped by every error Parse returns.
var ErrSyntax = errors.New("invalid array index")

// Parse parses a reference token that indexes an array: "0" or a digit
// string without leading zeros. Signs, negatives, leading zeros,
// exponents, whitespace and "-" are rejected ("-" is handled by the
// callers that allow it). Errors wrap ErrSyntax.
func Parse(tok string) (int, error) {
	if tok == "" {
		return 0, fmt.Errorf("%w %q: empty", ErrSyntax, tok)
	}
	if len(tok) > 1 && tok[0] == '0' {
		return 0, fmt.Errorf("%w %q: leading zero", ErrSyntax, tok)
	}
	for i := 0; i < len(tok); i++ {
		if tok[i] < '0' || tok[i] > '9' {
			return 0, fmt.Errorf("%w %q: not a non-negative decimal integer", ErrSyntax, tok)
		}
	}
	n, err := strconv.Atoi(tok)
	if err != nil {
		return 0, fmt.Errorf("%w %q: out of range", ErrSyntax, tok)
	}
	return n, nil
}
