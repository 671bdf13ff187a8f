package tools

import (
	"context"
	"fmt"
	goruntime "runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/runtime"
	"github.com/theory/jsonpath"
	"github.com/theory/jsonpath/spec"
)

// Query_state's defaults and bounds.
const (
	// DefaultQueryLimit is how many matches query_state and
	// search_state show when a call gives no limit.
	DefaultQueryLimit = 20
	// QueryDepth is the depth at which query_state outlines a match's
	// value (as read_state's depth).
	QueryDepth = 1
	// MaxQueryBytes bounds a query's text.
	MaxQueryBytes = 4096
)

// The bounds on one query's work: queryWork units (a node selected or
// looked at, a filter evaluated on one node, that filter's cost when its
// queries reach beyond the node, and a regular expression's: its
// filter's length for each eighth of the node's text). The work units,
// which depend on the query and the view alone, bound every query a
// test or a replay makes, so that it answers the same on any machine;
// queryTime, of wall time, is a backstop far beyond them. Variables so
// that a test can make them small.
var (
	queryWork = 50_000_000
	queryTime = 30 * time.Second
)

// QueryState is the tool query_state: an RFC 9535 JSONPath query run on
// the state as the actor may see it, answering its matches as JSON
// Pointers with their values (outlined at QueryDepth), each location
// once, in document order (object members by name), a page at a time
// (see page). A location the actor may not see is never matched,
// listed or counted: a hidden array element, which the view keeps as
// null so that positions hold, is dropped from every step of the query.
//
// A query that is not RFC 9535 answers CodeBadQuery with the parser's
// message. Its work is bounded: a filter may nest one filter, and hold
// at most one descendant segment; a query that does more than queryWork
// units (or, as a backstop, takes longer than queryTime) answers
// CodeBadQuery too.
var QueryState = Def{
	Spec: Spec{
		Name: "query_state",
		Description: "Run an RFC 9535 JSONPath query (e.g. \"$.orders[?@.status == 'open'].id\", \"$..email\") on the shared state as you may see it. " +
			"Answers {\"total\", \"offset\", \"shown\", \"note\", \"matches\": [{\"pointer\", \"value\"}]}: each match's JSON Pointer (for read_state and patches) " +
			"and its value, containers below its first level shown as their sizes, in document order, a page at a time.",
		Parameters: fmt.Appendf(nil, `{"type":"object","properties":{"path":{"type":"string","description":"an RFC 9535 JSONPath query starting with $"},"limit":{"type":"integer","minimum":1,"description":"the most matches shown (default %d)"},"offset":{"type":"integer","minimum":0,"description":"the first match shown (default 0)"}},"required":["path"],"additionalProperties":false}`, DefaultQueryLimit),
	},
	Usage: "query_state(path, limit) lists the matches of an RFC 9535 JSONPath query with their JSON Pointers",
	Call:  queryState,
}

// queryArgs are query_state's arguments.
type queryArgs struct {
	Path   *string `json:"path"`
	Limit  *int    `json:"limit"`
	Offset *int    `json:"offset"`
}

// match is one location a tool found: its JSON Pointer and value.
type match struct {
	pointer runtime.Pointer
	value   any
}

