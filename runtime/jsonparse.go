package runtime

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/bits"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf16"
	"unicode/utf8"
)

// The strict JSON decoder: one pass over the text, no token stream. It
// accepts exactly what encoding/json accepts (RFC 8259), decodes strings
// as encoding/json does (an unpaired surrogate escape becomes U+FFFD),
// keeps numbers as json.Number, and reports every error as the decoder it
// replaced did (a json.Decoder read token by token; jsonref_test.go keeps
// it for the differential test): the same kind of error at the same
// offset with the same message, whichever error comes first in the text.
// A syntax error is described by encoding/json's own scanner.
//
// ParseDocument runs it twice, in two modes: a scan (scanJSON) that
// checks the text, with every error above, and learns what the footprint
// path and the build need without building anything; then, when the
// value is first needed, a build (buildJSON) of the text the scan
// accepted, which looks for no error and builds the elements of long
// arrays in parts, on every core. decodeStrict does both in one pass.
//
// It allocates little: each container is built once, at its final size,
// from a scratch stack; strings and number texts are copied into shared
// blocks (stringArena); member names and short scalars that repeat are
// kept once (scalarCache). On the way it learns what the footprint path
// would otherwise read the text again for (parseSeed): whether the text
// is compact, and the member tables of its large containers.

// failKind is the kind of a decoding error; the error's text and offset
// follow from it (parser.error).
type failKind uint8

const (
	failSyntax   failKind = iota + 1 // described by encoding/json's scanner
	failEOF                          // the text ends inside the value
	failDepth                        // a container opens past maxDepth
	failDup                          // a member name repeats
	failNumber                       // a number outside the supported range
	failTrailing                     // data after the value
)

// tableMinSpan is the size of canonical text from which the parser keeps
// a container's member table for the footprint path (textBase.tables):
// building one later would read the container's whole text again.
const tableMinSpan = 32 << 10

// parseSeed is what a parse learned about its text for the footprint
// path: whether the text is compact but for leading white space (then,
// without it, it is its own canonical text), and the member tables of
// its containers of tableMinSpan canonical bytes or more, by canonical
// offset.
type parseSeed struct {
	compact bool
	tables  map[int]*ctable
}

// objectScanMax is the member count up to which a duplicate name is
// looked for among the names read so far; past it, in a map.
const objectScanMax = 16

type parser struct {
	b        []byte
	i        int
	maxDepth int
	deepest  int

	// The scratch stack: the members (keys, vals) and elements (vals) of
	// every open container, the innermost last.
	vals []any
	keys []string
	tmp  []byte // an unescaped string

	// ws counts the white-space bytes skipped so far (all outside
	// strings), so that an offset minus ws is an offset in the canonical
	// text. When tables is not nil, spans holds the canonical spans of
	// the values on the scratch stack and keySpans the text of the names.
	ws       int
	tables   map[int]*ctable
	spans    []tspan
	keySpans []tspan

	arena stringArena
	cache *scalarCache

	// scan is set on a parse that checks the text without building its
	// value (scanJSON): containers and scalars are not built, member
	// names are read only to find duplicates. In a scan, marks holds the
	// starts of every part-th element of the open arrays, and bigs
	// the arrays of at least minBig (parallelMinItems) elements found so far.
	// trusted is set on a build of a text a scan accepted (buildJSON):
	// duplicates are not looked for, and the arrays of bigs (in text
	// order, from nextBig) are built in parts on every core.
	scan    bool
	trusted bool
	minBig  int // a scan's parallelMinItems
	part    int // and partItems
	marks   []int
	bigs    []*bigArray
	nextBig int

	fail    failKind
	failOff int
	failMsg string
}

// decodeStrict decodes exactly one JSON value (RFC 8259) from b, keeping
// numbers as json.Number. It rejects text that is not UTF-8, duplicate
// member names, nesting deeper than maxDepth containers, numbers outside
// the supported range (checkNumber), and anything after the value but
// white space, with a *SyntaxError. NaN and Infinity are not JSON and are
// rejected as syntax errors.
func decodeStrict(b []byte, maxDepth int) (any, error) {
	v, _, _, err := parseJSON(b, maxDepth, false)
	return v, err
}

