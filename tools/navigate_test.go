package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/runtime"
)

// viewStep is a fakeStep whose state is a view: the locations in hidden
// are absent, as a projected view's hidden array elements (null
// placeholders) are.
type viewStep struct {
	*fakeStep
	hidden map[string]bool
}

func (s viewStep) Lookup(p runtime.Pointer) (any, bool) {
	if s.hidden[p.String()] {
		return nil, false
	}
	return s.fakeStep.Lookup(p)
}

// pageOf decodes a page, failing the test when text is not one.
func pageOf(t *testing.T, text string) (pg struct {
	Total, Offset, Shown int
	Note                 string
	Items                []any
	Members              map[string]any
	Matches              []struct {
		Pointer string
		Value   any
	}
}) {
	t.Helper()
	if err := json.Unmarshal([]byte(text), &pg); err != nil {
		t.Fatalf("not a page: %v: %s", err, text)
	}
	return pg
}

// TestReadStatePages: offset and limit page an array's items and an
// object's members (by name), a value over the result limit answers a
// page that fits, saying how to read on, and the default arguments on a
// value within the limit answer its plain JSON as before.
func TestReadStatePages(t *testing.T) {
	var items []string
	for i := range 100 {
		items = append(items, fmt.Sprintf(`{"id": %d, "name": "item %d", "tags": ["a", "b"]}`, i, i))
	}
	s := newFake(t, `{"list": [`+strings.Join(items, ",")+`], "obj": {"c": 3, "a": 1, "b": {"x": [1]}}, "small": [1, 2]}`)
	s.limit = 1024
	ctx := context.Background()
	for _, tt := range []struct{ args, want string }{
		// Within the limit, no paging argument: the plain value.
		{`{"pointer": "/small"}`, `[1,2]`},
		{`{"pointer": "/obj", "depth": 1}`, `{"a":1,"b":"{…1 members}","c":3}`},
		// Pages asked for.
		{`{"pointer": "/small", "limit": 1}`, `{"total":2,"offset":0,"shown":1,"note":"item 0 of 2; read_state with pointer \"/small\" and offset 1 for more","items":[1]}`},
		{`{"pointer": "/small", "offset": 1}`, `{"total":2,"offset":1,"shown":1,"note":"item 1 of 2: the last","items":[2]}`},
		{`{"pointer": "/small", "offset": 1, "limit": 9223372036854775807}`, `{"total":2,"offset":1,"shown":1,"note":"item 1 of 2: the last","items":[2]}`},
		{`{"pointer": "/small", "offset": 5}`, `{"total":2,"offset":5,"shown":0,"note":"no items from offset 5: there are 2","items":[]}`},
		{`{"pointer": "/obj", "offset": 1, "limit": 2}`, `{"total":3,"offset":1,"shown":2,"note":"members 1-2 of 3: the last","members":{"b":{"x":"[…1 items]"},"c":3}}`},
		{`{"pointer": "/obj", "depth": 0, "limit": 1}`, `{"total":3,"offset":0,"shown":1,"note":"member 0 of 3; read_state with pointer \"/obj\" and offset 1 for more","members":{"a":1}}`},
		{`{"pointer": "/list", "offset": 98, "depth": 1}`, `{"total":100,"offset":98,"shown":2,"note":"items 98-99 of 100: the last","items":["{…3 members}","{…3 members}"]}`},
	} {
		res, err := ReadState.Call(ctx, s, tt.args)
		if err != nil || res.Code != "" || res.Text != tt.want {
			t.Errorf("read_state(%s) = %s (%q)\nwant %s", tt.args, res.Text, res.Code, tt.want)
		}
	}
	// Over the limit: a page of what fits, and the way on.
	res, _ := ReadState.Call(ctx, s, `{"pointer": "/list"}`)
	pg := pageOf(t, res.Text)
	if len(res.Text) > 1024 || pg.Total != 100 || pg.Shown == 0 || pg.Shown != len(pg.Items) || pg.Shown >= 100 ||
		!strings.Contains(pg.Note, fmt.Sprintf("items 0-%d of 100 (the result limit of 1024 bytes holds no more); read_state with pointer \"/list\" and offset %d for more", pg.Shown-1, pg.Shown)) {
		t.Errorf("over the limit: %d bytes: %s", len(res.Text), res.Text)
	}
	// Read on until the end: every item once, in order.
	seen := 0
	for off := 0; off < 100; {
		res, _ := ReadState.Call(ctx, s, fmt.Sprintf(`{"pointer": "/list", "offset": %d}`, off))
		pg := pageOf(t, res.Text)
		if pg.Offset != off || pg.Shown == 0 || len(res.Text) > 1024 {
			t.Fatalf("offset %d: %s", off, res.Text)
		}
		for i, it := range pg.Items {
			if id := it.(map[string]any)["id"].(float64); int(id) != off+i {
				t.Fatalf("offset %d: item %d has id %v", off, i, id)
			}
		}
		seen += pg.Shown
		off += pg.Shown
	}
	if seen != 100 {
		t.Errorf("read %d items of 100", seen)
	}
	// An element alone over the limit: say where to read it.
	s = newFake(t, `{"a": ["`+strings.Repeat("x", 2000)+`", 1]}`)
	s.limit = 1024
	res, _ = ReadState.Call(ctx, s, `{"pointer": "/a"}`)
	if pg := pageOf(t, res.Text); pg.Shown != 0 || !strings.Contains(pg.Note, `item 0 alone is over the result limit of 1024 bytes: read it at the pointer "/a/0" or with a smaller depth`) {
		t.Errorf("an element over the limit: %s", res.Text)
	}
	// A scalar over the limit cannot be paged.
	for _, tt := range []struct{ args, code, text string }{
		{`{"pointer": "/a/0"}`, CodeTooLarge, "the value is a string of 2002 bytes, more than 1024, the result limit"},
		{`{"pointer": "/a/0", "offset": 1}`, CodeMalformed, "offset and limit page an array or an object; the value here is a string"},
		{`{"pointer": "/a", "offset": -1}`, CodeMalformed, `"offset" must be at least 0`},
		{`{"pointer": "/a", "limit": 0}`, CodeMalformed, `"limit" must be at least 1`},
	} {
		res, _ := ReadState.Call(ctx, s, tt.args)
		if res.Code != tt.code || !strings.Contains(res.Text, tt.text) {
			t.Errorf("read_state(%s) = %q (%q), want %q with %q", tt.args, res.Text, res.Code, tt.code, tt.text)
		}
	}
}