func queryState(ctx context.Context, s Step, args string) (res Result, err error) {
	defer func() {
		// The library is not ours: whatever a query does in it, the
		// actor gets an answer and the harness goes on.
		if r := recover(); r != nil {
			res, err = Result{Text: "the query failed: " + textcut.Cut(textcut.OneLine(fmt.Sprint(r)), 512), Code: CodeBadQuery}, nil
		}
	}()
	var a queryArgs
	if err := decodeArgs(args, &a); err != nil {
		return Result{Text: err.Error(), Code: CodeMalformed}, nil
	}
	if a.Path == nil {
		return Result{Text: `"path" is required`, Code: CodeMalformed}, nil
	}
	if msg := checkPaging(a.Offset, a.Limit); msg != "" {
		return Result{Text: msg, Code: CodeMalformed}, nil
	}
	if len(*a.Path) > MaxQueryBytes {
		return Result{Text: fmt.Sprintf("the query has %d bytes; the limit is %d", len(*a.Path), MaxQueryBytes), Code: CodeBadQuery}, nil
	}
	q, err := jsonpath.Parse(*a.Path)
	if err != nil {
		return Result{Text: "not a JSONPath query (RFC 9535): " + textcut.Cut(textcut.OneLine(err.Error()), 512), Code: CodeBadQuery}, nil
	}
	root, ok := s.Lookup(nil)
	if !ok {
		root = nil
	}
	found, err := runQuery(ctx, s, q.Query(), root)
	if err != nil {
		return Result{Text: err.Error(), Code: CodeBadQuery}, nil
	}
	limit := resultLimit(s)
	pg := matchPage(found, deref(a.Offset, 0), deref(a.Limit, DefaultQueryLimit), func(m match, room int) []byte {
		if b, ok := outlineWithin(m.value, QueryDepth, room); ok {
			return b
		}
		if alone := limit - noteRoom - len(m.pointer.String()) - 64; outlineSize(m.value, QueryDepth, alone) <= alone {
			return nil // it fits a page of its own: the next one
		}
		// Too large for any page: a note in its place, so that the
		// matches after it are still shown.
		return quote(fmt.Sprintf("(%s over the result limit: read it with read_state)", runtime.ATypeName(m.value)))
	})
	pg.Next = func(i int) string { return fmt.Sprintf("query_state with offset %d", i) }
	return Result{Text: pg.build(limit)}, nil
}

// matchPage is the page of found's matches from offset, limit of them,
// each {"pointer": ..., "value": ...} with the value as show gives it
// within room bytes (nil when it does not fit: the page ends before it).
func matchPage(found []match, offset, limit int, show func(m match, room int) []byte) page {
	return page{
		What: "matches", Total: len(found), Offset: offset, Want: limit,
		Elem: func(i, room int) []byte {
			var b []byte
			b = append(b, `{"pointer":`...)
			b = append(b, quote(found[i].pointer.String())...)
			b = append(b, `,"value":`...)
			v := show(found[i], room-len(b)-1)
			if v == nil {
				return nil
			}
			return append(append(b, v...), '}')
		},
		TooLarge: func(i int) string { return "read it with read_state" },
	}
}

// errWork is a query over its work bounds.
type errWork string

func (e errWork) Error() string { return string(e) }

// evaluator runs a query segment by segment on the view, each node list
// without duplicates and without the locations the actor may not see,
// counting its work.
type evaluator struct {
	ctx      context.Context
	s        Step
	root     any
	work     int
	deadline time.Time
	// viewNodes is the view's node count, the cost charged for a filter
	// evaluation whose queries reach beyond its node (computed once).
	viewNodes int
}

// runQuery is q's matches on root, the view of step s, in document
// order, or an error when the query is over its work bounds.
func runQuery(ctx context.Context, s Step, q *spec.PathQuery, root any) ([]match, error) {
	e := &evaluator{ctx: ctx, s: s, root: root, deadline: time.Now().Add(queryTime), viewNodes: -1}
	for _, seg := range q.Segments() {
		for _, sel := range seg.Selectors() {
			if f, ok := sel.(*spec.FilterSelector); ok {
				if err := checkFilter(f.String()); err != nil {
					return nil, err
				}
			}
		}
	}
	cur := []*spec.LocatedNode{{Node: root, Path: spec.NormalizedPath{}}}
	if !e.present(root, nil) {
		cur = nil
	}
	for _, seg := range q.Segments() {
		next, err := e.segment(seg, cur)
		if err != nil {
			return nil, err
		}
		cur = next
	}
	slices.SortFunc(cur, func(a, b *spec.LocatedNode) int { return a.Path.Compare(b.Path) })
	out := make([]match, len(cur))
	for i, n := range cur {
		out[i] = match{pointer: pointerOf(n.Path), value: n.Node}
	}
	return out, nil
}

