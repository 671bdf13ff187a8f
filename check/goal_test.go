package check

import (
	"context"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

// TestInvariantsFalseBefore: validate warns about an
// invariant that does not hold on the state a step starts from in the
// reference run (a goal written as an invariant: an empty patch breaks
// it, and the runner counts that as inherited, never as the step's
// illegal commit), at the invariant's line; a true invariant is not
// warned about; and the embedded suite has no such invariant.
func TestInvariantsFalseBefore(t *testing.T) {
	text := strings.Replace(readExample(t), "    rule: post.order.total == pre.order.total\n",
		"    rule: post.order.total == pre.order.total\n  - name: the reply is written\n    rule: post.ticket.reply != ''\n", 1)
	c, ps := bench.ParseCase(exampleFile, []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	ws, err := InvariantsFalseBefore(context.Background(), c)
	if err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 {
		t.Fatalf("%d warnings, want 1: %v", len(ws), ws)
	}
	w := ws[0]
	wantLine := c.Line(ptr("/invariants/1/rule"))
	if !w.Warning || w.Code != bench.WarningInvariantFalseBefore || w.Line != wantLine || wantLine == 0 ||
		!strings.Contains(w.Msg, `invariant "the reply is written"`) || !strings.Contains(w.Msg, "step reply") {
		t.Fatalf("%+v; want a warning at line %d naming the invariant and the step", w, wantLine)
	}
	all, err := Warnings(context.Background(), []*bench.Case{c}, embeddedConfigs(t))
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	for _, x := range all {
		if x.Code == bench.WarningInvariantFalseBefore {
			found++
		}
	}
	if found != 1 {
		t.Fatalf("Warnings gives %d goal warnings, want 1", found)
	}

	for _, c := range loadSuite(t) {
		ws, err := InvariantsFalseBefore(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range ws {
			t.Errorf("the embedded suite: %s", w)
		}
	}
}