// parseJSON is decodeStrict that also returns the depth of the deepest
// value (the root is at depth 0, its members at 1); with seed set it also
// returns what the parse learned of the text for the footprint path.
func parseJSON(b []byte, maxDepth int, seed bool) (any, int, *parseSeed, error) {
	p := &parser{b: b, maxDepth: maxDepth}
	p.arena.block = min(max(len(b)/2, 64), arenaBlock)
	if len(b) >= scalarCacheMinText {
		p.cache = newScalarCache(len(b))
	}
	if seed && len(b) >= tableMinSpan {
		p.tables = map[int]*ctable{}
	}
	if !utf8.Valid(b) {
		return nil, 0, nil, p.error()
	}
	p.skipSpace()
	lead := p.ws
	v, ok := p.value(0)
	if ok {
		p.skipSpace()
		if p.i < len(b) {
			ok = p.stop(failTrailing, trailingOffset(b, p.i), "data after the JSON value")
		}
	}
	if !ok {
		return nil, 0, nil, p.error()
	}
	var s *parseSeed
	if seed {
		s = &parseSeed{compact: p.ws == lead, tables: p.tables}
	}
	return v, p.deepest, s, nil
}

// Parallel builds: a scan notes the arrays of at least parallelMinItems
// elements, with the start of every partItems-th element; the build of
// the value then builds their elements in parts of partItems, on every
// core.
const (
	parallelMinItems = 2048
	partItems        = 256
)

// bigArray is an array a scan found long enough to build in parts: the
// offsets of its '[' and just after its ']', its length, and the start of
// each part's first element.
type bigArray struct {
	open, end, n int
	part         int // elements per part
	starts       []int
}

// scanJSON checks b as parseJSON does (the same errors) without building
// its value: it returns the depth of the deepest value, what parseJSON
// learns of the text for the footprint path, and the arrays that
// buildJSON will build in parts.
func scanJSON(b []byte, maxDepth int) (int, *parseSeed, []*bigArray, error) {
	return scanJSONParts(b, maxDepth, parallelMinItems, partItems)
}

// scanJSONParts is scanJSON noting the arrays of at least minItems
// elements, in parts of part elements (the tests make them small).
func scanJSONParts(b []byte, maxDepth, minItems, part int) (int, *parseSeed, []*bigArray, error) {
	p := &parser{b: b, maxDepth: maxDepth, scan: true, minBig: minItems, part: part}
	p.arena.block = min(max(len(b)/2, 64), arenaBlock)
	if len(b) >= scalarCacheMinText {
		p.cache = newKeyCache(len(b)) // a scan reads member names only
	}
	if len(b) >= tableMinSpan {
		p.tables = map[int]*ctable{}
	}
	if !utf8.Valid(b) {
		return 0, nil, nil, p.error()
	}
	p.skipSpace()
	lead := p.ws
	_, ok := p.value(0)
	if ok {
		p.skipSpace()
		if p.i < len(b) {
			ok = p.stop(failTrailing, trailingOffset(b, p.i), "data after the JSON value")
		}
	}
	if !ok {
		return 0, nil, nil, p.error()
	}
	slices.SortFunc(p.bigs, func(x, y *bigArray) int { return x.open - y.open })
	return p.deepest, &parseSeed{compact: p.ws == lead, tables: p.tables}, p.bigs, nil
}

// buildJSON builds the value of b, a text scanJSON accepted and found
// bigs in, as parseJSON would: the arrays of bigs are built in parts, on
// every core.
func buildJSON(b []byte, bigs []*bigArray) any {
	p := &parser{b: b, maxDepth: math.MaxInt, trusted: true}
	p.arena.block = min(max(len(b)/2, 64), arenaBlock)
	if len(b) >= scalarCacheMinText {
		p.cache = newScalarCache(len(b))
	}
	if runtime.GOMAXPROCS(0) > 1 {
		p.bigs = bigs
	}
	p.skipSpace()
	v, ok := p.value(0)
	if !ok {
		panic("runtime: a text the scan accepted does not build: " + p.error().Error()) // not reached
	}
	return v
}