// segment applies seg to the nodes in. Paths are built in place as the
// walk goes (qpath) and made normalized paths only for a node that is
// kept or a selector of the library's that needs one.
func (e *evaluator) segment(seg *spec.Segment, in []*spec.LocatedNode) ([]*spec.LocatedNode, error) {
	sels := seg.Selectors()
	var out []*spec.LocatedNode
	var seen map[string]bool
	if len(sels) > 1 || (seg.IsDescendant() && len(in) > 1) {
		seen = map[string]bool{}
	}
	add := func(n *spec.LocatedNode) {
		if seen != nil {
			k := n.Path.Pointer()
			if seen[k] {
				return
			}
			seen[k] = true
		}
		out = append(out, n)
	}
	apply := func(node any, path qpath) error {
		for _, sel := range sels {
			switch x := sel.(type) {
			case spec.Name:
				// The commonest selector, without the library's
				// allocations for a node that does not have it.
				if err := e.charge(1); err != nil {
					return err
				}
				if m, ok := node.(map[string]any); ok {
					if c, ok := m[string(x)]; ok && e.present(c, append(path, qtok{name: string(x), idx: -1})) {
						add(&spec.LocatedNode{Node: c, Path: append(path.normalized(), x)})
					}
				}
			case *spec.FilterSelector:
				text := x.String()
				cost := 1
				if expensiveFilter(text) {
					cost = e.nodes()
				}
				regex := strings.Contains(text, "match(") || strings.Contains(text, "search(")
				if arr, ok := node.([]any); ok && len(arr) >= parallelMin && goruntime.GOMAXPROCS(0) > 1 && !strings.Contains(text, "(") {
					if err := e.filterItems(x, arr, path, cost, add); err != nil {
						return err
					}
					continue
				}
				err := eachChild(node, path, func(c any, cp qpath) error {
					units := cost + containerLen(c)
					if regex {
						// A regular expression runs in time about its
						// length times its text's.
						units += len(text) * (1 + textBytes(c)/8)
					}
					if err := e.charge(units); err != nil {
						return err
					}
					if e.present(c, cp) && x.Eval(c, e.root) {
						add(&spec.LocatedNode{Node: c, Path: cp.normalized()})
					}
					return nil
				})
				if err != nil {
					return err
				}
			default:
				got := sel.SelectLocated(node, e.root, path.normalized())
				if err := e.charge(1 + len(got)); err != nil {
					return err
				}
				for _, c := range got {
					if e.present(c.Node, qpathOf(c.Path)) {
						add(c)
					}
				}
			}
		}
		return nil
	}
	if !seg.IsDescendant() {
		for _, n := range in {
			if err := apply(n.Node, qpathOf(n.Path)); err != nil {
				return nil, err
			}
		}
		return out, nil
	}
	// A descendant segment applies its selectors to each node in and to
	// every node below, each once.
	var visited map[string]bool
	if len(in) > 1 {
		visited = map[string]bool{}
	}
	var walk func(node any, path qpath) error
	walk = func(node any, path qpath) error {
		if visited != nil {
			k := path.pointer().String()
			if visited[k] {
				return nil
			}
			visited[k] = true
		}
		if err := e.charge(1); err != nil {
			return err
		}
		if err := apply(node, path); err != nil {
			return err
		}
		return eachChild(node, path, func(c any, cp qpath) error {
			if !e.present(c, cp) {
				return nil
			}
			return walk(c, cp)
		})
	}
	for _, n := range in {
		if err := walk(n.Node, append(make(qpath, 0, len(n.Path)+16), qpathOf(n.Path)...)); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parallelMin is the fewest items of an array whose filter evaluations
// are shared among the cores (filterItems); a variable so that a test
// can make it small.
var parallelMin = 4096

// filterItems applies the filter x to the items of arr, an array at
// path, as segment does item by item, the evaluations shared among the
// cores: the work of every item is charged first, in order (so a query
// over its bounds fails as it would one item at a time, having
// evaluated nothing), a hidden item is left out, and the items the
// filter keeps are added in order. Only a filter without function calls
// comes here: the library's evaluation of one is a pure reading of the
// view. A panic in the library's evaluation is raised again in the
// caller's goroutine, where queryState answers it.
func (e *evaluator) filterItems(x *spec.FilterSelector, arr []any, path qpath, cost int, add func(*spec.LocatedNode)) error {
	keep := make([]bool, len(arr))
	for i, c := range arr {
		if err := e.charge(cost + containerLen(c)); err != nil {
			return err
		}
		keep[i] = e.present(c, append(path, qtok{idx: i}))
	}
	n := min(goruntime.GOMAXPROCS(0), 8)
	chunk := (len(arr) + n - 1) / n
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		panicked any
	)
	for lo := 0; lo < len(arr); lo += chunk {
		hi := min(lo+chunk, len(arr))
		wg.Go(func() {
			defer func() {
				if r := recover(); r != nil {
					mu.Lock()
					panicked = r
					mu.Unlock()
				}
			}()
			for i := lo; i < hi; i++ {
				keep[i] = keep[i] && x.Eval(arr[i], e.root)
			}
		})
	}
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	for i, ok := range keep {
		if ok {
			add(&spec.LocatedNode{Node: arr[i], Path: append(path, qtok{idx: i}).normalized()})
		}
	}
	return nil
}

// qpath is a location as the evaluator walks to it: a member name, or
// an index when idx is not negative, per level.
type qpath []qtok

// qtok is one level of a qpath.
type qtok struct {
	name string
	idx  int
}

// qpathOf is a normalized path as a qpath.
func qpathOf(np spec.NormalizedPath) qpath {
	q := make(qpath, len(np))
	for i, s := range np {
		switch x := s.(type) {
		case spec.Name:
			q[i] = qtok{name: string(x), idx: -1}
		case spec.Index:
			q[i] = qtok{idx: int(x)}
		}
	}
	return q
}

// normalized is q as a normalized path (a new one).
func (q qpath) normalized() spec.NormalizedPath {
	np := make(spec.NormalizedPath, len(q), len(q)+1)
	for i, t := range q {
		if t.idx >= 0 {
			np[i] = spec.Index(t.idx)
		} else {
			np[i] = spec.Name(t.name)
		}
	}
	return np
}

// pointer is q as a JSON Pointer.
func (q qpath) pointer() runtime.Pointer {
	p := make(runtime.Pointer, len(q))
	for i, t := range q {
		if t.idx >= 0 {
			p[i] = strconv.Itoa(t.idx)
		} else {
			p[i] = t.name
		}
	}
	return p
}

// eachChild calls fn on each child of node (none for a scalar) and its
// path, built on path in place: fn copies a path it keeps.
func eachChild(node any, path qpath, fn func(c any, cp qpath) error) error {
	switch x := node.(type) {
	case []any:
		for i, c := range x {
			if err := fn(c, append(path, qtok{idx: i})); err != nil {
				return err
			}
		}
	case map[string]any:
		for k, c := range x {
			if err := fn(c, append(path, qtok{name: k, idx: -1})); err != nil {
				return err
			}
		}
	}
	return nil
}

// present reports whether the actor may see the location at path,
// whose value is v: a null may be a hidden array element, which the
// view keeps as a placeholder.
func (e *evaluator) present(v any, path qpath) bool {
	if v != nil {
		return true
	}
	_, ok := e.s.Lookup(path.pointer())
	return ok
}

// charge counts units of work, failing once the query is over its
// bounds (work, time, or ctx's end).
func (e *evaluator) charge(units int) error {
	before := e.work
	e.work += units
	if e.work > queryWork {
		return errWork(fmt.Sprintf("the query does more work than allowed (%d units: nodes visited and filter evaluations); narrow it: a deeper path, fewer descendant segments (..), simpler filters", queryWork))
	}
	if before/4096 != e.work/4096 {
		if time.Now().After(e.deadline) {
			return errWork(fmt.Sprintf("the query takes longer than allowed (%s); narrow it: a deeper path, fewer descendant segments (..), simpler filters", queryTime))
		}
		if err := e.ctx.Err(); err != nil {
			return errWork("the query was stopped: " + err.Error())
		}
	}
	return nil
}

// nodes is the view's node count.
func (e *evaluator) nodes() int {
	if e.viewNodes < 0 {
		e.viewNodes = countNodes(e.root)
	}
	return e.viewNodes
}

// countNodes is the number of values in v, v included.
func countNodes(v any) int {
	n := 1
	switch x := v.(type) {
	case []any:
		for _, c := range x {
			n += countNodes(c)
		}
	case map[string]any:
		for _, c := range x {
			n += countNodes(c)
		}
	}
	return n
}

// containerLen is v's number of items or members (0 for a scalar).
func containerLen(v any) int {
	switch x := v.(type) {
	case []any:
		return len(x)
	case map[string]any:
		return len(x)
	}
	return 0
}

// textBytes is the length of v's strings and its members' and items'
// (one level down): what a filter's functions read of a node.
func textBytes(v any) int {
	n := 0
	switch x := v.(type) {
	case string:
		return len(x)
	case []any:
		for _, c := range x {
			if s, ok := c.(string); ok {
				n += len(s)
			}
		}
	case map[string]any:
		for _, c := range x {
			if s, ok := c.(string); ok {
				n += len(s)
			}
		}
	}
	return n
}

// pointerOf is a normalized path as a JSON Pointer.
func pointerOf(np spec.NormalizedPath) runtime.Pointer {
	p := make(runtime.Pointer, len(np))
	for i, s := range np {
		switch x := s.(type) {
		case spec.Name:
			p[i] = string(x)
		case spec.Index:
			p[i] = strconv.Itoa(int(x))
		}
	}
	return p
}

// filterShape is what a filter's text holds outside its string
// literals: its nested filters' depth, its descendant segments, whether
// a query in it starts at the root and is not singular, and the product
// of its selector lists' lengths.
type filterShape struct {
	nesting, descendants, lists int
	rootNonSingular             bool
}

// shapeOf reads a filter selector's text as the library writes it
// ("?@[\"a\"] == 1": every selector in brackets, names and strings
// double-quoted): the filter itself counts as one level of nesting.
func shapeOf(text string) filterShape {
	sh := filterShape{nesting: 1, lists: 1}
	type open struct {
		bracket, filter, root bool
		commas                int
	}
	var stack []open
	filters := 0
	root := false // in a query that started at $
	selector := func() bool { return len(stack) > 0 && stack[len(stack)-1].bracket && !stack[len(stack)-1].filter }
	for i := 0; i < len(text); i++ {
		switch c := text[i]; c {
		case '"', '\'':
			for i++; i < len(text) && text[i] != c; i++ {
				if text[i] == '\\' {
					i++
				}
			}
		case '$':
			root = true
		case '@':
			root = false
		case '.':
			if i+1 < len(text) && text[i+1] == '.' {
				sh.descendants++
				sh.rootNonSingular = sh.rootNonSingular || root
				i++
			}
		case '[':
			f := i+1 < len(text) && text[i+1] == '?'
			if f {
				filters++
				sh.nesting = max(sh.nesting, filters+1)
				sh.rootNonSingular = sh.rootNonSingular || root
			}
			stack = append(stack, open{bracket: true, filter: f, root: root})
			if f {
				root = false
			}
		case '(':
			stack = append(stack, open{root: root})
			root = false
		case ']', ')':
			if len(stack) == 0 {
				continue
			}
			top := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if top.bracket {
				sh.lists = min(sh.lists*(top.commas+1), 1<<20)
			}
			if top.filter {
				filters--
			}
			root = top.root
		case ',', '*', ':':
			if selector() {
				if c == ',' {
					stack[len(stack)-1].commas++
				}
				sh.rootNonSingular = sh.rootNonSingular || stack[len(stack)-1].root
			} else {
				root = false
			}
		default:
			if !selector() && strings.IndexByte(" &|=!<>", c) >= 0 {
				root = false
			}
		}
	}
	return sh
}

// checkFilter refuses a filter whose one evaluation could do more than
// linear work in the view: more than one nested filter level, more than
// one descendant segment, a nested filter beside a descendant segment or
// a query from the root that is not singular, or selector lists whose
// product is over 16.
func checkFilter(text string) error {
	sh := shapeOf(text)
	switch {
	case sh.nesting > 2:
		return errWork("a filter may hold at most one filter of its own")
	case sh.descendants > 1:
		return errWork("a filter may hold at most one descendant segment (..)")
	case sh.nesting > 1 && (sh.descendants > 0 || sh.rootNonSingular):
		return errWork("a filter that holds a filter may not hold a descendant segment (..) or a query from $ that selects more than one node")
	case sh.lists > 16:
		return errWork("the selector lists in a filter may select at most 16 nodes each (the product of their lengths)")
	}
	return nil
}

// expensiveFilter reports whether one evaluation of a filter may visit
// more than its node's children: a descendant segment, or a query from
// the root that is not singular.
func expensiveFilter(text string) bool {
	sh := shapeOf(text)
	return sh.descendants > 0 || sh.rootNonSingular
}
