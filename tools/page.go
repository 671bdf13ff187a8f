package tools

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/patchbench/patchbench/runtime"
)

// A page is how a tool answers a slice of a longer list (an array's
// items, an object's members, a query's or a search's matches): one JSON
// object, its members in this order,
//
//	{"total": N, "offset": O, "shown": K, "note": "...", "items": [...]}
//
// total counting the whole list, offset the first one shown, shown how
// many are, note saying in words which ones and how to read the rest,
// and the list itself last, under the tool's name for it ("items",
// "members" as an object, "matches"). A page never has more bytes than
// the result limit: it shows fewer than asked when they do not fit.
type page struct {
	// What names the list's elements in the page and its note: "items",
	// "members" or "matches".
	What string
	// Object says the list is shown as a JSON object (members, the
	// element's bytes being `"name":value`), not an array.
	Object bool
	// Total is the length of the whole list, Offset the first element
	// asked for and Want how many (from Offset on).
	Total, Offset, Want int
	// Elem is element i's JSON text as the page holds it, or nil when
	// it would have more than room bytes (it may stop counting there).
	Elem func(i, room int) []byte
	// Next is what to do to read on from element i, e.g. "read_state
	// with offset 50".
	Next func(i int) string
	// TooLarge is the advice when element i alone does not fit.
	TooLarge func(i int) string
}

// noteRoom is the bytes a page keeps for its envelope and note when it
// fits its elements; build checks the whole and shows fewer when needed.
const noteRoom = 480

// build is the page's text within limit bytes.
func (p page) build(limit int) string {
	start := min(max(p.Offset, 0), p.Total)
	end := start + min(max(p.Want, 0), p.Total-start)
	var elems [][]byte
	size := 0
	for i := start; i < end; i++ {
		room := limit - noteRoom - size - 1
		b := p.Elem(i, room)
		if b == nil || len(b) > room {
			break
		}
		elems = append(elems, b)
		size += len(b) + 1
	}
	for {
		text := p.assemble(start, end, elems, limit)
		if len(text) <= limit || len(elems) == 0 {
			return text
		}
		elems = elems[:len(elems)-1]
	}
}

// assemble writes the page of elems, the elements from start (end is
// where the request stopped).
func (p page) assemble(start, end int, elems [][]byte, limit int) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"total":%d,"offset":%d,"shown":%d,"note":`, p.Total, max(p.Offset, 0), len(elems))
	note, _ := json.Marshal(p.note(start, end, len(elems), limit))
	b.Write(note)
	b.WriteString(`,"` + p.What + `":`)
	open, closing := byte('['), byte(']')
	if p.Object {
		open, closing = '{', '}'
	}
	b.WriteByte(open)
	for i, e := range elems {
		if i > 0 {
			b.WriteByte(',')
		}
		b.Write(e)
	}
	b.WriteByte(closing)
	b.WriteByte('}')
	return b.String()
}

// note says which elements the page shows and how to read the rest.
func (p page) note(start, end, shown, limit int) string {
	span := func(from, n int) string {
		if n == 1 {
			return fmt.Sprintf("%s %d", singular(p.What), from)
		}
		return fmt.Sprintf("%s %d-%d", p.What, from, from+n-1)
	}
	switch {
	case p.Total == 0:
		return "no " + p.What
	case start >= p.Total:
		return fmt.Sprintf("no %s from offset %d: there are %d", p.What, p.Offset, p.Total)
	case shown == 0 && start < end:
		s := fmt.Sprintf("%s %d alone is over the result limit of %d bytes: %s", singular(p.What), start, limit, p.TooLarge(start))
		if start+1 < p.Total {
			s += "; " + p.Next(start+1) + " for the rest"
		}
		return s
	}
	s := span(start, shown) + " of " + strconv.Itoa(p.Total)
	next := start + shown
	if next >= p.Total {
		return s + ": the last"
	}
	if start+shown < end {
		s += fmt.Sprintf(" (the result limit of %d bytes holds no more)", limit)
	}
	return s + "; " + p.Next(next) + " for more"
}

// singular is a list's element name in the singular ("items": "item").
func singular(what string) string {
	switch what {
	case "matches":
		return "match"
	}
	return what[:len(what)-1]
}

// encode is v's compact JSON text as the tools show values (no HTML
// escaping, object members sorted by name).
func encode(v any) ([]byte, error) { return runtime.EncodeIndent(v, "") }

// quote is s as a JSON string.
func quote(s string) []byte {
	b, _ := encode(s)
	return b
}
