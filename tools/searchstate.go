package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchbench/patchbench/runtime"
)

// Search_state's bounds.
const (
	// MaxSearchText bounds search_state's text, in bytes.
	MaxSearchText = 1024
	// SearchExcerpt is how much of a long matched string search_state
	// shows, in bytes: an excerpt around the first match, its cuts
	// marked "…".
	SearchExcerpt = 160
)

// SearchState is the tool search_state: the locations of the state as
// the actor may see it whose scalar value contains a text, ignoring
// case (strings as they are, numbers and booleans as their JSON text;
// null and member names are not searched), answered as JSON Pointers
// with the value (a long string as an excerpt around the match), in
// document order (object members by name), a page at a time (see page).
// A location the actor may not see is never searched: it is not in the
// view, and a hidden array element's null placeholder is skipped.
var SearchState = Def{
	Spec: Spec{
		Name: "search_state",
		Description: "Find the values in the shared state, as you may see it, that contain a text, ignoring case (strings, and numbers and booleans as JSON text; not member names). " +
			"Answers {\"total\", \"offset\", \"shown\", \"note\", \"matches\": [{\"pointer\", \"value\"}]} in document order, a long value as an excerpt around the match, a page at a time.",
		Parameters: fmt.Appendf(nil, `{"type":"object","properties":{"text":{"type":"string","minLength":1,"description":"the text to find, e.g. an id or a name"},"limit":{"type":"integer","minimum":1,"description":"the most matches shown (default %d)"},"offset":{"type":"integer","minimum":0,"description":"the first match shown (default 0)"}},"required":["text"],"additionalProperties":false}`, DefaultQueryLimit),
	},
	Usage: "search_state(text, limit) finds the values that contain a text with their JSON Pointers",
	Call:  searchState,
}

// searchArgs are search_state's arguments.
type searchArgs struct {
	Text   *string `json:"text"`
	Limit  *int    `json:"limit"`
	Offset *int    `json:"offset"`
}

func searchState(ctx context.Context, s Step, args string) (Result, error) {
	var a searchArgs
	if err := decodeArgs(args, &a); err != nil {
		return Result{Text: err.Error(), Code: CodeMalformed}, nil
	}
	if a.Text == nil || *a.Text == "" {
		return Result{Text: `"text" is required and may not be empty`, Code: CodeMalformed}, nil
	}
	if len(*a.Text) > MaxSearchText {
		return Result{Text: fmt.Sprintf(`"text" has %d bytes; the limit is %d`, len(*a.Text), MaxSearchText), Code: CodeMalformed}, nil
	}
	if msg := checkPaging(a.Offset, a.Limit); msg != "" {
		return Result{Text: msg, Code: CodeMalformed}, nil
	}
	offset, limit := deref(a.Offset, 0), deref(a.Limit, DefaultQueryLimit)
	root, ok := s.Lookup(nil)
	if !ok {
		root = nil
	}
	sr := searcher{s: s, f: newFolder(*a.Text), keep: min(offset, 1<<40) + min(limit, 1<<20)}
	if ok {
		sr.walk(root)
	}
	pg := matchPage(sr.found, offset, limit, func(m match, room int) []byte {
		if str, ok := m.value.(string); ok {
			return quote(excerpt(str, sr.f))
		}
		b, _ := encode(m.value)
		return b
	})
	pg.Total = sr.total
	pg.Next = func(i int) string { return fmt.Sprintf("search_state with offset %d", i) }
	elem := pg.Elem
	pg.Elem = func(i, room int) []byte {
		if i >= len(sr.found) {
			return nil
		}
		return elem(i, room)
	}
	return Result{Text: pg.build(resultLimit(s))}, nil
}

// searcher walks a view in document order, counting the scalars that
// contain its text and keeping the first keep of them. The path is
// built in place (an array index as a number until a match needs its
// text) and each depth reuses its buffer of sorted member names.
type searcher struct {
	s     Step
	f     folder
	keep  int
	total int
	found []match
	path  []step
	keys  [][]string
}

// step is one token of the searcher's path: a member name, or an index
// when idx is not negative.
type step struct {
	name string
	idx  int
}

// pointer is the searcher's path as a JSON Pointer.
func (sr *searcher) pointer() runtime.Pointer {
	p := make(runtime.Pointer, len(sr.path))
	for i, t := range sr.path {
		if t.idx >= 0 {
			p[i] = strconv.Itoa(t.idx)
		} else {
			p[i] = t.name
		}
	}
	return p
}

// scalarText is the text search_state reads of a scalar (a string, a
// number or a boolean as JSON text), and false for null and containers.
func scalarText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	case float64: // a value decoded without json.Number
		return strconv.FormatFloat(x, 'g', -1, 64), true
	case bool:
		return strconv.FormatBool(x), true
	}
	return "", false
}

// noMatchBelow reports whether m is an object none of whose values, nor
// the items or values of its containers of scalars, holds the text: an
// object (a record, most often) that walk would find nothing in, told in
// one pass over it in the map's own order, without sorting its names.
// It reports false, without looking further, for an object that holds a
// container of containers (walk then reads it in order).
func (sr *searcher) noMatchBelow(m map[string]any) bool {
	in := func(v any) bool {
		t, ok := scalarText(v)
		return ok && sr.f.in(t)
	}
	for _, v := range m {
		switch x := v.(type) {
		case map[string]any:
			for _, c := range x {
				if isContainer(c) || in(c) {
					return false
				}
			}
		case []any:
			for _, c := range x {
				if isContainer(c) || in(c) {
					return false
				}
			}
		default:
			if in(v) {
				return false
			}
		}
	}
	return true
}

