package scoring

import (
	"encoding/base64"
	"encoding/hex"
	"net/url"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// This file holds the readings of a text the detectors compare a canary with
// (docs/reports.md, the leak detectors' reach): the text as written; its
// normalised form (case, spacing and separators ignored); its Unicode
// compatibility form (NFKC: fullwidth digits, ligatures, superscripts)
// normalised the same way; the texts its JSON escapes decode to, once and
// again (JSON held in a JSON string, however deep, up to maxUnescape
// levels); and the texts its base64, hex and URL-encoded runs decode to,
// each with its own JSON escapes undone.

// maxUnescape bounds how many times a text's JSON escapes are undone in
// turn: an answer holding JSON in a string of JSON in a string, four
// levels deep.
const maxUnescape = 4

// form is one reading of a text: the text, its normalised form and, when
// its NFKC differs from it, that NFKC and its normalised form.
type form struct {
	s, norm    string
	kc, kcNorm string // "" when NFKC leaves s unchanged (always for ASCII)
}

func newForm(s string) form {
	f := form{s: s, norm: normalise(s)}
	if !isASCII(s) {
		if kc := norm.NFKC.String(s); kc != s {
			f.kc, f.kcNorm = kc, normalise(kc)
		}
	}
	return f
}

// newDecodedForm is newForm for what an encoded run decodes to, which is
// mostly not text at all (a word read as base64): its NFKC is taken only
// when it is UTF-8.
func newDecodedForm(s string) form {
	if !utf8.ValidString(s) {
		return form{s: s, norm: normalise(s)}
	}
	return newForm(s)
}

// size is the bytes a form holds.
func (f *form) size() int { return len(f.s) + len(f.norm) + len(f.kc) + len(f.kcNorm) }

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// normalise lower-cases s and keeps only its letters and digits (ASCII
// bytes by table, other runes by package unicode; a byte that is not
// UTF-8 is dropped).
func normalise(s string) string { return normaliseAt(s, nil) }

// normaliseAt is normalise, recording the origin of each byte written in
// at when it is not nil.
func normaliseAt(s string, at *origin) string {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if k := asciiNorm[c]; k != 0 {
				b = append(b, k)
				at.add(1, i, i+1)
			}
			i++
			continue
		}
		r, w := utf8.DecodeRuneInString(s[i:])
		if r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r)) { // RuneError: a byte not UTF-8, or U+FFFD
			n := len(b)
			b = utf8.AppendRune(b, unicode.ToLower(r))
			at.add(len(b)-n, i, i+w)
		}
		i += w
	}
	return string(b)
}

// nfkcAt is s in Unicode compatibility form (NFKC), as norm.NFKC.String
// writes it, recording in at the origin of each byte: the part of s it
// comes from (a normalisation segment; the iterator may hand one
// segment's output out in pieces, the input consumed with the last).
func nfkcAt(s string, at *origin) string {
	var it norm.Iter
	it.InitString(norm.NFKC, s)
	b := make([]byte, 0, len(s))
	from, pending := 0, 0 // the bytes written since s[from:] was last consumed
	for !it.Done() {
		if pending == 0 {
			from = it.Pos()
		}
		seg := it.Next()
		b = append(b, seg...)
		pending += len(seg)
		if it.Pos() > from {
			at.add(pending, from, it.Pos())
			pending = 0
		}
	}
	if pending > 0 {
		at.add(pending, max(0, min(from, len(s)-1)), len(s))
	}
	return string(b)
}

// asciiNorm maps each ASCII letter and digit to its normalised byte, and
// every other ASCII byte to 0.
var asciiNorm = func() (t [utf8.RuneSelf]byte) {
	for c := byte('0'); c <= '9'; c++ {
		t[c] = c
	}
	for c := byte('a'); c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = c, c
	}
	return t
}()

// origin records, for each byte a transformation of a text writes, the
// byte range [lo, hi) of the text it comes from; a nil *origin records
// nothing.
type origin struct{ lo, hi []int }

func (o *origin) add(n, lo, hi int) {
	if o == nil {
		return
	}
	for range n {
		o.lo, o.hi = append(o.lo, lo), append(o.hi, hi)
	}
}