// TestPagesWithinLimit: on random states, at every result limit, every
// answer of the navigation tools is within the limit and a page is
// valid JSON whose shown count is its list's length.
func TestPagesWithinLimit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var gen func(d int) any
	gen = func(d int) any {
		switch k := r.IntN(6); {
		case d > 0 && k == 0:
			m := map[string]any{}
			for i := range r.IntN(30) {
				m[fmt.Sprintf("k%d\"é<%d", i, r.IntN(9))] = gen(d - 1)
			}
			return m
		case d > 0 && k == 1:
			a := make([]any, r.IntN(60))
			for i := range a {
				a[i] = gen(d - 1)
			}
			return a
		case k == 2:
			return strings.Repeat("abcé\n", r.IntN(200))
		case k == 3:
			return json.Number(fmt.Sprint(r.IntN(1e6)))
		case k == 4:
			return nil
		}
		return r.IntN(2) == 0
	}
	ctx := context.Background()
	for round := range 40 {
		s := &fakeStep{state: gen(4), limit: 1024 + r.IntN(4000)}
		for _, c := range []struct {
			d    Def
			args string
		}{
			{ReadState, `{"pointer": ""}`}, {ReadState, `{"pointer": "", "depth": 4}`}, {ReadState, `{"pointer": "", "offset": 3, "limit": 50, "depth": 3}`},
			{QueryState, `{"path": "$..*", "limit": 1000}`}, {QueryState, `{"path": "$..[?@ == true]"}`},
			{SearchState, `{"text": "ABC", "limit": 1000}`}, {SearchState, `{"text": "1"}`},
			{ReadState, `{"pointer": "", "offset": 9223372036854775807, "limit": 9223372036854775807}`},
			{ReadState, `{"pointer": "", "offset": 1, "limit": 9223372036854775807}`},
			{QueryState, `{"path": "$..*", "offset": 9223372036854775807, "limit": 9223372036854775807}`},
			{SearchState, `{"text": "a", "offset": 9223372036854775807, "limit": 9223372036854775807}`},
			{SearchState, `{"text": "a", "offset": 2, "limit": 9223372036854775807}`},
		} {
			res, err := c.d.Call(ctx, s, c.args)
			if err != nil || len(res.Text) > s.limit {
				t.Fatalf("round %d: %s(%s): %d bytes over %d, %v", round, c.d.Name, c.args, len(res.Text), s.limit, err)
			}
			if res.Code == "" && strings.HasPrefix(res.Text, `{"total":`) {
				pg := pageOf(t, res.Text)
				if n := len(pg.Items) + len(pg.Members) + len(pg.Matches); n != pg.Shown || pg.Shown > pg.Total {
					t.Fatalf("round %d: %s(%s): shown %d of %d, %d listed", round, c.d.Name, c.args, pg.Shown, pg.Total, n)
				}
			}
		}
	}
}

