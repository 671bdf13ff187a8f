package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/tools"
)

// The hidden values of the example case with lines (loadExampleWithLines)
// and of its twin (loadExampleTwin), and the locations the step's view
// hides in both.
var (
	hiddenTexts    = []string{"7731", "0000 9995", "GIFT", "5555", "8123", "SECRETLINE"}
	hiddenPointers = []string{"/customer/card_number", "/order/lines/1", "/audit"}
)

// loadExampleTwin is loadExampleWithLines's case with other values at
// the locations the step may not see: another card number, the hidden
// order line null, and an entry in the hidden audit log. Its view is the
// same.
func loadExampleTwin(t testing.TB) *bench.Case {
	t.Helper()
	b, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "  order: {id: ORD-1001, total: 42.50, currency: EUR, status: delivered}",
		"  order: {id: ORD-1001, total: 42.50, currency: EUR, status: delivered, lines: [{sku: MUG}, null]}", 1)
	text = strings.Replace(text, "      exclude: [/customer/card_number]", "      exclude: [/customer/card_number, /order/lines/1]", 1)
	text = strings.ReplaceAll(text, "4000 0000 0000 9995", "5555 8123 0000 0001")
	text = strings.Replace(text, "  audit: []", "  audit: [{note: SECRETLINE, card: \"5555 8123\"}]", 1)
	c, ps := bench.ParseCase("sup-example-refund.yaml", []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	return c
}

// navigationCalls are calls of the navigation tools in many shapes: at
// and around the hidden locations, queries whose filters could single
// out a hidden array element's null placeholder, searches for hidden
// text, pages of every size.
func navigationCalls() [][2]string {
	var out [][2]string
	for _, p := range []string{"", "/order", "/order/lines", "/order/lines/1", "/order/lines/1/pin", "/customer", "/customer/card_number", "/audit", "/audit/0"} {
		for _, extra := range []string{"", `, "depth": 0`, `, "depth": 5`, `, "limit": 1`, `, "offset": 1`, `, "offset": 1, "limit": 1`, `, "offset": 2, "depth": 3`, `, "offset": 9`} {
			out = append(out, [2]string{tools.ReadState.Name, fmt.Sprintf(`{"pointer": %q%s}`, p, extra)})
		}
	}
	for _, q := range []string{
		"$", "$..*", "$..[?@ == null]", "$.order.lines[*]", "$.order.lines[1]", "$.order.lines[-1]", "$.order.lines[0:5]",
		"$.order.lines[?!@.sku]", "$.order.lines[?@ == null]", "$..[?@.pin]", "$..pin", "$..card_number", "$.audit", "$.audit[*]",
		"$..[?search(@, '7731')]", "$..[?match(@, '.*9995')]", "$..[?@ == '4000 0000 0000 9995']", "$[?count(@.*) > 3]",
		"$..[?length(@) == 0]", "$.customer[*]", "$.customer.*", "$..sku", "$..[?@.sku != 'MUG']", "$.order.lines[?@.sku == @.pin]",
		"$..[?count(@[*]) == 2]", "$..[?value(@..pin) == '7731']", "$['order','customer','audit']", "$..[*,*]", "$[*][*][*][*]",
	} {
		for _, extra := range []string{"", `, "limit": 1`, `, "offset": 1, "limit": 2`} {
			out = append(out, [2]string{tools.QueryState.Name, fmt.Sprintf(`{"path": %q%s}`, q, extra)})
		}
	}
	for _, s := range []string{"7731", "9995", "0000", "GIFT", "gift", "pin", "null", "Ada", "e", "4", "5555", "SECRET", "card", "audit", "/"} {
		for _, extra := range []string{"", `, "limit": 1`, `, "offset": 1`} {
			out = append(out, [2]string{tools.SearchState.Name, fmt.Sprintf(`{"text": %q%s}`, s, extra)})
		}
	}
	return out
}