// arrayParts builds the array of p.bigs[p.nextBig], at p.i, in parts:
// each part on whichever core takes it, this goroutine among them.
func (p *parser) arrayParts(depth int) []any {
	ba := p.bigs[p.nextBig]
	p.nextBig++
	for p.nextBig < len(p.bigs) && p.bigs[p.nextBig].open < ba.end {
		p.nextBig++ // inside this array: built in its parts
	}
	out := make([]any, ba.n)
	var next atomic.Int64
	work := func(q *parser) {
		for {
			k := int(next.Add(1)) - 1
			if k >= len(ba.starts) {
				return
			}
			q.i = ba.starts[k]
			lo, hi := k*ba.part, min((k+1)*ba.part, ba.n)
			for j := lo; j < hi; j++ {
				if j > lo {
					q.skipSpace()
					q.i++ // ','
					q.skipSpace()
				}
				out[j], _ = q.value(depth + 1)
			}
		}
	}
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(ba.starts)) - 1 {
		q := &parser{b: p.b, maxDepth: p.maxDepth, trusted: true}
		q.arena.block = p.arena.block
		if p.cache != nil {
			q.cache = newScalarCache((ba.end - ba.open) / runtime.GOMAXPROCS(0))
		}
		wg.Go(func() { work(q) })
	}
	work(p)
	wg.Wait()
	p.i = ba.end
	return out
}

// stop records the error and returns false.
func (p *parser) stop(k failKind, at int, msg string) bool {
	p.fail, p.failOff, p.failMsg = k, at, msg
	return false
}

// error is the recorded error as the replaced decoder reported it: text
// that is not UTF-8 first, wherever the error; a syntax error as
// encoding/json's scanner finds the first one in the whole text; the end
// of the text at the end of the text; the others where they were found.
func (p *parser) error() *SyntaxError {
	b := p.b
	if !utf8.Valid(b) {
		off := 0
		for off < len(b) {
			r, size := utf8.DecodeRune(b[off:])
			if r == utf8.RuneError && size <= 1 {
				break
			}
			off += size
		}
		return syntaxErrorAt(b, int64(off), "invalid UTF-8")
	}
	switch p.fail {
	case failSyntax:
		var whole *json.SyntaxError
		if errors.As(json.Unmarshal(b, new(any)), &whole) {
			return syntaxErrorAt(b, whole.Offset-1, whole.Error())
		}
		return syntaxErrorAt(b, int64(p.failOff), "invalid JSON") // not reached: the scanner agrees
	case failEOF:
		return syntaxErrorAt(b, int64(len(b)), "unexpected end of JSON input")
	}
	return syntaxErrorAt(b, int64(p.failOff), p.failMsg)
}

func (p *parser) skipSpace() {
	if p.i < len(p.b) && p.b[p.i] > ' ' {
		return
	}
	i := p.i
	for i < len(p.b) && isSpace(p.b[i]) {
		i++
	}
	p.ws += i - p.i
	p.i = i
}

func (p *parser) value(depth int) (any, bool) {
	p.deepest = max(p.deepest, depth)
	if p.i >= len(p.b) {
		return nil, p.stop(failEOF, 0, "")
	}
	switch c := p.b[p.i]; c {
	case '{':
		return p.object(depth)
	case '[':
		return p.array(depth)
	case '"':
		return p.stringValue()
	case 't':
		return true, p.literal("true")
	case 'f':
		return false, p.literal("false")
	case 'n':
		return nil, p.literal("null")
	default:
		if c == '-' || isDigit(c) {
			return p.number()
		}
		return nil, p.stop(failSyntax, p.i, "")
	}
}

func (p *parser) literal(lit string) bool {
	for k := 0; k < len(lit); k++ {
		switch {
		case p.i+k >= len(p.b):
			return p.stop(failEOF, 0, "")
		case p.b[p.i+k] != lit[k]:
			return p.stop(failSyntax, p.i+k, "")
		}
	}
	p.i += len(lit)
	return true
}

