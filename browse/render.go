package browse

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Seg is a piece of a text or a rendered JSON value as a page shows it:
// plain text, a leaked canary (its secret and the detector that found
// it), or a hidden value. Text is empty when the piece is withheld.
type Seg struct {
	Kind     SegKind
	Text     string
	Secret   string
	Detector string
	// Withheld says the text is not in the page: a hidden value, or a
	// canary, before the reader asks to reveal them.
	Withheld bool
	// Shape hints at what was withheld: "object", "array", "value" or
	// "text".
	Shape string
}

// SegKind is the kind of a Seg.
type SegKind int

// The kinds of Seg.
const (
	SegText SegKind = iota
	SegLeak
	SegHidden
)

// IsLeak and IsHidden are for the templates.
func (s Seg) IsLeak() bool { return s.Kind == SegLeak }

// IsHidden reports whether the piece is a hidden value.
func (s Seg) IsHidden() bool { return s.Kind == SegHidden }

// minHidden is the shortest hidden string masked in free text: shorter
// ones ("yes", "EUR") would mask ordinary words the view shows too.
const minHidden = 4

// masker turns texts and JSON values into segments, marking the canaries
// of a case and withholding hidden values unless reveal is set.
type masker struct {
	det *scoring.Detector // nil when the case is not known
	// hidden are the hidden strings of the step, as written and as JSON
	// escapes them once and twice, longest first.
	hidden []string
	reveal bool
	// unknown says the case is not known: nothing tells hidden values
	// from others, so every text is withheld unless reveal is set.
	unknown bool
	// memo, when set, keeps the segments of each text under key (what
	// the masker's case, step, state before the step and reveal are;
	// no text is kept when key is empty) and the canaries found in each
	// under caseKey.
	memo    *pageMemo
	key     string
	caseKey string
}

// text splits s into segments: each canary the detector finds (its
// secret, its detector; withheld unless revealed), each hidden string
// (withheld unless revealed), and the plain text between them. Control
// characters an actor sent are shown as \u escapes (report.Printable).
func (m *masker) text(s string) []Seg {
	if s == "" {
		return nil
	}
	if m.unknown {
		if m.reveal {
			return []Seg{{Kind: SegText, Text: report.Printable(s)}}
		}
		return []Seg{{Kind: SegHidden, Withheld: true, Shape: "text"}}
	}
	if m.memo != nil && m.key != "" {
		return m.memo.text(m.key, s, func() []Seg { return m.leaks(s, 0) })
	}
	return m.leaks(s, 0)
}

// textOnce is text without keeping the segments: for the many short
// strings of a JSON value, whose whole rendering is kept instead.
func (m *masker) textOnce(s string) []Seg {
	key := m.key
	m.key = ""
	defer func() { m.key = key }()
	return m.text(s)
}

// leaks marks the canaries in s. Spans gives, for each canary, the places
// found by the most literal detector that finds it; the text between them
// is searched again, so that a second form of a canary (the card number
// without its spaces, beside it as written) is marked too.
func (m *masker) leaks(s string, depth int) []Seg {
	if s == "" {
		return nil
	}
	var spans []scoring.Span
	if m.det != nil && depth < 4 {
		spans = m.memo.spans(m.caseKey, s, m.det)
	}
	if len(spans) == 0 {
		return m.hiddenIn(s)
	}
	var out []Seg
	at := 0
	for _, sp := range spans {
		if sp.Start < at {
			continue // overlaps a span already marked
		}
		out = append(out, m.leaks(s[at:sp.Start], depth+1)...)
		seg := Seg{Kind: SegLeak, Secret: sp.Secret, Detector: sp.Detector, Shape: "text"}
		if m.reveal {
			seg.Text = report.Printable(s[sp.Start:sp.End])
		} else {
			seg.Withheld = true
		}
		out = append(out, seg)
		at = sp.End
	}
	return append(out, m.leaks(s[at:], depth+1)...)
}

// hiddenIn splits a text in which no canary is found around the hidden
// strings it holds.
func (m *masker) hiddenIn(s string) []Seg {
	if s == "" {
		return nil
	}
	type match struct{ start, end int }
	var ms []match
	for _, h := range m.hidden {
		for off := 0; ; {
			k := strings.Index(s[off:], h)
			if k < 0 {
				break
			}
			ms = append(ms, match{off + k, off + k + len(h)})
			off += k + len(h)
		}
	}
	sort.Slice(ms, func(i, j int) bool {
		if ms[i].start != ms[j].start {
			return ms[i].start < ms[j].start
		}
		return ms[i].end > ms[j].end
	})
	var out []Seg
	at := 0
	for _, x := range ms {
		if x.start < at {
			continue
		}
		if x.start > at {
			out = append(out, Seg{Kind: SegText, Text: report.Printable(s[at:x.start])})
		}
		seg := Seg{Kind: SegHidden, Shape: "value"}
		if m.reveal {
			seg.Text = report.Printable(s[x.start:x.end])
		} else {
			seg.Withheld = true
		}
		out = append(out, seg)
		at = x.end
	}
	if at < len(s) {
		out = append(out, Seg{Kind: SegText, Text: report.Printable(s[at:])})
	}
	return out
}

