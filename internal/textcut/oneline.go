package textcut

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// OneLine returns s safe to print on a terminal or to quote in a prompt:
// on one line, with every control character (new lines and tabs too),
// DEL, the C1 controls, and the invisible formatting characters that
// reorder or hide text (bidirectional overrides and isolates, zero-width
// characters: Unicode category Cf) written as \u escapes, and invalid
// UTF-8 bytes as \x escapes. A provider's error message goes through it
// before it reaches a terminal, a record or a prompt.
func OneLine(s string) string {
	if !needsEscape(s) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case unsafeRune(r):
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// needsEscape reports whether OneLine would change s.
func needsEscape(s string) bool {
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || unsafeRune(r) {
			return true
		}
		i += size
	}
	return false
}

// unsafeRune reports whether r is a control or invisible formatting
// character.
func unsafeRune(r rune) bool {
	return r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) || unicode.Is(unicode.Cf, r) || r == 0x2028 || r == 0x2029
}