func (p *parser) number() (any, bool) {
	start := p.i
	end, exp, st := lexNumber(p.b, start)
	if st != 0 {
		return nil, p.stop(st, end, "")
	}
	p.i = end
	text := p.b[start:end]
	if p.scan {
		if exp || len(text) > maxNumberLength {
			if err := checkNumber(json.Number(text)); err != nil {
				return nil, p.stop(failNumber, end, err.Error())
			}
		}
		return nil, true
	}
	var e *cachedScalar
	if p.cache != nil && len(text) <= maxCachedValue {
		if e = p.cache.at(p.cache.nums, text); e.v != nil && e.text == string(text) {
			return e.v, true
		}
	}
	n := json.Number(p.arena.string(text))
	if exp || len(text) > maxNumberLength {
		if err := checkNumber(n); err != nil {
			return nil, p.stop(failNumber, end, err.Error())
		}
	}
	if e != nil {
		*e = cachedScalar{string(n), n}
		return e.v, true
	}
	return n, true
}

// str reads the string at p.i; a string of at most limit bytes is looked
// up in cached (when not nil), and comes with its boxed value.
func (p *parser) str(cached []cachedScalar, limit int) (string, any, bool) {
	start := p.i
	end, escaped, st := lexString(p.b, start)
	if st != 0 {
		return "", nil, p.stop(st, end, "")
	}
	p.i = end
	raw := p.b[start+1 : end-1]
	if escaped {
		return p.unescape(raw), nil, true
	}
	if cached != nil && len(raw) <= limit {
		e := p.cache.at(cached, raw)
		if e.v == nil || e.text != string(raw) {
			s := p.arena.string(raw)
			*e = cachedScalar{s, s}
		}
		return e.text, e.v, true
	}
	return p.arena.string(raw), nil, true
}

func (p *parser) stringValue() (any, bool) {
	if p.scan {
		end, _, st := lexString(p.b, p.i)
		if st != 0 {
			return nil, p.stop(st, end, "")
		}
		p.i = end
		return nil, true
	}
	var cached []cachedScalar
	if p.cache != nil {
		cached = p.cache.strs
	}
	s, v, ok := p.str(cached, maxCachedValue)
	if v == nil {
		v = s
	}
	return v, ok
}

func (p *parser) key() (string, bool) {
	var cached []cachedScalar
	if p.cache != nil {
		cached = p.cache.keys
	}
	s, _, ok := p.str(cached, maxCachedKey)
	return s, ok
}

// unescape decodes the escapes of a string's text (valid: lexString) as
// encoding/json does.
func (p *parser) unescape(raw []byte) string {
	out := p.tmp[:0]
	for i := 0; i < len(raw); {
		if raw[i] != '\\' {
			j := bytes.IndexByte(raw[i:], '\\')
			if j < 0 {
				j = len(raw) - i
			}
			out = append(out, raw[i:i+j]...)
			i += j
			continue
		}
		c := raw[i+1]
		i += 2
		switch c {
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'u':
			r := hex4(raw[i:])
			i += 4
			if utf16.IsSurrogate(r) {
				if i+6 <= len(raw) && raw[i] == '\\' && raw[i+1] == 'u' {
					if d := utf16.DecodeRune(r, hex4(raw[i+2:])); d != utf8.RuneError {
						out = utf8.AppendRune(out, d)
						i += 6
						continue
					}
				}
				r = utf8.RuneError
			}
			out = utf8.AppendRune(out, r)
		default: // '"', '\\', '/'
			out = append(out, c)
		}
	}
	p.tmp = out
	return p.arena.string(out)
}

func hex4(b []byte) rune {
	var r rune
	for _, c := range b[:4] {
		switch {
		case c <= '9':
			c -= '0'
		case c >= 'a':
			c -= 'a' - 10
		default:
			c -= 'A' - 10
		}
		r = r*16 + rune(c)
	}
	return r
}