// skipObjects lets walk pass over an object noMatchBelow clears (a
// variable so that a test can compare with reading every one in order).
var skipObjects = true

// isContainer reports whether v is an object or an array.
func isContainer(v any) bool {
	switch v.(type) {
	case map[string]any, []any:
		return true
	}
	return false
}

// walk searches v at the searcher's path. A null is never searched, so
// a hidden array element's placeholder is never matched.
func (sr *searcher) walk(v any) {
	var text string
	switch x := v.(type) {
	case map[string]any:
		if skipObjects && sr.noMatchBelow(x) {
			return // nothing to count or keep: no need to sort its names
		}
		d := len(sr.path)
		for d >= len(sr.keys) {
			sr.keys = append(sr.keys, nil)
		}
		keys := sr.keys[d][:0]
		for k := range x {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		sr.keys[d] = keys
		for _, k := range keys {
			sr.path = append(sr.path, step{name: k, idx: -1})
			sr.walk(x[k])
			sr.path = sr.path[:d]
		}
		return
	case []any:
		d := len(sr.path)
		for i, c := range x {
			sr.path = append(sr.path, step{idx: i})
			sr.walk(c)
			sr.path = sr.path[:d]
		}
		return
	default:
		var ok bool
		if text, ok = scalarText(v); !ok {
			return
		}
	}
	if !sr.f.in(text) {
		return
	}
	sr.total++
	if len(sr.found) < sr.keep {
		sr.found = append(sr.found, match{pointer: sr.pointer(), value: v})
	}
}

// folder finds a text in others ignoring case: byte by byte with ASCII
// case folding when the text is ASCII, by Unicode lower case otherwise.
type folder struct {
	text  string
	ascii bool
	// key is the place in text (ASCII) of the byte whose places in a
	// value an index looks for first: the byte likely rarest in text
	// (keyRank).
	key int
}

func newFolder(text string) folder {
	ascii := true
	for i := 0; i < len(text); i++ {
		if text[i] >= utf8.RuneSelf {
			ascii = false
		}
	}
	if ascii {
		low := strings.ToLower(text)
		key := 0
		for i := 1; i < len(low); i++ {
			if keyRank(low[i]) > keyRank(low[key]) {
				key = i
			}
		}
		return folder{text: low, ascii: true, key: key}
	}
	return folder{text: strings.ToLower(text)}
}

// index is where f's text first is in s, ignoring case, or -1.
func (f folder) index(s string) int {
	if !f.ascii {
		// Lower case may change a string's length: search the lowered
		// string and map the place back by runes.
		low := strings.ToLower(s)
		i := strings.Index(low, f.text)
		if i < 0 {
			return -1
		}
		return min(utf8.RuneCountInString(low[:i]), len(s)) // an approximate place, for the excerpt
	}
	n, k := len(f.text), f.key
	key := f.text[k]
	upper := key
	if 'a' <= key && key <= 'z' {
		upper = key - 'a' + 'A'
	}
	// The candidates, in order, are the places where the key byte is in
	// either case, found with strings.IndexByte (vector instructions)
	// rather than byte by byte: a search reads every scalar of the state.
	for i := 0; i+n <= len(s); i++ {
		c := indexEither(s[i+k:len(s)-n+k+1], key, upper)
		if c < 0 {
			return -1
		}
		i += c
		j := 0
		for j < n && lower(s[i+j]) == f.text[j] {
			j++
		}
		if j == n {
			return i
		}
	}
	return -1
}

// keyRank is how rare a byte likely is in a state's text, higher for
// rarer: a letter by its frequency in English text, a digit or a
// punctuation mark above any letter, a space below all.
func keyRank(c byte) int {
	const letters = "etaoinsrhldcumfpgwybvkxjqz" // commonest first
	switch {
	case c == ' ':
		return 0
	case 'a' <= c && c <= 'z':
		return 1 + strings.IndexByte(letters, c)
	case '0' <= c && c <= '9':
		return 30
	}
	return 40
}

// indexEither is the first place in s of byte a or byte b, or -1.
func indexEither(s string, a, b byte) int {
	i := strings.IndexByte(s, a)
	if a == b {
		return i
	}
	if i >= 0 {
		s = s[:i] // b counts only before the first a
	}
	if j := strings.IndexByte(s, b); j >= 0 {
		return j
	}
	return i
}

// in reports whether s contains f's text, ignoring case.
func (f folder) in(s string) bool { return f.index(s) >= 0 }

// lower is an ASCII byte in lower case.
func lower(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// excerpt is s, or when it is longer than SearchExcerpt bytes the part
// around f's first match in it, each cut marked "…".
func excerpt(s string, f folder) string {
	if len(s) <= SearchExcerpt {
		return s
	}
	at := f.index(s)
	if !f.ascii {
		// index gave a rune count: take the byte offset of that rune.
		n := at
		at = 0
		for n > 0 && at < len(s) {
			_, w := utf8.DecodeRuneInString(s[at:])
			at += w
			n--
		}
	}
	start := max(0, at-SearchExcerpt/3)
	for start > 0 && !utf8.RuneStart(s[start]) {
		start--
	}
	end := min(len(s), start+SearchExcerpt)
	for end < len(s) && !utf8.RuneStart(s[end]) {
		end--
	}
	out := s[start:end]
	if start > 0 {
		out = "…" + out
	}
	if end < len(s) {
		out += "…"
	}
	return out
}
