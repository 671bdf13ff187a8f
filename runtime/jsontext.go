package runtime

import (
	"bytes"
	"encoding/json"
	"slices"
	"sync"

	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/patchbench/patchbench/internal/jsonskip"
)

// The text of a state. A Document keeps, beside its value, a canonical
// text: the text the apply library (evanphx/json-patch/v5) would write for
// it, that is its text without insignificant white space (json.Compact).
// The library re-encodes only the containers a patch walks through, and
// for those only their member names (the rest of each container is copied
// as it was); so when those names are already spelled as the library
// spells them, the library's result is the old text with the changed
// subtrees replaced. A state's text is therefore kept as a base text plus
// edits (textModel), and located by lazily built tables of each
// container's members (textBase), never re-read whole for one patch.

// tspan is a value's text, [lo, hi) in a buffer.
type tspan struct{ lo, hi int }

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// isCompact reports whether b has no white space outside its strings.
func isCompact(b []byte) bool {
	for i := 0; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			k := jsonskip.String(b, i)
			if k < 0 {
				return false
			}
			i = k - 1
		case isSpace(c):
			return false
		}
	}
	return true
}

// canonicalText returns the text the apply library writes for the JSON
// text b when it leaves a value as it is: b without insignificant white
// space (its compact form keeps every other byte, escapes included).
func canonicalText(b []byte) []byte {
	if isCompact(b) {
		return b
	}
	var out bytes.Buffer
	out.Grow(len(b))
	if err := json.Compact(&out, b); err != nil {
		return nil
	}
	return out.Bytes()
}

// compactValid is canonicalText for a text known to be valid JSON (a
// parsed document's): its white space outside strings removed.
func compactValid(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); {
		switch c := b[i]; {
		case c == '"':
			k := jsonskip.String(b, i)
			out = append(out, b[i:k]...)
			i = k
		case isSpace(c):
			i++
		default:
			j := i + 1
			for j < len(b) && b[j] != '"' && !isSpace(b[j]) {
				j++
			}
			out = append(out, b[i:j]...)
			i = j
		}
	}
	return out
}

var (
	lineSep = []byte("\u2028")
	paraSep = []byte("\u2029")
)

// keyIsCanonical reports whether raw, a member name as written (quotes
// included), is spelled the way the apply library re-encodes the name
// when it rewrites the object that holds it. Names without escapes or
// U+2028/U+2029 always are; for the others the library itself is asked.
func keyIsCanonical(raw []byte) bool {
	if bytes.IndexByte(raw, '\\') < 0 && !bytes.Contains(raw, lineSep) && !bytes.Contains(raw, paraSep) {
		return true
	}
	doc := make([]byte, 0, len(raw)+4)
	doc = append(append(append(doc, '{'), raw...), ":0}"...)
	out, err := emptyPatch.ApplyWithOptions(doc, libraryOptions(DefaultLimits))
	return err == nil && bytes.Equal(out, doc)
}

var emptyPatch = jsonpatch.Patch{}

// ctable lists the members or elements of one container, in text order.
type ctable struct {
	object bool
	keys   []string       // member names (objects)
	vals   []tspan        // value spans, in the table's buffer
	index  map[string]int // member name → position, for larger objects
	canon  bool           // every member name is spelled as the library re-encodes it
}