func (p *parser) object(depth int) (any, bool) {
	open := p.i
	if depth+1 > p.maxDepth {
		return nil, p.stop(failDepth, open, fmt.Sprintf("nesting deeper than %d levels", p.maxDepth))
	}
	lo := open - p.ws
	p.i++
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == '}' {
		p.i++
		if p.scan {
			return nil, true
		}
		return map[string]any{}, true
	}
	kbase, vbase, sbase, ksbase := len(p.keys), len(p.vals), len(p.spans), len(p.keySpans)
	var m map[string]any // once the object has more than objectScanMax members
	for {
		if p.i >= len(p.b) {
			return nil, p.stop(failEOF, 0, "")
		}
		if p.b[p.i] != '"' {
			return nil, p.stop(failSyntax, p.i, "")
		}
		kstart := p.i
		k, ok := p.key()
		if !ok {
			return nil, false
		}
		if p.trusted {
			// a scan found no duplicate
		} else if m != nil {
			if _, dup := m[k]; dup {
				return nil, p.stop(failDup, p.i, fmt.Sprintf("duplicate member name %q", k))
			}
		} else {
			for _, o := range p.keys[kbase:] {
				if o == k {
					return nil, p.stop(failDup, p.i, fmt.Sprintf("duplicate member name %q", k))
				}
			}
		}
		kend := p.i
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.stop(failEOF, 0, "")
		}
		if p.b[p.i] != ':' {
			return nil, p.stop(failSyntax, p.i, "")
		}
		p.i++
		p.skipSpace()
		vlo := p.i - p.ws
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		if p.tables != nil {
			p.spans = push(p.spans, tspan{vlo, p.i - p.ws})
			p.keySpans = push(p.keySpans, tspan{kstart, kend})
		}
		p.keys = push(p.keys, k)
		p.vals = push(p.vals, v)
		if m != nil {
			m[k] = v
		} else if n := len(p.keys) - kbase; n == objectScanMax {
			m = make(map[string]any, 4*n)
			for j := range n {
				m[p.keys[kbase+j]] = p.vals[vbase+j]
			}
		}
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.stop(failEOF, 0, "")
		}
		if c := p.b[p.i]; c == ',' {
			p.i++
			p.skipSpace()
			continue
		} else if c != '}' {
			return nil, p.stop(failSyntax, p.i, "")
		}
		p.i++
		break
	}
	n := len(p.keys) - kbase
	if m == nil && !p.scan {
		m = make(map[string]any, n)
		for j := range n {
			m[p.keys[kbase+j]] = p.vals[vbase+j]
		}
	}
	if hi := p.i - p.ws; p.tables != nil && hi-lo >= tableMinSpan {
		t := &ctable{object: true, canon: true, keys: slices.Clone(p.keys[kbase:]), vals: slices.Clone(p.spans[sbase:])}
		for _, ks := range p.keySpans[ksbase:] {
			if !keyIsCanonical(p.b[ks.lo:ks.hi]) {
				t.canon = false
				break
			}
		}
		if n > 8 {
			t.index = make(map[string]int, n)
			for j, k := range t.keys {
				t.index[k] = j
			}
		}
		p.tables[lo] = t
	}
	clear(p.vals[vbase:])
	clear(p.keys[kbase:])
	p.keys, p.vals = p.keys[:kbase], p.vals[:vbase]
	if p.tables != nil {
		p.spans, p.keySpans = p.spans[:sbase], p.keySpans[:ksbase]
	}
	if p.scan {
		return nil, true
	}
	return m, true
}