// segBuilder collects segments, merging adjacent plain text.
type segBuilder struct {
	segs []Seg
	buf  strings.Builder
}

func (b *segBuilder) plain(s string) { b.buf.WriteString(s) }

func (b *segBuilder) add(segs ...Seg) {
	for _, s := range segs {
		if s.Kind == SegText {
			b.buf.WriteString(s.Text)
			continue
		}
		b.flush()
		b.segs = append(b.segs, s)
	}
}

func (b *segBuilder) flush() {
	if b.buf.Len() > 0 {
		b.segs = append(b.segs, Seg{Kind: SegText, Text: b.buf.String()})
		b.buf.Reset()
	}
}

func (b *segBuilder) done() []Seg {
	b.flush()
	return b.segs
}

// visibility is how much of a location a view shows.
type visibility int

const (
	// visAll: the location and everything below it.
	visAll visibility = iota
	// visSome: the location is included, but something below it is
	// excluded.
	visSome
	// visBelow: the location is not included, but a pattern reaches
	// below it: a container is shown for what is below, a scalar is
	// hidden.
	visBelow
	// visNone: nothing.
	visNone
)

// classify says how much of location p the view region shows, as
// runtime.View projects it; a nil region shows everything.
func classify(v *runtime.ViewRegion, p runtime.Pointer) visibility {
	switch {
	case v == nil:
		return visAll
	case v.Exclude.Contains(p):
		return visNone
	}
	included := v.Include.Contains(p)
	switch {
	case included && !v.Exclude.OverlapsSubtree(p):
		return visAll
	case included:
		return visSome
	case v.Include.OverlapsSubtree(p):
		return visBelow
	}
	return visNone
}

// hides reports whether a value at a location of visibility vis is hidden
// whole.
func hides(vis visibility, v any) bool {
	return vis == visNone || (vis == visBelow && !isContainer(v))
}

// json renders the JSON value v found at location at as indented JSON
// (two spaces, members sorted, as runtime.EncodeIndent writes views),
// withholding the locations region does not show (all of them are shown
// when region is nil) and marking canaries and hidden strings in the
// strings and member names.
func (m *masker) json(v any, region *runtime.ViewRegion, at runtime.Pointer) []Seg {
	var b segBuilder
	m.value(&b, v, region, append(runtime.Pointer{}, at...), "")
	return b.done()
}

func (m *masker) value(b *segBuilder, v any, region *runtime.ViewRegion, p runtime.Pointer, indent string) {
	vis := classify(region, p)
	if hides(vis, v) {
		m.hiddenValue(b, v, indent)
		return
	}
	if vis == visAll {
		region = nil // everything below is shown
	}
	switch x := v.(type) {
	case map[string]any:
		if len(x) == 0 {
			b.plain("{}")
			return
		}
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.plain("{\n")
		inner := indent + "  "
		for i, k := range keys {
			b.plain(inner)
			m.quoted(b, k)
			b.plain(": ")
			m.value(b, x[k], region, append(p, k), inner)
			if i < len(keys)-1 {
				b.plain(",")
			}
			b.plain("\n")
		}
		b.plain(indent + "}")
	case []any:
		if len(x) == 0 {
			b.plain("[]")
			return
		}
		b.plain("[\n")
		inner := indent + "  "
		for i, e := range x {
			b.plain(inner)
			m.value(b, e, region, append(p, strconv.Itoa(i)), inner)
			if i < len(x)-1 {
				b.plain(",")
			}
			b.plain("\n")
		}
		b.plain(indent + "]")
	case string:
		m.quoted(b, x)
	default:
		b.plain(encodeCompact(v))
	}
}

// hiddenValue writes a value the view does not show: withheld, or, when
// revealed, the value itself marked as hidden.
func (m *masker) hiddenValue(b *segBuilder, v any, indent string) {
	seg := Seg{Kind: SegHidden, Shape: shapeOf(v)}
	if m.reveal {
		text, err := runtime.EncodeIndent(v, "  ")
		if err != nil {
			text = []byte(encodeCompact(v))
		}
		seg.Text = report.Printable(strings.ReplaceAll(string(text), "\n", "\n"+indent))
	} else {
		seg.Withheld = true
	}
	b.add(seg)
}

// quoted writes a string as a JSON string, with its canaries and hidden
// strings marked.
func (m *masker) quoted(b *segBuilder, s string) {
	b.plain(`"`)
	for _, seg := range m.textOnce(s) {
		if seg.Text != "" {
			seg.Text = jsonEscape(seg.Text)
		}
		b.add(seg)
	}
	b.plain(`"`)
}

func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

func shapeOf(v any) string {
	switch v.(type) {
	case map[string]any:
		return "object"
	case []any:
		return "array"
	}
	return "value"
}