// buildTable reads the container whose text is b[lo:hi]. ok is false when
// the text is not a container or not well formed.
func buildTable(b []byte, lo, hi int) (*ctable, bool) {
	if hi-lo < 2 {
		return nil, false
	}
	t := &ctable{canon: true}
	switch b[lo] {
	case '{':
		t.object = true
	case '[':
	default:
		return nil, false
	}
	i := lo + 1
	if b[i] == '}' || b[i] == ']' {
		return t, i+1 == hi
	}
	for {
		if t.object {
			if b[i] != '"' {
				return nil, false
			}
			k := jsonskip.String(b, i)
			if k < 0 || k >= hi || b[k] != ':' {
				return nil, false
			}
			raw := b[i:k]
			var name string
			if bytes.IndexByte(raw, '\\') < 0 {
				name = string(raw[1 : len(raw)-1])
			} else if err := json.Unmarshal(raw, &name); err != nil {
				return nil, false
			}
			if t.canon && !keyIsCanonical(raw) {
				t.canon = false
			}
			t.keys = append(t.keys, name)
			i = k + 1
		}
		j := jsonskip.Value(b, i)
		if j < 0 || j >= hi {
			return nil, false
		}
		t.vals = append(t.vals, tspan{i, j})
		switch b[j] {
		case ',':
			i = j + 1
			continue
		case '}', ']':
			if j+1 != hi {
				return nil, false
			}
		default:
			return nil, false
		}
		break
	}
	if t.object && len(t.keys) > 8 {
		t.index = make(map[string]int, len(t.keys))
		for n, k := range t.keys {
			t.index[k] = n
		}
	}
	return t, true
}

// child returns the span of the member or element tok.
func (t *ctable) child(tok string) (tspan, bool) {
	if t.object {
		if t.index != nil {
			n, ok := t.index[tok]
			if !ok {
				return tspan{}, false
			}
			return t.vals[n], true
		}
		for n := len(t.keys) - 1; n >= 0; n-- { // a later duplicate would win
			if t.keys[n] == tok {
				return t.vals[n], true
			}
		}
		return tspan{}, false
	}
	i, err := ParseIndex(tok)
	if err != nil || i >= len(t.vals) {
		return tspan{}, false
	}
	return t.vals[i], true
}

// textBase is a canonical text with the member tables of its containers,
// built when first needed and kept: a state's containers are read once,
// however many patches are checked against it.
type textBase struct {
	buf    []byte
	mu     sync.Mutex
	tables map[int]*ctable // by the container's offset
	// sorted is true when buf is encodeJSON of the value it was built
	// from (members sorted by name): then any state whose text is buf
	// with edits is encodeJSON of its value once each edit's text is
	// re-encoded (encodeJSON is compositional), which SetString uses.
	sorted bool
}

func newTextBase(buf []byte) *textBase { return &textBase{buf: buf, tables: map[int]*ctable{}} }

func (tb *textBase) table(s tspan) (*ctable, bool) {
	tb.mu.Lock()
	t, ok := tb.tables[s.lo]
	tb.mu.Unlock()
	if ok {
		return t, t != nil
	}
	t, ok = buildTable(tb.buf, s.lo, s.hi)
	if !ok {
		t = nil
	}
	tb.mu.Lock()
	tb.tables[s.lo] = t
	tb.mu.Unlock()
	return t, ok
}

// locate returns the span of the value at p and whether every container
// strictly above it spells its member names canonically.
func (tb *textBase) locate(p Pointer) (tspan, bool, bool) {
	cur := tspan{0, len(tb.buf)}
	canon := true
	for _, tok := range p {
		t, ok := tb.table(cur)
		if !ok {
			return tspan{}, false, false
		}
		canon = canon && t.canon
		if cur, ok = t.child(tok); !ok {
			return tspan{}, false, false
		}
	}
	return cur, canon, true
}

// locateIn is locate within a text that has no tables of its own (an
// edit's text): each container on the way is read.
func locateIn(b []byte, p Pointer) (tspan, bool, bool) {
	cur := tspan{0, len(b)}
	canon := true
	for _, tok := range p {
		t, ok := buildTable(b, cur.lo, cur.hi)
		if !ok {
			return tspan{}, false, false
		}
		canon = canon && t.canon
		if cur, ok = t.child(tok); !ok {
			return tspan{}, false, false
		}
	}
	return cur, canon, true
}

// textEdit replaces the text of the value at path, tb.buf[lo:hi], by text.
type textEdit struct {
	lo, hi int
	path   Pointer
	text   []byte
}

// textModel is a state's canonical text: a base text and, for a committed
// state, the edits that the commits since that base made, sorted, disjoint
// and none inside another. Its size is known without building the text.
type textModel struct {
	base  *textBase
	edits []textEdit
	size  int
}