// unescapeJSON undoes, wherever they stand in s, the escapes JSON writes
// inside strings (RFC 8259 §7): \" \\ \/ \b \f \n \r \t and \uXXXX, a
// surrogate pair as one rune and a lone surrogate as U+FFFD (as
// encoding/json decodes it). A backslash that starts no escape is kept.
// Undoing them over the whole text, not string by string, gives every
// string the text holds as JSON decoded, whether or not the text around
// it is valid JSON (prose, a code fence, a trailing comma). at, when not
// nil, gets the origin of each byte written.
func unescapeJSON(s string, at *origin) string {
	var b strings.Builder
	b.Grow(len(s))
	start := 0 // of the plain run not yet written
	flush := func(end int) {
		b.WriteString(s[start:end])
		if at != nil {
			for k := start; k < end; k++ {
				at.add(1, k, k+1)
			}
		}
	}
	for i := 0; i < len(s); {
		if s[i] != '\\' || i+1 >= len(s) {
			i++
			continue
		}
		var r rune
		n := 2
		switch s[i+1] {
		case '"', '\\', '/':
			r = rune(s[i+1])
		case 'b':
			r = '\b'
		case 'f':
			r = '\f'
		case 'n':
			r = '\n'
		case 'r':
			r = '\r'
		case 't':
			r = '\t'
		case 'u':
			u, ok := hex4(s, i+2)
			if !ok {
				i++
				continue
			}
			r, n = rune(u), 6
			if utf16.IsSurrogate(r) {
				r = utf8.RuneError
				if lo, ok := hex4(s, i+8); ok && s[i+6] == '\\' && s[i+7] == 'u' {
					if pair := utf16.DecodeRune(rune(u), rune(lo)); pair != utf8.RuneError {
						r, n = pair, 12
					}
				}
			}
		default:
			i++
			continue
		}
		flush(i)
		w, _ := b.WriteRune(r)
		at.add(w, i, i+n)
		i += n
		start = i
	}
	if start == 0 {
		if at != nil {
			flush(len(s))
		}
		return s
	}
	flush(len(s))
	return b.String()
}

// hex4 reads four hex digits at s[i:].
func hex4(s string, i int) (uint16, bool) {
	if i+4 > len(s) {
		return 0, false
	}
	var v uint16
	for _, c := range []byte(s[i : i+4]) {
		d, ok := hexDigit(c)
		if !ok {
			return 0, false
		}
		v = v<<4 | uint16(d)
	}
	return v, true
}

func hexDigit(c byte) (byte, bool) {
	switch {
	case '0' <= c && c <= '9':
		return c - '0', true
	case 'a' <= c && c <= 'f':
		return c - 'a' + 10, true
	case 'A' <= c && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// unescapeChain is what undoing s's JSON escapes gives, once, twice, …
// while a backslash is left and the text changes, at most maxUnescape
// times; nil when s has no escape.
func unescapeChain(s string) []string {
	var out []string
	for range maxUnescape {
		if strings.IndexByte(s, '\\') < 0 {
			break
		}
		u := unescapeJSON(s, nil)
		if u == s {
			break
		}
		out = append(out, u)
		s = u
	}
	return out
}

// base64Class says which bytes a base64 run (standard or URL alphabet)
// is made of.
var base64Class = func() (t [256]bool) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/_-") {
		t[c] = true
	}
	return t
}()

// minBase64Run is the fewest base64 characters a decoded run holds.
const minBase64Run = 8

func isLineBreak(c byte) bool { return c == '\n' || c == '\r' }

// isLineSpace reports whether c may stand between two lines of a base64
// run: a line break, or a space or tab around one (indentation).
func isLineSpace(c byte) bool { return isLineBreak(c) || c == ' ' || c == '\t' }

// inBase64Run reports whether c may stand in a base64 run before its
// padding: a base64 character, a line break, a space or a tab.
func inBase64Run(c byte) bool { return base64Class[c] || isLineSpace(c) }

