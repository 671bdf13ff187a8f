package scoring

import (
	"encoding/json"
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	"golang.org/x/text/unicode/norm"
)

// randomText is a seeded random text of ASCII, separators, escapes,
// fullwidth and combining characters, Hangul and astral runes, and bytes
// that are not UTF-8.
func randomText(r *rand.Rand) string {
	pieces := []string{"a", "Z", "4", "0", " ", "-", ":", "\\", `"`, "u", "\\u00", "\\ud83d", "\\ude00", "\\n", "%", "%2", "+", "=", "/", "_",
		"ab", "0f", "C3", "４", "Ａ", "é", "e\u0301", "ﬁ", "½", "가", "\u1100\u1161", "😀", "\xff", "\xc3", "\n", "\t"}
	var b strings.Builder
	for range r.IntN(40) {
		b.WriteString(pieces[r.IntN(len(pieces))])
	}
	return b.String()
}

// unescapeJSON over a JSON string literal gives what encoding/json
// decodes it to, for strings escaped by encoding/json and for every rune
// written as a \u escape.
func TestUnescapeJSONAgreesWithEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		s := randomText(r)
		b, _ := json.Marshal(s)
		var want string
		if err := json.Unmarshal(b, &want); err != nil {
			t.Fatal(err)
		}
		if got := unescapeJSON(string(b), nil); got != `"`+want+`"` {
			t.Fatalf("unescapeJSON(%s) = %q, want %q", b, got, `"`+want+`"`)
		}
		var all strings.Builder
		all.WriteByte('"')
		for _, c := range want {
			all.WriteString(jsonUEscape(c))
		}
		all.WriteByte('"')
		if got := unescapeJSON(all.String(), nil); got != `"`+want+`"` {
			t.Fatalf("unescapeJSON(%s) = %q, want %q", all.String(), got, `"`+want+`"`)
		}
	}
	// Surrogates as encoding/json decodes them.
	for _, lit := range []string{`"\ud83d\ude00"`, `"\ud83d"`, `"\ude00\ud83d"`, `"\ud83dx"`, `"\ud83d\u0041"`} {
		var want string
		if err := json.Unmarshal([]byte(lit), &want); err != nil {
			t.Fatal(err)
		}
		if got := unescapeJSON(lit, nil); got != `"`+want+`"` {
			t.Errorf("unescapeJSON(%s) = %q, want %q", lit, got, `"`+want+`"`)
		}
	}
}

// The readings Spans maps back agree with the ones detection compares:
// the same text, and origins that cover it in order.
func TestReadingsAgree(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for range 3000 {
		s := randomText(r)
		if got, want := nfkcAt(s, nil), norm.NFKC.String(s); got != want {
			t.Fatalf("nfkcAt(%q) = %q, want %q", s, got, want)
		}
		if got, want := normalise(s), referenceNormalise(s); got != want {
			t.Fatalf("normalise(%q) = %q, want %q", s, got, want)
		}
		base := &reading{s: s}
		for _, rd := range []*reading{base.unescape(), base.normalised(), base.nfkc(), base.unescape().nfkc().normalised()} {
			if len(rd.lo) != len(rd.s) || len(rd.hi) != len(rd.s) {
				t.Fatalf("reading %q of %q: %d origins", rd.s, s, len(rd.lo))
			}
			for i := range rd.lo {
				if rd.lo[i] < 0 || rd.hi[i] > len(s) || rd.lo[i] >= rd.hi[i] || (i > 0 && rd.lo[i] < rd.lo[i-1]) {
					t.Fatalf("reading %q of %q: origin %d is [%d, %d)", rd.s, s, i, rd.lo[i], rd.hi[i])
				}
			}
		}
		if got, want := base.unescape().s, unescapeJSON(s, nil); got != want {
			t.Fatalf("unescape reading %q, want %q", got, want)
		}
	}
}

// referenceNormalise is the normalised form as first written: every
// letter and digit, lower-cased.
func referenceNormalise(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// The run scanners find what the regular expressions they replace find:
// a base64 run going on across line breaks (and indentation), of at least eight base64
// characters, and a hex run of hex digits with any separators and \x or
// 0x prefixes between them, of at least twelve digits.
func TestRunScannersAgreeWithRegexps(t *testing.T) {
	b64 := regexp.MustCompile(`[A-Za-z0-9+/_-]+(?:[ \t]*[\r\n][ \t\r\n]*[A-Za-z0-9+/_-]+)*={0,2}`)
	hx := regexp.MustCompile(`(?:\\x|0[xX])?[0-9a-fA-F]+(?:(?:[\t\n\v\f\r ,:-]+(?:0[xX]|\\x)?|\\x)[0-9a-fA-F]+)*`)
	b64Chars := func(m string) int {
		return len(strings.TrimRight(strings.NewReplacer("\r", "", "\n", "", " ", "", "\t", "").Replace(m), "="))
	}
	hexDigits := func(m string) int {
		n := 0
		for _, c := range []byte(strings.NewReplacer("0x", "", "0X", "", `\x`, "").Replace(m)) {
			if _, ok := hexDigit(c); ok {
				n++
			}
		}
		return n
	}
	r := rand.New(rand.NewPCG(5, 6))
	pieces := []string{"a", "F", "0", "9", "g", "x", " ", "\t", ":", "-", ",", "=", "+", "/", "_", "\n", "\r\n", "\v", "\\", `\x`, "0x", "0X",
		"ab", "c3d4", "é"}
	n := 20000
	if testing.Short() {
		n = 4000 // the inner loop; the full run compares 20000 strings
	}
	for range n {
		var sb strings.Builder
		for range r.IntN(60) {
			sb.WriteString(pieces[r.IntN(len(pieces))])
		}
		s := sb.String()
		if got, want := base64Runs(s), matches(b64, s, b64Chars, minBase64Run); !slices.Equal(got, want) {
			t.Fatalf("base64Runs(%q) = %v, want %v", s, got, want)
		}
		if got, want := hexRuns(s), matches(hx, s, hexDigits, 2*minHexPairs); !slices.Equal(got, want) {
			t.Fatalf("hexRuns(%q) = %v, want %v", s, got, want)
		}
	}
}

// matches is where re matches s, keeping the matches m with
// count(m) >= least.
func matches(re *regexp.Regexp, s string, count func(string) int, least int) [][2]int {
	var out [][2]int
	for _, m := range re.FindAllStringIndex(s, -1) {
		if count(s[m[0]:m[1]]) >= least {
			out = append(out, [2]int{m[0], m[1]})
		}
	}
	return out
}