// Limits on how far a state's text may drift from its base before a
// commit builds it anew (an amortised cost of O(size) every so many
// commits, instead of a lookup cost growing with each one).
const (
	maxTextEdits     = 64
	maxTextEditShare = 4 // edits may hold up to size/maxTextEditShare bytes
)

func newTextModel(buf []byte) *textModel {
	return &textModel{base: newTextBase(buf), size: len(buf)}
}

// bytes builds the text, in one allocation that is written once (no
// zeroing first: bytes.Join).
func (m *textModel) bytes() []byte {
	if len(m.edits) == 0 {
		return m.base.buf
	}
	parts := make([][]byte, 0, 2*len(m.edits)+1)
	at := 0
	for _, e := range m.edits {
		parts = append(parts, m.base.buf[at:e.lo], e.text)
		at = e.hi
	}
	return bytes.Join(append(parts, m.base.buf[at:]), nil)
}

// valueText returns the current text of the value at p, and whether every
// container above it spells its member names canonically.
func (m *textModel) valueText(p Pointer) (text []byte, canon, ok bool) {
	for _, e := range m.edits {
		if !p.HasPrefix(e.path) {
			continue
		}
		_, canon, ok = m.base.locate(e.path)
		if !ok {
			return nil, false, false
		}
		s, c2, ok := locateIn(e.text, p[len(e.path):])
		if !ok {
			return nil, false, false
		}
		return e.text[s.lo:s.hi], canon && c2, true
	}
	s, canon, ok := m.base.locate(p)
	if !ok {
		return nil, false, false
	}
	var inner []textEdit
	for _, e := range m.edits {
		if e.lo >= s.lo && e.hi <= s.hi {
			inner = append(inner, e)
		}
	}
	if len(inner) == 0 {
		return m.base.buf[s.lo:s.hi], canon, true
	}
	var out []byte
	at := s.lo
	for _, e := range inner {
		out = append(out, m.base.buf[at:e.lo]...)
		out = append(out, e.text...)
		at = e.hi
	}
	return append(out, m.base.buf[at:s.hi]...), canon, true
}

// textChange is a value's new text.
type textChange struct {
	path     Pointer
	old, new []byte
}

// with returns the model after the changes (to values at disjoint paths
// that exist in the model's text).
func (m *textModel) with(changes []textChange) (*textModel, bool) {
	n := &textModel{base: m.base, edits: slices.Clone(m.edits), size: m.size}
	for _, c := range changes {
		n.size += len(c.new) - len(c.old)
		inside := -1
		for i, e := range n.edits {
			if c.path.HasPrefix(e.path) {
				inside = i
				break
			}
		}
		if inside >= 0 {
			e := &n.edits[inside]
			s, _, ok := locateIn(e.text, c.path[len(e.path):])
			if !ok {
				return nil, false
			}
			text := make([]byte, 0, len(e.text)-(s.hi-s.lo)+len(c.new))
			text = append(append(append(text, e.text[:s.lo]...), c.new...), e.text[s.hi:]...)
			e.text = text
			continue
		}
		s, _, ok := m.base.locate(c.path)
		if !ok {
			return nil, false
		}
		kept := n.edits[:0]
		for _, e := range n.edits {
			if !(e.lo >= s.lo && e.hi <= s.hi) {
				kept = append(kept, e)
			}
		}
		n.edits = kept
		at, _ := slices.BinarySearchFunc(n.edits, s.lo, func(e textEdit, lo int) int { return e.lo - lo })
		n.edits = slices.Insert(n.edits, at, textEdit{lo: s.lo, hi: s.hi, path: c.path, text: c.new})
	}
	return n, true
}

// settled returns m, or m's text as a new base when m's edits have grown
// past maxTextEdits or maxTextEditShare of the text.
func (m *textModel) settled() *textModel {
	edited := 0
	for _, e := range m.edits {
		edited += len(e.text)
	}
	if len(m.edits) > maxTextEdits || edited > m.size/maxTextEditShare {
		return newTextModel(m.bytes())
	}
	return m
}