// base64Runs returns the [start, end) of each maximal run of at least
// minBase64Run base64 characters in s, with up to two '=' of padding
// after it. A run goes on across line breaks (CR, LF, any number of them,
// with spaces and tabs around them: indentation) between two of its
// characters: base64 as base64(1), PEM and MIME write it, wrapped at 64
// or 76 columns, indented in a YAML block, and base64 text split across
// strings read together, which joinSeparator joins, are read as one run.
// The linear scan finds what the regular expression
// [A-Za-z0-9+/_-]+(?:[ \t]*[\r\n][ \t\r\n]*[A-Za-z0-9+/_-]+)*={0,2}
// finds, keeping the matches of at least minBase64Run base64 characters.
func base64Runs(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		if !base64Class[s[i]] {
			i++
			continue
		}
		j, n := i, 0
		for j < len(s) {
			if base64Class[s[j]] {
				j++
				n++
				continue
			}
			k, broken := j, false
			for k < len(s) && isLineSpace(s[k]) {
				broken = broken || isLineBreak(s[k])
				k++
			}
			if !broken || k == len(s) || !base64Class[s[k]] {
				break
			}
			j = k
		}
		if n >= minBase64Run {
			end := j
			for end < len(s) && end-j < 2 && s[end] == '=' {
				end++
			}
			out = append(out, [2]int{i, end})
		}
		i = j
	}
	return out
}

// minHexPairs is the fewest pairs of hex digits a decoded hex run holds.
const minHexPairs = 6

// isHexSep reports whether c may stand between the digits of a hex run:
// white space, ':' and '-' (hex written in groups, a MAC address, xxd -p
// lines, Python's bytes.hex(sep)) and ',' (the byte lists of xxd -i and
// of C, JavaScript and Python sources).
func isHexSep(c byte) bool {
	switch c {
	case ' ', '\t', '\n', '\v', '\f', '\r', ':', '-', ',':
		return true
	}
	return false
}

// hexPrefix is the length of the prefix of a hex byte at s[i:], \x (a C
// or Python string escape) or, when tokenStart, 0x or 0X (a C or Python
// literal): 2 when one stands there followed by a hex digit, else 0.
func hexPrefix(s string, i int, tokenStart bool) int {
	if (s[i] != '\\' && s[i] != '0') || i+2 >= len(s) {
		return 0
	}
	if _, ok := hexDigit(s[i+2]); !ok {
		return 0
	}
	if (s[i] == '\\' && s[i+1] == 'x') || (tokenStart && s[i] == '0' && (s[i+1] == 'x' || s[i+1] == 'X')) {
		return 2
	}
	return 0
}

// hexRunAt reads the hex run that starts at s[i] (a hex digit or a
// prefix, hexPrefix, followed by one): its hex digits, with any number of
// separators (isHexSep) between them and a prefix before any of them, 0x
// only after a separator or at the start. It returns the end of the run
// (after its last digit) and the number of digits; digits, when not nil,
// gets them appended.
func hexRunAt(s string, i int, digits *[]byte) (end, n int) {
	end = i
	for j, tokenStart := i, true; j < len(s); {
		if p := hexPrefix(s, j, tokenStart); p > 0 {
			j += p
			tokenStart = false
			continue
		}
		if _, ok := hexDigit(s[j]); ok {
			if digits != nil {
				*digits = append(*digits, s[j])
			}
			j++
			n++
			end, tokenStart = j, false
			continue
		}
		if !isHexSep(s[j]) {
			break
		}
		for j < len(s) && isHexSep(s[j]) {
			j++
		}
		tokenStart = true
	}
	return end, n
}

// inHexRun reports whether c may stand in a hex run: a hex digit, a
// separator or a byte of a prefix.
func inHexRun(c byte) bool {
	_, ok := hexDigit(c)
	return ok || isHexSep(c) || c == '\\' || c == 'x' || c == 'X'
}

// hexRuns returns the [start, end) of each run of at least 2*minHexPairs
// hex digits in s (hexRunAt), leftmost first. A run is read as the
// sequence of its digits whatever stands between them, so hex as tools
// and programs print it is one run: plain (%02x, xxd -p, bytes.hex()),
// in groups with spaces, colons or dashes, wrapped over lines, \x34\x30
// (a C or Python string), 0x34, 0x30 (a byte list, xxd -i), and hex text
// split across strings read together.
func hexRuns(s string) [][2]int {
	var out [][2]int
	for i := 0; i < len(s); {
		_, ok := hexDigit(s[i])
		if !ok && hexPrefix(s, i, true) == 0 {
			i++
			continue
		}
		end, n := hexRunAt(s, i, nil)
		if n >= 2*minHexPairs {
			out = append(out, [2]int{i, end})
		}
		i = max(end, i+1)
	}
	return out
}