// TestQueryState: matches as pointers and outlined values, each
// location once, in document order, paged; a bad query's message; a
// hidden array element's placeholder never matched.
func TestQueryState(t *testing.T) {
	s := viewStep{newFake(t, `{"orders": [{"id": 1, "status": "open", "lines": [{"sku": "A"}, {"sku": "B"}]}, {"id": 2, "status": "closed"}, null, {"id": 4, "status": "open"}],
		"meta": {"a/b": "x", "m~n": null}}`), map[string]bool{"/orders/2": true}}
	ctx := context.Background()
	for _, tt := range []struct{ args, want string }{
		{`{"path": "$.orders[?@.status == 'open'].id"}`, `{"total":2,"offset":0,"shown":2,"note":"matches 0-1 of 2: the last","matches":[{"pointer":"/orders/0/id","value":1},{"pointer":"/orders/3/id","value":4}]}`},
		{`{"path": "$.orders[0]"}`, `"matches":[{"pointer":"/orders/0","value":{"id":1,"lines":"[…2 items]","status":"open"}}]`},
		{`{"path": "$.meta.*"}`, `"matches":[{"pointer":"/meta/a~1b","value":"x"},{"pointer":"/meta/m~0n","value":null}]`},
		{`{"path": "$..[?@ == null]"}`, `"matches":[{"pointer":"/meta/m~0n","value":null}]`},
		{`{"path": "$.orders[*]"}`, `"total":3,`},
		{`{"path": "$.orders[2]"}`, `"total":0,`},
		{`{"path": "$.orders[-2]"}`, `"total":0,`},
		{`{"path": "$..sku"}`, `"matches":[{"pointer":"/orders/0/lines/0/sku","value":"A"},{"pointer":"/orders/0/lines/1/sku","value":"B"}]`},
		{`{"path": "$['meta','orders','meta'][1,0,1].id"}`, `"matches":[{"pointer":"/orders/0/id","value":1},{"pointer":"/orders/1/id","value":2}]`},
		{`{"path": "$..id", "offset": 1, "limit": 1}`, `{"total":3,"offset":1,"shown":1,"note":"match 1 of 3; query_state with offset 2 for more","matches":[{"pointer":"/orders/1/id","value":2}]}`},
		{`{"path": "$.orders[?@.lines[?@.sku == 'B']].id"}`, `"matches":[{"pointer":"/orders/0/id","value":1}]`},
		{`{"path": "$.orders[?count(@.lines[*]) > 1].id"}`, `"matches":[{"pointer":"/orders/0/id","value":1}]`},
	} {
		res, err := QueryState.Call(ctx, s, tt.args)
		if err != nil || res.Code != "" || !strings.Contains(res.Text, tt.want) {
			t.Errorf("query_state(%s) = %s (%q)\nwant %s in it", tt.args, res.Text, res.Code, tt.want)
		}
	}
	for _, tt := range []struct{ args, code, text string }{
		{`{"path": "$[?@.a =="}`, CodeBadQuery, "not a JSONPath query (RFC 9535): jsonpath: "},
		{`{"path": "orders"}`, CodeBadQuery, "not a JSONPath query"},
		{`{"path": "$.a\n.b["}`, CodeBadQuery, "not a JSONPath query"},
		{`{"path": 3}`, CodeMalformed, "do not decode"},
		{`{}`, CodeMalformed, `"path" is required`},
		{`{"path": "$", "limit": 0}`, CodeMalformed, `"limit" must be at least 1`},
		{`{"path": "$` + strings.Repeat(".a", MaxQueryBytes) + `"}`, CodeBadQuery, "the query has"},
	} {
		res, err := QueryState.Call(ctx, s, tt.args)
		if err != nil || res.Code != tt.code || !strings.Contains(res.Text, tt.text) || strings.Contains(res.Text, "\n") {
			t.Errorf("query_state(%s) = %q (%q), want %q with %q", tt.args, res.Text, res.Code, tt.code, tt.text)
		}
	}
}