func (p *parser) array(depth int) (any, bool) {
	open := p.i
	if depth+1 > p.maxDepth {
		return nil, p.stop(failDepth, open, fmt.Sprintf("nesting deeper than %d levels", p.maxDepth))
	}
	if p.nextBig < len(p.bigs) && p.bigs[p.nextBig].open == open {
		return p.arrayParts(depth), true
	}
	lo := open - p.ws
	p.i++
	p.skipSpace()
	if p.i < len(p.b) && p.b[p.i] == ']' {
		p.i++
		if p.scan {
			return nil, true
		}
		return []any{}, true
	}
	vbase, sbase, mbase := len(p.vals), len(p.spans), len(p.marks)
	n := 0
	for {
		if p.scan && n%p.part == 0 {
			p.marks = push(p.marks, p.i)
		}
		vlo := p.i - p.ws
		v, ok := p.value(depth + 1)
		if !ok {
			return nil, false
		}
		n++
		if p.tables != nil {
			p.spans = push(p.spans, tspan{vlo, p.i - p.ws})
		}
		if !p.scan {
			p.vals = push(p.vals, v)
		}
		p.skipSpace()
		if p.i >= len(p.b) {
			return nil, p.stop(failEOF, 0, "")
		}
		if c := p.b[p.i]; c == ',' {
			p.i++
			p.skipSpace()
			continue
		} else if c != ']' {
			return nil, p.stop(failSyntax, p.i, "")
		}
		p.i++
		break
	}
	var out []any
	if !p.scan {
		out = slices.Clone(p.vals[vbase:])
	}
	if hi := p.i - p.ws; p.tables != nil && hi-lo >= tableMinSpan {
		p.tables[lo] = &ctable{canon: true, vals: slices.Clone(p.spans[sbase:])}
	}
	if p.tables != nil {
		p.spans = p.spans[:sbase]
	}
	if p.scan {
		if n >= p.minBig {
			p.bigs = append(p.bigs, &bigArray{open: open, end: p.i, n: n, part: p.part, starts: slices.Clone(p.marks[mbase:])})
		}
		p.marks = p.marks[:mbase]
		return nil, true
	}
	clear(p.vals[vbase:])
	p.vals = p.vals[:vbase]
	return out, true
}

