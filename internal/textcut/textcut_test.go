package textcut

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestCut(t *testing.T) {
	for _, c := range []struct {
		s    string
		n    int
		want string
	}{
		{"abc", 5, "abc"},
		{"abc", 3, "abc"},
		{"abc", 2, "ab"},
		{"abc", 0, ""},
		{"aé", 2, "a"},   // é is two bytes: not split
		{"aé", 3, "aé"},  // whole
		{"a中b", 3, "a"},  // 中 is three bytes
		{"a中b", 4, "a中"}, // whole
		{"😀x", 3, ""},    // a four-byte sequence, cut before it
		// Not UTF-8: a run of continuation bytes keeps its first n bytes,
		// not none.
		{strings.Repeat("\x80", 10), 6, strings.Repeat("\x80", 6)},
		{"ab" + strings.Repeat("\x80", 10), 8, "ab" + strings.Repeat("\x80", 6)},
	} {
		got := Cut(c.s, c.n)
		if got != c.want {
			t.Errorf("Cut(%q, %d) = %q, want %q", c.s, c.n, got, c.want)
		}
		if len(got) > c.n && len(c.s) > c.n {
			t.Errorf("Cut(%q, %d) is %d bytes", c.s, c.n, len(got))
		}
		if utf8.ValidString(c.s) && !utf8.ValidString(got) {
			t.Errorf("Cut(%q, %d) = %q splits a sequence", c.s, c.n, got)
		}
	}
}

func TestOneLine(t *testing.T) {
	for in, want := range map[string]string{
		"ok: plain text, é and 😀": "ok: plain text, é and 😀",
		"a\xffb\u0085":            `a\xffb\u0085`,
		"line\nnext\x1b[2J\u202e": `line\u000anext\u001b[2J\u202e`,
	} {
		if got := OneLine(in); got != want {
			t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
		}
	}
}