// TestQueryStateBounded: a query whose work could grow faster than the
// state is refused before it runs, and one over the work bound stops
// there with CodeBadQuery, whatever the state's size.
func TestQueryStateBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("queries a state of tens of MB")
	}
	var b strings.Builder
	b.WriteString(`{"r": [`)
	for i := range 3000 {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"id": %d, "x": {"y": [1, 2, {"z": "w"}]}}`, i)
	}
	b.WriteString(`]}`)
	s := newFake(t, b.String())
	ctx := context.Background()
	for _, tt := range []struct{ path, text string }{
		{`$..[?@..[?@..x]]`, "at most one descendant segment"},
		{`$..[?@[?@[?@.x]]]`, "at most one filter of its own"},
		{`$..[?@[?$..x]]`, "may not hold a descendant segment (..) or a query from $"},
		{`$..[?@[?$[*]]]`, "may not hold a descendant segment (..) or a query from $"},
		{`$..[?count(@[*,*,*,*,*][*,*,*,*,*]) > 1]`, "at most 16 nodes"},
		{`$[?count(@..*) > count(@..*)]`, "at most one descendant segment"},
	} {
		res, _ := QueryState.Call(ctx, s, fmt.Sprintf(`{"path": %q}`, tt.path))
		if res.Code != CodeBadQuery || !strings.Contains(res.Text, tt.text) {
			t.Errorf("query_state(%s) = %q (%q), want %q", tt.path, res.Text, res.Code, tt.text)
		}
	}
	// A long regular expression on every node is stopped by the work
	// bound, not the clock: the same answer on any machine.
	long := fmt.Sprintf(`$..[?search(@, "%s")]`, strings.Repeat("a", 3000))
	res, _ := QueryState.Call(ctx, s, fmt.Sprintf(`{"path": %q}`, long))
	if res.Code != CodeBadQuery || !strings.Contains(res.Text, "more work than allowed") {
		t.Errorf("a 3000-byte regular expression on every node: %q (%q)", res.Text, res.Code)
	}
	// Allowed, but quadratic in the state: the work bound stops it.
	old := queryWork
	queryWork = 1_000_000
	defer func() { queryWork = old }()
	for _, path := range []string{`$..[?$..z]`, `$..[?count($..*) > 1]`, `$..[?value($..z) == 'w']`} {
		res, _ := QueryState.Call(ctx, s, fmt.Sprintf(`{"path": %q}`, path))
		if res.Code != CodeBadQuery || !strings.Contains(res.Text, "more work than allowed") {
			t.Errorf("query_state(%s) = %.300q (%q)", path, res.Text, res.Code)
		}
	}
	// Linear queries on the same state run.
	for _, path := range []string{`$..z`, `$.r[?@.id > 2990].id`, `$..[?@.z == 'w']`, `$.r[?$.r[0].id == @.id]`, `$..*..*..*..*..*`, `$..[*,*,*,*][*,*,*,*]`} {
		if res, _ := QueryState.Call(ctx, s, fmt.Sprintf(`{"path": %q}`, path)); res.Code != "" {
			t.Errorf("query_state(%s) = %.300q (%q)", path, res.Text, res.Code)
		}
	}
	// A step whose context ends stops its query.
	c, cancel := context.WithCancel(ctx)
	cancel()
	if res, _ := QueryState.Call(c, s, `{"path": "$..*..*"}`); res.Code != CodeBadQuery || !strings.Contains(res.Text, "stopped") {
		t.Errorf("a cancelled query: %.300q (%q)", res.Text, res.Code)
	}
}

// TestSearchState: scalars containing the text, ignoring case, numbers
// and booleans as JSON text, in document order, a long string as an
// excerpt, the count of every match and a page of them; null, member
// names and a hidden element's placeholder are not searched.
func TestSearchState(t *testing.T) {
	long := strings.Repeat("a", 300) + "NEEDLE" + strings.Repeat("b", 300)
	s := viewStep{newFake(t, `{"b": {"name": "Needle in it", "n": 1234, "ok": true}, "a": ["needle", null, "x"], "needle": "no", "long": "`+long+`", "u": "ÉCOLE Été"}`),
		map[string]bool{"/a/1": true}}
	ctx := context.Background()
	for _, tt := range []struct{ args, want string }{
		{`{"text": "NEEDLE"}`, `{"total":3,"offset":0,"shown":3,"note":"matches 0-2 of 3: the last","matches":[{"pointer":"/a/0","value":"needle"},{"pointer":"/b/name","value":"Needle in it"},{"pointer":"/long","value":"…`},
		{`{"text": "23"}`, `"matches":[{"pointer":"/b/n","value":1234}]`},
		{`{"text": "tru"}`, `"matches":[{"pointer":"/b/ok","value":true}]`},
		{`{"text": "null"}`, `"total":0`},
		{`{"text": "name"}`, `"total":0`},
		{`{"text": "école"}`, `"matches":[{"pointer":"/u","value":"ÉCOLE Été"}]`},
		{`{"text": "needle", "offset": 1, "limit": 1}`, `{"total":3,"offset":1,"shown":1,"note":"match 1 of 3; search_state with offset 2 for more","matches":[{"pointer":"/b/name","value":"Needle in it"}]}`},
	} {
		res, err := SearchState.Call(ctx, s, tt.args)
		if err != nil || res.Code != "" || !strings.Contains(res.Text, tt.want) {
			t.Errorf("search_state(%s) = %s (%q)\nwant %s in it", tt.args, res.Text, res.Code, tt.want)
		}
	}
	res, _ := SearchState.Call(ctx, s, `{"text": "needle"}`)
	for _, m := range pageOf(t, res.Text).Matches {
		if m.Pointer == "/long" {
			v := m.Value.(string)
			if len(v) > SearchExcerpt+2*len("…") || !strings.Contains(v, "NEEDLE") || !strings.HasPrefix(v, "…") || !strings.HasSuffix(v, "…") {
				t.Errorf("the excerpt: %q", v)
			}
		}
	}
	for _, tt := range []struct{ args, text string }{
		{`{"text": ""}`, `"text" is required`},
		{`{}`, `"text" is required`},
		{`{"text": "` + strings.Repeat("x", MaxSearchText+1) + `"}`, "the limit is"},
		{`{"text": "x", "offset": -2}`, `"offset" must be at least 0`},
	} {
		if res, _ := SearchState.Call(ctx, s, tt.args); res.Code != CodeMalformed || !strings.Contains(res.Text, tt.text) {
			t.Errorf("search_state(%.60s) = %q (%q)", tt.args, res.Text, res.Code)
		}
	}
}

// TestQueryStatePages: matches that fit a page of their own go to the
// next page rather than being cut; one too large for any page is named
// in its place, and the matches after it are still shown.
func TestQueryStatePages(t *testing.T) {
	var items []string
	for i := range 10 {
		items = append(items, fmt.Sprintf(`{"id": %d, "text": "%s"}`, i, strings.Repeat("t", 300)))
	}
	s := newFake(t, `{"a": [`+strings.Join(items, ",")+`], "b": {"huge": "`+strings.Repeat("h", 3000)+`", "z": 1}}`)
	s.limit = 1024
	ctx := context.Background()
	seen := 0
	for off := 0; off < 10; {
		res, _ := QueryState.Call(ctx, s, fmt.Sprintf(`{"path": "$.a[*]", "offset": %d}`, off))
		pg := pageOf(t, res.Text)
		if pg.Shown == 0 || len(res.Text) > 1024 || pg.Total != 10 {
			t.Fatalf("offset %d: %s", off, res.Text)
		}
		for _, m := range pg.Matches {
			if v, ok := m.Value.(map[string]any); !ok || len(v["text"].(string)) != 300 {
				t.Fatalf("offset %d: a match cut: %s", off, res.Text)
			}
		}
		seen += pg.Shown
		off += pg.Shown
	}
	if seen != 10 {
		t.Errorf("%d matches read of 10", seen)
	}
	res, _ := QueryState.Call(ctx, s, `{"path": "$.b.*"}`)
	if !strings.Contains(res.Text, `{"pointer":"/b/huge","value":"(a string over the result limit: read it with read_state)"},{"pointer":"/b/z","value":1}`) {
		t.Errorf("a match too large for any page: %s", res.Text)
	}
}

// TestQueryFilterItemsSame checks query_state's filters on long arrays,
// evaluated on every core (filterItems), against the evaluation one
// item at a time: the same answer for filters of members, of nested
// values, from the root and with descendant segments, on arrays with
// hidden items (absent) and nulls, at several pages, and the same error
// when the query is over its work bounds.
func TestQueryFilterItemsSame(t *testing.T) {
	defer func(n, w int) { parallelMin, queryWork = n, w }(parallelMin, queryWork)
	rng := rand.New(rand.NewPCG(9, 10))
	recs := make([]any, 300)
	hidden := map[string]bool{}
	for i := range recs {
		switch rng.IntN(12) {
		case 0:
			recs[i] = nil
			if rng.IntN(2) == 0 {
				hidden[fmt.Sprintf("/records/%d", i)] = true
			}
			continue
		case 1:
			recs[i] = json.Number(fmt.Sprint(i))
			continue
		}
		recs[i] = map[string]any{"s": []string{"a", "b", "c"}[rng.IntN(3)], "n": json.Number(fmt.Sprint(rng.IntN(8))),
			"t": []any{[]string{"x", "y"}[rng.IntN(2)]}, "sub": map[string]any{"n": json.Number(fmt.Sprint(rng.IntN(4)))}}
	}
	s := viewStep{fakeStep: &fakeStep{state: map[string]any{"flag": true, "records": recs, "more": map[string]any{"records": recs[:50]}}}, hidden: hidden}
	ctx := context.Background()
	queries := []string{
		`$.records[?@.s == 'a']`, `$.records[?@.n > 3 && @.s != 'b'].n`, `$.records[?@.t[0] == 'x']`, `$..records[?@.n < 2]`,
		`$.records[?@.missing]`, `$.records[?$.flag == true].s`, `$.records[?@..n > 2]`, `$.records[?@ == 7]`, `$.records[?@.sub.n == @.n]`,
		`$.records[?count(@.t) == 1]`,
	}
	for _, q := range queries {
		for _, page := range []string{``, `, "limit": 3`, `, "offset": 40, "limit": 5`} {
			args := fmt.Sprintf(`{"path": %q%s}`, q, page)
			for _, work := range []int{50_000_000, 700} {
				queryWork = work
				var got [2]string
				for k, min := range []int{1 << 30, 4} {
					parallelMin = min
					res, err := QueryState.Call(ctx, s, args)
					if err != nil {
						t.Fatal(err)
					}
					got[k] = res.Code + ": " + res.Text
				}
				if got[0] != got[1] {
					t.Fatalf("query_state(%s), work %d: one at a time %s\non every core %s", args, work, got[0], got[1])
				}
			}
		}
	}
}
