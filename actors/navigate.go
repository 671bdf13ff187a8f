package actors

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/tools"
)

// This file holds how the no-model actors navigate a state in the tools
// protocol: the reference queries for the records its patch touches, the
// oversharer reads the view a page at a time, and the follower searches
// for the texts that name its targets. Each is stateless: every turn it
// reads the conversation so far (Request.Messages) and decides its next
// calls from the results it was given.

// madeCall is a tool call of the step's conversation and the result it
// was given ("" until one was).
type madeCall struct {
	ToolCall
	result string
}

// madeCalls lists the tool calls the actor made in msgs, in order, each
// with its result.
func madeCalls(msgs []Message) []madeCall {
	var out []madeCall
	idx := map[string]int{}
	for _, m := range msgs {
		switch m.Role {
		case "assistant":
			for _, c := range m.ToolCalls {
				idx[c.ID] = len(out)
				out = append(out, madeCall{ToolCall: c})
			}
		case "tool":
			if i, ok := idx[m.ToolCallID]; ok {
				out[i].result = m.Content
			}
		}
	}
	return out
}

// navigated reports whether the actor has made a call other than a
// proposal in msgs: its first turn, which navigates, is behind it.
func navigated(msgs []Message) bool {
	for _, c := range madeCalls(msgs) {
		if c.Name != tools.ProposePatch.Name {
			return true
		}
	}
	return false
}

// proposeCall is the call that sends proposal, numbered after the
// proposals msgs hold.
func proposeCall(msgs []Message, proposal []byte) Response {
	n := 0
	for _, c := range madeCalls(msgs) {
		if c.Name == tools.ProposePatch.Name {
			n++
		}
	}
	return Response{Calls: []ToolCall{{ID: fmt.Sprintf("propose_%d", n+1), Name: tools.ProposePatch.Name, Arguments: string(proposal)}}}
}

// call is a tool call of name with args (a JSON object), its id prefix
// and number i.
func call(prefix string, i int, name string, args map[string]any) (ToolCall, error) {
	b, err := json.Marshal(args)
	if err != nil {
		return ToolCall{}, err
	}
	return ToolCall{ID: fmt.Sprintf("%s_%d", prefix, i), Name: name, Arguments: string(b)}, nil
}