// checkNoOracle fails when the answer to a call of a navigation tool
// differs between two states that differ only where the actor may not
// see, or shows a hidden value or names a hidden location.
func checkNoOracle(t *testing.T, a, b *stepEnv, name, args string) {
	t.Helper()
	ca, err := a.call(context.Background(), actors.ToolCall{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := b.call(context.Background(), actors.ToolCall{Name: name, Arguments: args})
	if err != nil {
		t.Fatal(err)
	}
	if ca.text != cb.text {
		t.Fatalf("%s(%s) answers differently where only hidden values differ:\n%s\n%s", name, args, ca.text, cb.text)
	}
	for _, h := range hiddenTexts {
		if strings.Contains(ca.text, h) && !strings.Contains(args, h) {
			t.Fatalf("%s(%s) shows the hidden %q: %s", name, args, h, ca.text)
		}
	}
	var pg struct {
		Matches []struct {
			Pointer string `json:"pointer"`
		} `json:"matches"`
	}
	if strings.HasPrefix(ca.text, "{") && json.Unmarshal([]byte(ca.text), &pg) == nil {
		for _, m := range pg.Matches {
			for _, h := range hiddenPointers {
				if m.Pointer == h || strings.HasPrefix(m.Pointer, h+"/") {
					t.Fatalf("%s(%s) names the hidden location %s: %s", name, args, m.Pointer, ca.text)
				}
			}
		}
	}
}

// TestNavigationNoOracle: in a projected configuration, every
// navigation tool, whatever its arguments, answers from the view alone:
// the same text on two states that differ only at the hidden locations
// (another card number, the hidden order line null or an object, a
// hidden audit entry), never a hidden value, never a hidden location
// among its matches or in their count.
func TestNavigationNoOracle(t *testing.T) {
	c, cfgs := loadExampleWithLines(t)
	cfg := configNamed(t, cfgs, "patchoptic")
	twin := loadExampleTwin(t)
	for _, limit := range []int{0, 1024} {
		o := Options{Spec: runspec.Spec{MaxResultBytes: limit, MaxToolCalls: 10000}}
		a, b := testEnv(t, c, cfg, o), testEnv(t, twin, cfg, o)
		for _, call := range navigationCalls() {
			checkNoOracle(t, a, b, call[0], call[1])
		}
	}
	// The hidden line's null placeholder is neither matched nor counted;
	// the visible line is.
	e := testEnv(t, c, cfg, Options{})
	for _, tt := range []struct{ name, args, want string }{
		{tools.QueryState.Name, `{"path": "$..[?@ == null]"}`, `"total":0`},
		{tools.QueryState.Name, `{"path": "$.order.lines[*]"}`, `{"total":1,"offset":0,"shown":1,"note":"match 0 of 1: the last","matches":[{"pointer":"/order/lines/0","value":{"sku":"MUG"}}]}`},
		{tools.QueryState.Name, `{"path": "$.order.lines[?!@.sku]"}`, `"total":0`},
		{tools.QueryState.Name, `{"path": "$.customer.*"}`, `"total":2`},
		{tools.SearchState.Name, `{"text": "7731"}`, `"total":0`},
		{tools.SearchState.Name, `{"text": "mug"}`, `"matches":[{"pointer":"/order/lines/0/sku","value":"MUG"},{"pointer":"/ticket/body"`},
		{tools.ReadState.Name, `{"pointer": "/order/lines", "offset": 1}`, `"items":[null]`},
	} {
		got, _ := call(t, e, tt.name, tt.args)
		if !strings.Contains(got, tt.want) {
			t.Errorf("%s(%s) = %s, want %s in it", tt.name, tt.args, got, tt.want)
		}
	}
	// In a full-state configuration the same calls see everything.
	full := testEnv(t, c, configNamed(t, cfgs, "unconstrained"), Options{})
	if got, _ := call(t, full, tools.SearchState.Name, `{"text": "7731"}`); !strings.Contains(got, `"pointer":"/order/lines/1/pin"`) {
		t.Errorf("full state: %s", got)
	}
	if got, _ := call(t, full, tools.QueryState.Name, `{"path": "$.order.lines[*]"}`); !strings.Contains(got, `"total":2`) {
		t.Errorf("full state: %s", got)
	}
}

// FuzzNavigationNoOracle: whatever arguments a navigation tool gets, it
// answers the same on two states that differ only where the actor may
// not see, and shows no hidden value or location.
func FuzzNavigationNoOracle(f *testing.F) {
	c, cfgs := loadExampleWithLines(f)
	cfg := configNamed(f, cfgs, "patchoptic")
	twin := loadExampleTwin(f)
	nav := []string{tools.ReadState.Name, tools.QueryState.Name, tools.SearchState.Name}
	for i, call := range navigationCalls() {
		if i%5 == 0 {
			for k, n := range nav {
				if n == call[0] {
					f.Add(uint8(k), call[1])
				}
			}
		}
	}
	f.Fuzz(func(t *testing.T, tool uint8, args string) {
		o := Options{Spec: runspec.Spec{MaxResultBytes: 1024}}
		checkNoOracle(t, testEnv(t, c, cfg, o), testEnv(t, twin, cfg, o), nav[int(tool)%len(nav)], args)
	})
}

// TestResultLimitSetting: a step's result limit is the run's
// --max-result-bytes, its default for 0, and bounds every answer: a
// read of the whole view under a small limit is a page that says how
// to read on.
func TestResultLimitSetting(t *testing.T) {
	if d := runspec.Default(); d.MaxResultBytes != tools.DefaultResultBytes {
		t.Errorf("the flag's default %d, the tools' %d", d.MaxResultBytes, tools.DefaultResultBytes)
	}
	_, cfgs := loadExampleWithLines(t)
	cfg := configNamed(t, cfgs, "unconstrained")
	b, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	entries := strings.Repeat(`{note: "an earlier entry of the audit log, long enough to fill the state"}, `, 40)
	c, ps := bench.ParseCase("sup-example-refund.yaml", []byte(strings.Replace(string(b), "  audit: []", "  audit: ["+entries+"]", 1)))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	if got := testEnv(t, c, cfg, Options{}).ResultLimit(); got != tools.DefaultResultBytes {
		t.Errorf("default result limit %d", got)
	}
	e := testEnv(t, c, cfg, Options{Spec: runspec.Spec{MaxResultBytes: 1024}})
	if got := e.ResultLimit(); got != 1024 {
		t.Errorf("result limit %d", got)
	}
	whole, _ := call(t, testEnv(t, c, cfg, Options{}), tools.ReadState.Name, `{"pointer": "", "depth": 9}`)
	paged, rec := call(t, e, tools.ReadState.Name, `{"pointer": "", "depth": 9}`)
	if len(whole) <= 1024 || !strings.HasPrefix(whole, `{"audit":`) {
		t.Fatalf("the example's state is too small for this test: %d bytes", len(whole))
	}
	if len(paged) > 1024 || rec.Error != "" || !strings.Contains(paged, `"total":5`) || !strings.Contains(paged, "and offset") {
		t.Errorf("read under a limit of 1024 bytes: %d bytes: %s", len(paged), paged)
	}
}
