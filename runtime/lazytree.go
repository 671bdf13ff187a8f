package runtime

import (
	"strconv"

	"github.com/patchbench/patchbench/runtime/internal/overlay"
)

// The lazy tree of a parsed state (docs/development.md). ParseDocument
// checks the text and builds no value; a verification on the footprint path
// needs only the containers on the way to the patch's foci, the values the
// invariants read and the schema's verdict on the whole state. So until the
// value is built whole (Value, or a gate that needs it), a parsed state's
// tree is read from its canonical text: each container of at least
// lazyMinSpan bytes of text is an overlay.Node over a textSource, which
// finds a child by the container's member table (textBase.table, the parse's
// own for the large ones) and builds a smaller child's value from its text
// alone. Building the whole tree (Build) is the document's own build
// (Document.plain), once, whatever part of the tree asked for it.

// lazyMinSpan is the size of text from which a container of a parsed
// state is read from its text rather than built; smaller containers are
// built when reached. The tests lower it to read every container lazily.
var lazyMinSpan = tableMinSpan

// textSource is a container of a parsed document's canonical text, not
// built: an overlay.Source.
type textSource struct {
	doc  *Document
	tb   *textBase
	span tspan // the container's text in tb.buf
	t    *ctable
	path Pointer // its location, to find its value in the built document
}

// lazyRoot returns the lazy tree of d, a parsed document whose value is
// not built yet, or nil when its text is too small or not a container.
func (d *Document) lazyRoot() any {
	m := d.text()
	if m == nil || len(m.edits) > 0 {
		return nil
	}
	if n := lazyChild(d, m.base, tspan{0, len(m.base.buf)}, Pointer{}); n != nil {
		return n
	}
	return nil
}

// lazyChild is the value of the text tb.buf[s.lo:s.hi] at path: a lazy
// Node when it is a container of at least lazyMinSpan bytes whose table
// reads, nil otherwise.
func lazyChild(d *Document, tb *textBase, s tspan, path Pointer) *overlay.Node {
	if s.hi-s.lo < lazyMinSpan || s.hi-s.lo < 2 || (tb.buf[s.lo] != '{' && tb.buf[s.lo] != '[') {
		return nil
	}
	t, ok := tb.table(s)
	if !ok {
		return nil
	}
	return overlay.Lazy(&textSource{doc: d, tb: tb, span: s, t: t, path: path})
}

func (s *textSource) Object() bool { return s.t.object }

func (s *textSource) Len() int { return len(s.t.vals) }

func (s *textSource) Keys() []string {
	if !s.t.object {
		return nil
	}
	return s.t.keys
}

func (s *textSource) Member(name string) (any, bool) {
	if !s.t.object {
		return nil, false
	}
	sp, ok := s.t.child(name)
	if !ok {
		return nil, false
	}
	return s.child(sp, name), true
}

func (s *textSource) Elem(i int) any {
	return s.child(s.t.vals[i], strconv.Itoa(i))
}

// ElemText is the canonical text of element i of an array
// (schemaindex.ElemTexter).
func (s *textSource) ElemText(i int) []byte {
	sp := s.t.vals[i]
	return s.tb.buf[sp.lo:sp.hi]
}

// child is the value of the child tok, at span sp: taken from the
// document's value when that is built, else a lazy Node, or its value
// built from its text.
func (s *textSource) child(sp tspan, tok string) any {
	if s.doc.built.Load() {
		v, _ := getAtFrom(s.doc.value, s.path.Append(tok), 0)
		return v
	}
	if sp.hi-sp.lo >= lazyMinSpan {
		if n := lazyChild(s.doc, s.tb, sp, s.path.Append(tok)); n != nil {
			return n
		}
	}
	if share := lazyBuildShare; share > 0 && s.doc.lazyBuilt.Add(int64(sp.hi-sp.lo)) > int64(len(s.tb.buf)/share) {
		// Enough of the text was built child by child (an invariant
		// reading every element, say): build the value once, and read
		// it from now on, on this state and the states committed from it.
		v, _ := getAtFrom(s.doc.plain(), s.path.Append(tok), 0)
		return v
	}
	return buildJSON(s.tb.buf[sp.lo:sp.hi], nil)
}

// lazyBuildShare bounds what a lazy tree builds child by child: once the
// children it built hold more than 1/lazyBuildShare of the text, the
// document's value is built whole (so reading a lazy tree costs at most
// that share more than building it whole at once). The tests set it to 0
// (never) or make it large (at once).
var lazyBuildShare = 4

// Build is the container's plain value: the document's, built once.
func (s *textSource) Build() any {
	v, _ := getAt(s.doc.plain(), s.path)
	return v
}
