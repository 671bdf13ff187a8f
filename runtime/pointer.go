package runtime

import (
	"errors"
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/runtime/internal/index"
)

// Pointer is a parsed JSON Pointer (RFC 6901): the sequence of its
// reference tokens, unescaped. The empty Pointer (no tokens) is the whole
// document. A Pointer is compared token by token, never by string prefix,
// so /a never covers /ab and /a~1b is the single member name "a/b".
type Pointer []string

// ErrPointerSyntax is wrapped by every error ParsePointer returns.
var ErrPointerSyntax = errors.New("invalid JSON Pointer")

// ParsePointer parses the string form of a JSON Pointer (RFC 6901 §3):
// either "" or a sequence of "/"-prefixed reference tokens in which "~"
// appears only as "~0" (for "~") or "~1" (for "/"). It rejects a non-empty
// pointer without a leading "/" (including URI fragments such as "#/a") and
// any other use of "~". Array-index syntax is not checked here: whether a
// token indexes an array depends on the document (see ParseIndex).
//
// Errors wrap ErrPointerSyntax and name the byte offset of the fault.
func ParsePointer(s string) (Pointer, error) {
	if s == "" {
		return Pointer{}, nil
	}
	if s[0] != '/' {
		return nil, fmt.Errorf("%w %q: must be empty or start with \"/\"", ErrPointerSyntax, s)
	}
	n := strings.Count(s, "/")
	p := make(Pointer, 0, n)
	start := 1
	for i := 1; i <= len(s); i++ {
		if i < len(s) && s[i] != '/' {
			if s[i] == '~' && (i+1 >= len(s) || (s[i+1] != '0' && s[i+1] != '1')) {
				return nil, fmt.Errorf("%w %q: \"~\" at byte %d is not followed by 0 or 1", ErrPointerSyntax, s, i)
			}
			continue
		}
		p = append(p, UnescapeToken(s[start:i]))
		start = i + 1
	}
	return p, nil
}

// MustPointer is ParsePointer for constants known to be valid; it panics
// on a syntax error. Use it in tests and package-level variables only.
func MustPointer(s string) Pointer {
	p, err := ParsePointer(s)
	if err != nil {
		panic(err)
	}
	return p
}

// EscapeToken escapes one reference token: "~" becomes "~0" and "/"
// becomes "~1" (RFC 6901 §3).
func EscapeToken(tok string) string {
	if !strings.ContainsAny(tok, "~/") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~", "~0"), "/", "~1")
}

// UnescapeToken reverses EscapeToken: "~1" becomes "/" and then "~0"
// becomes "~" (RFC 6901 §4, in that order). It assumes a token that
// ParsePointer accepted.
func UnescapeToken(tok string) string {
	if !strings.Contains(tok, "~") {
		return tok
	}
	return strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
}

// String returns the canonical string form: "" for the root, otherwise
// each token escaped and prefixed with "/".
func (p Pointer) String() string {
	if len(p) == 0 {
		return ""
	}
	var b strings.Builder
	for _, t := range p {
		b.WriteByte('/')
		b.WriteString(EscapeToken(t))
	}
	return b.String()
}

// Compare orders pointers token by token (each token compared as a byte
// string), a pointer sorting before its own descendants. It returns -1, 0
// or +1.
func (p Pointer) Compare(q Pointer) int {
	for i := 0; i < len(p) && i < len(q); i++ {
		if c := strings.Compare(p[i], q[i]); c != 0 {
			return c
		}
	}
	switch {
	case len(p) < len(q):
		return -1
	case len(p) > len(q):
		return 1
	}
	return 0
}

// Equal reports whether p and q have the same tokens.
func (p Pointer) Equal(q Pointer) bool { return p.Compare(q) == 0 }

// HasPrefix reports whether q is p or an ancestor of p, token-wise: the
// location p lies in the subtree rooted at q.
func (p Pointer) HasPrefix(q Pointer) bool {
	if len(q) > len(p) {
		return false
	}
	for i := range q {
		if p[i] != q[i] {
			return false
		}
	}
	return true
}

// Parent returns the pointer without its last token. The root's parent is
// the root.
func (p Pointer) Parent() Pointer {
	if len(p) == 0 {
		return p
	}
	return p[: len(p)-1 : len(p)-1]
}

// Last returns the last token, or "" for the root.
func (p Pointer) Last() string {
	if len(p) == 0 {
		return ""
	}
	return p[len(p)-1]
}

// Append returns a new pointer with tokens added; p is not modified.
func (p Pointer) Append(tokens ...string) Pointer {
	q := make(Pointer, 0, len(p)+len(tokens))
	q = append(q, p...)
	return append(q, tokens...)
}

// MarshalText encodes the pointer in its string form, so a Pointer is a
// JSON string in every encoded record.
func (p Pointer) MarshalText() ([]byte, error) { return []byte(p.String()), nil }

// UnmarshalText parses the string form with ParsePointer.
func (p *Pointer) UnmarshalText(b []byte) error {
	q, err := ParsePointer(string(b))
	if err != nil {
		return err
	}
	*p = q
	return nil
}

// ErrIndexSyntax is wrapped by every error ParseIndex returns.
var ErrIndexSyntax = index.ErrSyntax

// ParseIndex parses a reference token that indexes an array (RFC 6901 §4,
// RFC 6902 §4): "0" or a digit string without leading zeros. Signs,
// negatives, leading zeros, exponents, whitespace and "-" are rejected
// ("-" is handled by the callers that allow it). Errors wrap
// ErrIndexSyntax.
func ParseIndex(tok string) (int, error) { return index.Parse(tok) }