// push appends v to a scratch stack, doubling its capacity when full
// (append grows large slices by a quarter, which for a long array copies
// the stack some twenty times).
func push[T any](s []T, v T) []T {
	if len(s) == cap(s) {
		s = slices.Grow(s, max(len(s), 64))
	}
	return append(s, v)
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

func isHex(c byte) bool { return isDigit(c) || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' }

// lexNumber returns the end of the number that starts at b[i] ('-' or a
// digit), the longest prefix that is a JSON number, and whether it has an
// exponent. st is failEOF when
// the text ends before the number is complete, failSyntax (end at the
// offending byte) when a byte breaks it.
func lexNumber(b []byte, i int) (end int, exp bool, st failKind) {
	j := i
	if b[j] == '-' {
		j++
	}
	if j >= len(b) {
		return j, exp, failEOF
	}
	switch c := b[j]; {
	case c == '0':
		j++
	case c >= '1' && c <= '9':
		j++
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	default:
		return j, exp, failSyntax
	}
	if j < len(b) && b[j] == '.' {
		j++
		if j >= len(b) {
			return j, exp, failEOF
		}
		if !isDigit(b[j]) {
			return j, exp, failSyntax
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	if j < len(b) && (b[j] == 'e' || b[j] == 'E') {
		exp = true
		j++
		if j < len(b) && (b[j] == '+' || b[j] == '-') {
			j++
		}
		if j >= len(b) {
			return j, exp, failEOF
		}
		if !isDigit(b[j]) {
			return j, exp, failSyntax
		}
		for j < len(b) && isDigit(b[j]) {
			j++
		}
	}
	return j, exp, 0
}

// Masks for reading eight bytes of a string at a time.
const (
	ones  = 0x0101010101010101
	highs = 0x8080808080808080
)

// plainWord reports whether none of the eight bytes in x is a quote, a
// backslash or a control character.
func plainWord(x uint64) bool {
	less := (x - ones*0x20) &^ x
	quote := x ^ (ones * '"')
	slash := x ^ (ones * '\\')
	return (less|(quote-ones)&^quote|(slash-ones)&^slash)&highs == 0
}

// lexString returns the end of the string that starts at b[i] (a '"'),
// just after its closing quote, and whether it holds escapes. b is
// UTF-8. st is failEOF when the text ends inside the string, failSyntax
// (end at the offending byte) at a control character or a bad escape.
func lexString(b []byte, i int) (end int, escaped bool, st failKind) {
	j := i + 1
	for {
		for j+8 <= len(b) && plainWord(binary.LittleEndian.Uint64(b[j:])) {
			j += 8
		}
		if j >= len(b) {
			return j, escaped, failEOF
		}
		switch c := b[j]; {
		case c == '"':
			return j + 1, escaped, 0
		case c == '\\':
			escaped = true
			j++
			if j >= len(b) {
				return j, escaped, failEOF
			}
			switch b[j] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				j++
			case 'u':
				j++
				for range 4 {
					if j >= len(b) {
						return j, escaped, failEOF
					}
					if !isHex(b[j]) {
						return j, escaped, failSyntax
					}
					j++
				}
			default:
				return j, escaped, failSyntax
			}
		case c < ' ':
			return j, escaped, failSyntax
		default:
			j++
		}
	}
}

// trailingOffset is where the replaced decoder said the data after the
// value is, for the data starting at b[i] (not white space): after the
// token there when it read one (a bracket, a complete scalar), else at
// it.
func trailingOffset(b []byte, i int) int {
	switch c := b[i]; {
	case c == '[' || c == '{':
		return i + 1
	case c == '"':
		if end, _, st := lexString(b, i); st == 0 {
			return end
		}
	case c == '-' || isDigit(c):
		if end, _, st := lexNumber(b, i); st == 0 {
			return end
		}
	default:
		for _, lit := range []string{"true", "false", "null"} {
			if bytes.HasPrefix(b[i:], []byte(lit)) {
				return i + len(lit)
			}
		}
	}
	return i
}

// arenaBlock is the size of the blocks a parse copies its strings into:
// a string kept after its document is dropped keeps at most one block.
const arenaBlock = 8 << 10

// stringArena copies strings into shared blocks, so that a parse does
// not allocate once per string. A block is never written where a string
// was handed out.
type stringArena struct {
	buf   *strings.Builder
	block int
}

func (a *stringArena) string(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	if len(b) > a.block/4 {
		return string(b)
	}
	if a.buf == nil || a.buf.Cap()-a.buf.Len() < len(b) {
		a.buf = new(strings.Builder)
		a.buf.Grow(a.block)
	}
	n := a.buf.Len()
	a.buf.Write(b)
	return a.buf.String()[n:]
}

// Scalar cache sizes: texts from scalarCacheMinText bytes have one, of
// one slot per 64 bytes of text, from 256 to 4096; member names of at
// most maxCachedKey bytes are looked up, strings and numbers of at most
// maxCachedValue bytes (longer ones are seldom the same).
const (
	scalarCacheMinText = 16 << 10
	maxCachedKey       = 24
	maxCachedValue     = 8
)

// scalarCache keeps the member names, strings and numbers of a parse that
// repeat, once each: a direct-mapped table per kind, by hash of the text.
// A decoded value is immutable, so sharing one is safe.
type scalarCache struct {
	shift            uint
	keys, strs, nums []cachedScalar
}

type cachedScalar struct {
	text string
	v    any // the boxed value (strings and numbers)
}

func newScalarCache(textLen int) *scalarCache {
	n, bits := scalarCacheSlots(textLen)
	return &scalarCache{
		shift: 64 - bits,
		keys:  make([]cachedScalar, n), strs: make([]cachedScalar, n), nums: make([]cachedScalar, n),
	}
}

// newKeyCache is a scalarCache for member names only (a scan's).
func newKeyCache(textLen int) *scalarCache {
	n, bits := scalarCacheSlots(textLen)
	return &scalarCache{shift: 64 - bits, keys: make([]cachedScalar, n)}
}

func scalarCacheSlots(textLen int) (int, uint) {
	n, bits := 256, uint(8)
	for n < 4096 && n*64 < textLen {
		n, bits = 2*n, bits+1
	}
	return n, bits
}

// at returns the slot of text (at most maxCachedKey bytes) in table. The
// hash reads the first and the last eight bytes and the length, which is
// all of a text of up to 16 bytes; texts that collide only take turns in
// the slot.
func (c *scalarCache) at(table []cachedScalar, text []byte) *cachedScalar {
	var x uint64
	if n := len(text); n >= 8 {
		x = binary.LittleEndian.Uint64(text) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(text[n-8:]), 29)
	} else {
		for _, c := range text {
			x = x<<8 | uint64(c)
		}
	}
	x ^= uint64(len(text)) << 59
	return &table[(x*0x9e3779b97f4a7c15)>>c.shift]
}
