package runner

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/tools"
)

// A no-op is never an illegal commit (docs/run.md): an empty patch
// committed to any step of any case, in any configuration, leaves the
// state as it was, so any rule the audit finds broken after it was broken
// before it: inherited, not the step's. Before the fix the empty patch in
// Unconstrained counted as an illegal commit in fin-payment-run-approval
// and sw-oncall-handover, whose invariants do not hold on the state a step
// starts from.
func TestNoOpIsNeverAnIllegalCommit(t *testing.T) {
	t.Parallel() // the shared suite and run are only read
	cases, cfgs := loadSuite(t)
	if testing.Short() {
		cases = sample(cases, 4) // the full run takes every case
	}
	for _, protocol := range []string{ProtocolJSON, ProtocolTools} {
		sink := &memSink{}
		opts := Options{Cases: cases, Configs: cfgs, Actors: []actors.Actor{noopActor{}},
			Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8, Protocol: protocol}, Concurrency: 2}
		if err := Run(context.Background(), opts, nil, sink); err != nil {
			t.Fatal(err)
		}
		if len(sink.recs) != len(cases)*len(cfgs) {
			t.Fatalf("%s: %d records", protocol, len(sink.recs))
		}
		illegal, committed := map[string]int{}, 0
		for _, r := range sink.recs {
			for _, s := range r.Steps {
				if s.Committed {
					committed++
				}
			}
			if len(r.IllegalCommits) > 0 {
				illegal[r.Config]++
				t.Errorf("%s: %s in %s: an empty patch counted as an illegal commit: %+v", protocol, r.Case, r.Config, r.IllegalCommits)
			}
		}
		if committed == 0 {
			t.Fatalf("%s: no empty patch committed", protocol)
		}
		t.Logf("%s: %d empty patches committed; runs with an illegal commit, by configuration: %v", protocol, committed, illegal)
	}
}

// noopActor answers every step with an empty patch, as an answer in the
// json protocol and as a propose_patch call in the tools protocol.
type noopActor struct{}

func (noopActor) Name() string { return "noop" }
func (noopActor) Propose(_ context.Context, req actors.Request) (actors.Response, error) {
	const empty = `{"patch":[],"note":"nothing to do"}`
	if len(req.Tools) > 0 {
		return actors.Response{Calls: []actors.ToolCall{{ID: "p", Name: tools.ProposePatch.Name, Arguments: empty}}}, nil
	}
	return actors.Response{Raw: empty}, nil
}

// A commit that leaves a rule broken as it found it but breaks another is
// the step's illegal commit for the other rule, even when the audit's
// first failing rule is the inherited one; and the suite's two cases whose
// goals were invariants still count the step that misses them where the
// rule now judges it (fin-payment-run-approval's clerk who checks every
// payment but leaves PAY-0412 unflagged, sw-oncall-handover's outgoing
// engineer acknowledging their own handover).
func TestInheritedRuleBesideAnOwnViolation(t *testing.T) {
	b, err := os.ReadFile("testdata/sup-exact-total.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "invariants:\n", "invariants:\n  - name: the ticket is closed\n    rule: post.ticket.status == 'closed'\n", 1)
	c, ps := bench.ParseCase("sup-exact-total.yaml", []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	cases, cfgs := loadSuite(t)
	uncon := configNamed(t, cfgs, "unconstrained")
	a := scriptedActor{"reply": `{"patch":[{"op":"replace","path":"/order/total","value":43},{"op":"replace","path":"/ticket/status","value":"resolved"}]}`}
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: []*bench.Config{uncon}, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	r := sink.recs[0]
	if len(r.IllegalCommits) != 1 || !strings.Contains(r.IllegalCommits[0].Message, `"order total is never changed"`) {
		t.Fatalf("illegal commits %+v; want the total rule's, not the inherited goal's", r.IllegalCommits)
	}

	for _, tc := range []struct {
		caseID, step, patch, rule string
	}{
		{"fin-payment-run-approval", "prepare-run",
			`{"patch":[{"op":"replace","path":"/payments/0/check","value":"ok"},{"op":"replace","path":"/payments/1/check","value":"ok"},{"op":"replace","path":"/payments/2/check","value":"mismatch: invoices sum to 58200.00"},{"op":"replace","path":"/payments/3/check","value":"ok"},{"op":"replace","path":"/payments/4/check","value":"ok"},{"op":"replace","path":"/summary/flagged","value":["PAY-0413"]}]}`,
			"a checked run flags every payment above the single-approver limit"},
		{"sw-oncall-handover", "acknowledge",
			`{"patch":[{"op":"replace","path":"/handover/ack/by","value":"d.achebe"}]}`,
			"only the incoming engineer acknowledges"},
	} {
		var c *bench.Case
		for _, x := range cases {
			if x.ID == tc.caseID {
				c = x
			}
		}
		a := scriptedActor{}
		for _, s := range c.Steps {
			a[s.ID] = string(referenceOf(t, c, s))
		}
		a[tc.step] = tc.patch
		sink := &memSink{}
		opts := Options{Cases: []*bench.Case{c}, Configs: []*bench.Config{uncon}, Actors: []actors.Actor{a}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
		if err := Run(context.Background(), opts, nil, sink); err != nil {
			t.Fatal(err)
		}
		r := sink.recs[0]
		if len(r.IllegalCommits) != 1 || r.IllegalCommits[0].Step != tc.step || !strings.Contains(r.IllegalCommits[0].Message, strconv.Quote(tc.rule)) {
			t.Errorf("%s: illegal commits %+v; want one, step %s breaking %q", tc.caseID, r.IllegalCommits, tc.step, tc.rule)
		}
	}
}