// decodeHexRun decodes the digits of a hex run (one hexRuns returns), at
// each parity: from its first digit and from its second, a canary's bytes
// starting at either (a stray digit before it, a split at an odd digit
// between two of its lines).
func decodeHexRun(run string) []string {
	var digits []byte
	hexRunAt(run, 0, &digits)
	var out []string
	for off := 0; off <= 1 && off < len(digits); off++ {
		d := digits[off : off+(len(digits)-off)/2*2]
		b := make([]byte, len(d)/2)
		if _, err := hex.Decode(b, d); err == nil {
			out = append(out, string(b))
		}
	}
	return out
}

// decodeBase64 decodes a base64 run, its line breaks and the spaces
// around them removed, with the
// alphabet its characters allow (standard or URL), with and without
// padding, and from each of the four offsets at which a canary embedded
// in a longer text may start (a run that starts mid-quantum: a word
// joined to it across a line break, a window that starts inside it). A
// run whose lines mix the alphabets (base64 of one alphabet after a line
// of prose such as "base64-encoded") is decoded in groups of consecutive
// lines that do not (alphabetGroups).
func decodeBase64(run string) []string {
	body := strings.TrimRight(run, "=")
	std, url := strings.ContainsAny(body, "+/"), strings.ContainsAny(body, "-_")
	if std && url {
		var out []string
		for _, g := range alphabetGroups(body) {
			out = append(out, decodeBase64(g)...)
		}
		return out
	}
	src := make([]byte, 0, len(body))
	for i := 0; i < len(body); i++ {
		if !isLineSpace(body[i]) {
			src = append(src, body[i])
		}
	}
	enc := base64.RawStdEncoding // which decodes a run of neither alike
	if url {
		enc = base64.RawURLEncoding
	}
	var out []string
	buf := make([]byte, enc.DecodedLen(len(src)))
	for off := 0; off < 4 && off < len(src); off++ {
		part := src[off:]
		if len(part)%4 == 1 { // a lone trailing character carries no byte
			part = part[:len(part)-1]
		}
		if n, err := enc.Decode(buf, part); err == nil {
			out = append(out, string(buf[:n]))
		}
	}
	return out
}

// alphabetGroups splits a base64 run (its padding trimmed) whose lines
// mix the standard alphabet's +/ and the URL alphabet's -_ into groups of
// consecutive lines, joined by "\n", none of which mixes them: each group
// as long as it can be, the lines of neither alphabet between two groups
// in both. A line that mixes them itself is in none. Each line is in at
// most two groups.
func alphabetGroups(body string) []string {
	lines := strings.FieldsFunc(body, func(r rune) bool { return r < utf8.RuneSelf && isLineSpace(byte(r)) })
	var out []string
	start, neutral := 0, 0 // the current group's first line; the first of the lines of neither alphabet that end it
	var std, url bool      // the current group's alphabet
	for i, l := range lines {
		s, u := strings.ContainsAny(l, "+/"), strings.ContainsAny(l, "-_")
		if (s && url) || (u && std) || (s && u) {
			if start < i {
				out = append(out, strings.Join(lines[start:i], "\n"))
			}
			start, std, url = neutral, false, false
			if s && u {
				start, neutral = i+1, i+1
				continue
			}
		}
		std, url = std || s, url || u
		if s || u {
			neutral = i + 1
		}
	}
	if start < len(lines) {
		out = append(out, strings.Join(lines[start:], "\n"))
	}
	return out
}

// hasPercentEscape reports whether s holds a %XX escape.
func hasPercentEscape(s string) bool {
	for i := strings.IndexByte(s, '%'); i >= 0 && i+2 < len(s); {
		if _, ok := hexDigit(s[i+1]); ok {
			if _, ok := hexDigit(s[i+2]); ok {
				return true
			}
		}
		k := strings.IndexByte(s[i+1:], '%')
		if k < 0 {
			break
		}
		i += 1 + k
	}
	return false
}

// urlDecodings are the texts URL decoding gives s (query and path
// unescaping), when s holds a %XX escape or a '+'.
func urlDecodings(s string) []string {
	if !hasPercentEscape(s) && !strings.Contains(s, "+") {
		return nil
	}
	var out []string
	if u, err := url.QueryUnescape(s); err == nil {
		out = append(out, u)
	}
	if u, err := url.PathUnescape(s); err == nil && u != s {
		out = append(out, u)
	}
	return out
}