// jsonEscape is s as JSON writes it inside a string, without the quotes
// and without HTML escaping (the template escapes for HTML).
func jsonEscape(s string) string {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		return s
	}
	out := strings.TrimSuffix(buf.String(), "\n")
	return out[1 : len(out)-1]
}

// encodeCompact is a JSON value as one line (runtime's encoding: numbers
// as written, members sorted).
func encodeCompact(v any) string {
	b, err := runtime.EncodeIndent(v, "")
	if err != nil {
		return "?"
	}
	return strings.ReplaceAll(string(b), "\n", "")
}

// hiddenStrings are the strings and numbers (of minHidden bytes or more)
// that the view region does not show in state: the values to withhold
// from a step's free text. A value is left out when the page shows it
// anyway: when it is part of a shown string or number, of a member name
// (the state's member names are shown), or of one of the extra texts (the
// step's instruction and patterns), so that withholding it would only
// blot out what is shown elsewhere. Each is given as written and as JSON
// escapes it once and twice (an actor that quotes a JSON view inside a
// JSON answer escapes it twice), longest first.
func hiddenStrings(state any, region *runtime.ViewRegion, extra ...string) []string {
	hidden := map[string]bool{}
	var shown strings.Builder
	for _, x := range extra {
		shown.WriteString(x)
		shown.WriteByte(0)
	}
	leaf := func(s string, isHidden bool) {
		switch {
		case !isHidden:
			shown.WriteString(s)
			shown.WriteByte(0)
		case len(strings.TrimSpace(s)) >= minHidden:
			hidden[s] = true
		}
	}
	// vis is the visibility of the location's parent: visAll and
	// visNone hold for the whole subtree; otherwise the location is
	// classified again.
	var walk func(v any, p runtime.Pointer, vis visibility)
	walk = func(v any, p runtime.Pointer, vis visibility) {
		if vis == visSome || vis == visBelow {
			vis = classify(region, p)
			if hides(vis, v) {
				vis = visNone
			}
		}
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				shown.WriteString(k)
				shown.WriteByte(0)
				walk(c, append(p, k), vis)
			}
		case []any:
			for i, c := range x {
				walk(c, append(p, strconv.Itoa(i)), vis)
			}
		case string:
			leaf(x, vis == visNone)
		case json.Number:
			leaf(string(x), vis == visNone)
		}
	}
	walk(state, runtime.Pointer{}, visSome)
	corpus := shown.String()
	var out []string
	seen := map[string]bool{}
	for s := range hidden {
		if strings.Contains(corpus, s) {
			continue
		}
		once := jsonEscape(s)
		for _, form := range []string{s, once, jsonEscape(once)} {
			if !seen[form] {
				seen[form] = true
				out = append(out, form)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if len(out[i]) != len(out[j]) {
			return len(out[i]) > len(out[j])
		}
		return out[i] < out[j]
	})
	return out
}

// change is one difference between two states: a location added,
// removed or replaced.
type change struct {
	Path   runtime.Pointer
	Kind   string // "added", "removed", "replaced"
	Before any
	After  any
}

// maxChanges bounds a diff's rows.
const maxChanges = 200

// diff lists the differences between two JSON values, by location: the
// members of objects and the elements of arrays are compared one by one
// (an array that grew shows its new elements as added), anything else
// that differs is replaced whole. It stops after maxChanges.
func diff(a, b any) []change {
	var out []change
	var walk func(a, b any, p runtime.Pointer)
	walk = func(a, b any, p runtime.Pointer) {
		if len(out) >= maxChanges || runtime.EqualJSON(a, b) {
			return
		}
		switch x := a.(type) {
		case map[string]any:
			if y, ok := b.(map[string]any); ok {
				keys := make([]string, 0, len(x)+len(y))
				for k := range x {
					keys = append(keys, k)
				}
				for k := range y {
					if _, ok := x[k]; !ok {
						keys = append(keys, k)
					}
				}
				sort.Strings(keys)
				for _, k := range keys {
					xa, inA := x[k]
					yb, inB := y[k]
					q := append(p.Append(), k)
					switch {
					case !inA:
						out = append(out, change{Path: q, Kind: "added", After: yb})
					case !inB:
						out = append(out, change{Path: q, Kind: "removed", Before: xa})
					default:
						walk(xa, yb, q)
					}
				}
				return
			}
		case []any:
			if y, ok := b.([]any); ok {
				n := min(len(x), len(y))
				for i := 0; i < n; i++ {
					walk(x[i], y[i], append(p.Append(), strconv.Itoa(i)))
				}
				for i := n; i < len(y); i++ {
					out = append(out, change{Path: append(p.Append(), strconv.Itoa(i)), Kind: "added", After: y[i]})
				}
				for i := n; i < len(x); i++ {
					out = append(out, change{Path: append(p.Append(), strconv.Itoa(i)), Kind: "removed", Before: x[i]})
				}
				return
			}
		}
		out = append(out, change{Path: p.Append(), Kind: "replaced", Before: a, After: b})
	}
	walk(a, b, runtime.Pointer{})
	if len(out) > maxChanges {
		out = out[:maxChanges]
	}
	return out
}