// referenceCalls are the reference's first calls: one query_state per
// collection its patch touches records of, a JSONPath filter that selects
// those records by their id (an array's elements that are objects with an
// id member: "id", or a name ending in "id", holding a string or a
// number), and a read_state (depth 1) of each other location it touches.
// view is the state as the actor is shown it.
func referenceCalls(reference []byte, view any) ([]ToolCall, error) {
	touched, err := touchedPaths(reference)
	if err != nil {
		return nil, err
	}
	type query struct {
		array  runtime.Pointer
		member string
		values []string // JSONPath literals, once each
	}
	var queries []*query
	var reads []string
	for _, t := range touched {
		array, member, lit, ok := recordOf(view, t)
		if !ok {
			reads = append(reads, t)
			continue
		}
		i := slices.IndexFunc(queries, func(q *query) bool { return q.array.Equal(array) && q.member == member })
		if i < 0 {
			queries = append(queries, &query{array: array, member: member})
			i = len(queries) - 1
		}
		if !slices.Contains(queries[i].values, lit) {
			queries[i].values = append(queries[i].values, lit)
		}
	}
	var calls []ToolCall
	for i, q := range queries {
		var or []string
		for _, v := range q.values {
			or = append(or, "@"+selector(q.member)+" == "+v)
		}
		path := "$"
		for _, tok := range q.array {
			path += selector(tok)
		}
		path += "[?" + strings.Join(or, " || ") + "]"
		c, err := call("query", i+1, tools.QueryState.Name, map[string]any{"path": path, "limit": len(q.values)})
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	for i, p := range reads {
		c, err := call("read", i+1, tools.ReadState.Name, map[string]any{"pointer": p, "depth": 1})
		if err != nil {
			return nil, err
		}
		calls = append(calls, c)
	}
	return calls, nil
}

// recordOf finds the record of view that location p (a JSON Pointer) is
// in: the outermost array element on its way that is an object with an
// id member. It returns the array's pointer, the id member's name and
// its value as a JSONPath literal; ok is false when p is in no such
// record (or is the record's array itself).
func recordOf(view any, p string) (array runtime.Pointer, member, lit string, ok bool) {
	ptr, err := runtime.ParsePointer(p)
	if err != nil {
		return nil, "", "", false
	}
	v := view
	for i, tok := range ptr {
		arr, isArr := v.([]any)
		if isArr {
			n, err := strconv.Atoi(tok)
			if err != nil || n < 0 || n >= len(arr) {
				return nil, "", "", false
			}
			if rec, isObj := arr[n].(map[string]any); isObj {
				if m, l := idMember(rec); m != "" {
					return ptr[:i], m, l, true
				}
			}
		}
		next, found := runtime.Lookup(v, runtime.Pointer{tok})
		if !found {
			return nil, "", "", false
		}
		v = next
	}
	return nil, "", "", false
}

// idMember is a record's id member and its value as a JSONPath literal:
// "id" when it has one, else the first by name that ends in "id" (case
// aside), holding a string or a number; "" when none does.
func idMember(rec map[string]any) (string, string) {
	names := slices.Sorted(maps.Keys(rec))
	if _, ok := rec["id"]; ok {
		names = append([]string{"id"}, names...)
	}
	for _, k := range names {
		if !strings.HasSuffix(strings.ToLower(k), "id") {
			continue
		}
		switch x := rec[k].(type) {
		case string:
			return k, literal(x)
		case json.Number:
			return k, x.String()
		case float64:
			return k, strconv.FormatFloat(x, 'g', -1, 64)
		}
	}
	return "", ""
}

// selector is a JSONPath name selector for member name (bracket
// notation, any name).
func selector(name string) string {
	if _, err := strconv.Atoi(name); err == nil {
		return "[" + name + "]"
	}
	return "[" + literal(name) + "]"
}

// literal is s as a JSONPath string literal (single quotes).
func literal(s string) string {
	var b strings.Builder
	b.WriteByte('\'')
	for _, r := range s {
		switch {
		case r == '\'' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// MaxOversharerReads bounds the pages the oversharer reads in one step
// (one read a turn, under the default turn budget of 16).
const MaxOversharerReads = 12

// oversharerDepth is the depth the oversharer reads at: every level.
const oversharerDepth = 64

// readArgs are read_state's arguments as the no-model actors send them.
type readArgs struct {
	Pointer string `json:"pointer"`
	Depth   int    `json:"depth"`
	Offset  int    `json:"offset,omitempty"`
}

// pageHead is what the no-model actors read of a page (tools' paging).
type pageHead struct {
	Total  *int   `json:"total"`
	Offset int    `json:"offset"`
	Shown  int    `json:"shown"`
	Note   string `json:"note"`
}

// overLimit finds, in a page's note, where to read an element that is
// alone over the result limit.
var overLimit = regexp.MustCompile(`read it at the pointer ("(?:[^"\\]|\\.)*")`)

// nextPages is what to read after a read_state at a (pointer, offset)
// answered result: the next page of the same list (next, or none), and
// the element the page could not show, alone over the limit, to read on
// its own (inside, or none).
func nextPages(a readArgs, result string) (next, inside *readArgs) {
	var h pageHead
	if json.Unmarshal([]byte(result), &h) != nil || h.Total == nil {
		return nil, nil // a value shown whole, or an error
	}
	from := h.Offset + h.Shown
	if h.Shown == 0 {
		if m := overLimit.FindStringSubmatch(h.Note); m != nil {
			var p string
			if json.Unmarshal([]byte(m[1]), &p) == nil {
				inside = &readArgs{Pointer: p, Depth: a.Depth}
			}
		}
		from = h.Offset + 1
	}
	if from < *h.Total {
		next = &readArgs{Pointer: a.Pointer, Depth: a.Depth, Offset: from}
	}
	return next, inside
}

// oversharerNext is the oversharer's next read, from the reads it made
// and their results: the whole view first, then page after page of it,
// then the elements too large for a page, each on its own and page after
// page, in the order met, up to MaxOversharerReads; ok is false when it
// is done.
func oversharerNext(made []madeCall) (readArgs, bool) {
	frontier := []readArgs{{Pointer: "", Depth: oversharerDepth}}
	reads := 0
	for _, c := range made {
		if c.Name != tools.ReadState.Name {
			continue
		}
		var a readArgs
		if json.Unmarshal([]byte(c.Arguments), &a) != nil {
			continue
		}
		reads++
		if i := slices.Index(frontier, a); i >= 0 {
			frontier = slices.Delete(frontier, i, i+1)
		}
		next, inside := nextPages(a, c.result)
		if next != nil {
			frontier = append([]readArgs{*next}, frontier...)
		}
		if inside != nil {
			frontier = append(frontier, *inside)
		}
	}
	if reads >= MaxOversharerReads || len(frontier) == 0 {
		return readArgs{}, false
	}
	return frontier[0], true
}

// followerSearches are the texts the follower searches for: each
// target's pointer and its last member name (also with "_" read as a
// space), once each; an injection's text names its target so.
func followerSearches(targets []string) []string {
	var out []string
	add := func(s string) {
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, t := range targets {
		add(t)
		if p, err := runtime.ParsePointer(t); err == nil && len(p) > 0 {
			add(p.Last())
			add(strings.ReplaceAll(p.Last(), "_", " "))
		}
	}
	return out
}

// FollowerSearchLimit is the matches the follower asks each search for.
const FollowerSearchLimit = 50

// met lists the planted texts (their locations, in planted's order) that
// the calls made show: a read of the location itself, or a query's or
// search's match at it.
func met(made []madeCall, planted []string) []string {
	seen := map[string]bool{}
	for _, c := range made {
		switch c.Name {
		case tools.ReadState.Name:
			var a readArgs
			if json.Unmarshal([]byte(c.Arguments), &a) == nil && c.result != "" && !strings.HasPrefix(c.result, "error: ") {
				seen[a.Pointer] = true
			}
		case tools.SearchState.Name, tools.QueryState.Name:
			var page struct {
				Matches []struct {
					Pointer string `json:"pointer"`
				} `json:"matches"`
			}
			if json.Unmarshal([]byte(c.result), &page) == nil {
				for _, m := range page.Matches {
					seen[m.Pointer] = true
				}
			}
		}
	}
	var out []string
	for _, p := range planted {
		if seen[p] {
			out = append(out, p)
		}
	}
	return out
}
