package runner

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/tools"
)

// runJSONSpec runs actor a on the example case in configuration cfg with
// the json protocol and the settings of spec (one round, one attempt
// unless it says more), and returns the record.
func runJSONSpec(t testing.TB, cfg string, a actors.Actor, spec runspec.Spec) *rundir.Record {
	t.Helper()
	spec.Protocol = ProtocolJSON
	return runExample(t, cfg, a, Options{Spec: spec})
}

// TestContextBudgetJSON: in the json protocol a prompt of more tokens
// than the context budget (counted as the runner counts a prompt whose
// provider reports no usage) is not sent: the step ends as
// context_exceeded, its prompt recorded, no token counted, and the run
// fails (it is not an error run). A prompt of exactly the budget is
// sent.
func TestContextBudgetJSON(t *testing.T) {
	answer := []actors.Response{{Raw: rightProposal}}
	a := &scripted{name: "script", script: answer}
	r := runJSONSpec(t, "patchoptic", a, runspec.Spec{})
	if r.Status != rundir.StatusPassed || len(a.reqs) != 1 {
		t.Fatalf("the default budget: status %s, %d requests, error %v", r.Status, len(a.reqs), r.Error)
	}
	prompt, sent := r.Tokens.Prompt, r.Steps[0].Prompt
	if prompt == 0 {
		t.Fatal("no prompt tokens")
	}
	a = &scripted{name: "script", script: answer}
	if r := runJSONSpec(t, "patchoptic", a, runspec.Spec{ContextTokens: prompt}); r.Status != rundir.StatusPassed || len(a.reqs) != 1 || r.Steps[0].Ended != "" {
		t.Errorf("a budget of the prompt's %d tokens: status %s, %d requests, ended %q", prompt, r.Status, len(a.reqs), r.Steps[0].Ended)
	}
	a = &scripted{name: "script", script: answer}
	r = runJSONSpec(t, "patchoptic", a, runspec.Spec{ContextTokens: prompt - 1})
	s := r.Steps[0]
	if r.Status != rundir.StatusFailed || r.Error != nil || r.SemanticPass || len(a.reqs) != 0 {
		t.Fatalf("a budget of %d tokens: status %s, error %v, %d requests sent", prompt-1, r.Status, r.Error, len(a.reqs))
	}
	if s.Ended != EndedContext || s.Committed || s.Attempts != 0 || s.ViewDigest == "" || len(s.Prompt) != len(sent) || s.Prompt[1].Content != sent[1].Content {
		t.Errorf("step: ended %q committed %v attempts %d view %q, prompt of %d messages", s.Ended, s.Committed, s.Attempts, s.ViewDigest, len(s.Prompt))
	}
	if r.Tokens.Prompt != 0 || r.Tokens.Completion != 0 || r.TokensSent != 0 {
		t.Errorf("tokens %+v, sent %d: nothing was sent", r.Tokens, r.TokensSent)
	}
}

// TestContextBudgetJSONFeedback: after a rejection the next attempt's
// prompt, longer by the verifier's feedback, is checked too: with a
// budget the first prompt fits exactly, the second attempt is not sent,
// and the step keeps the first attempt's record.
func TestContextBudgetJSONFeedback(t *testing.T) {
	wrong := actors.Response{Raw: `{"patch": [{"op": "replace", "path": "/order/status", "value": "refunded"}], "note": "x"}`}
	script := []actors.Response{wrong, {Raw: rightProposal}}
	a := &scripted{name: "script", script: script}
	r := runJSONSpec(t, "patchoptic", a, runspec.Spec{MaxAttempts: 2})
	if r.Status != rundir.StatusPassed || len(a.reqs) != 2 {
		t.Fatalf("the default budget: status %s, %d requests", r.Status, len(a.reqs))
	}
	counter, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	first := 0
	for _, m := range a.reqs[0].Messages {
		first += counter.count(m.Content)
	}
	a = &scripted{name: "script", script: script}
	r = runJSONSpec(t, "patchoptic", a, runspec.Spec{MaxAttempts: 2, ContextTokens: first})
	s := r.Steps[0]
	if r.Status != rundir.StatusFailed || len(a.reqs) != 1 || s.Ended != EndedContext || s.Attempts != 1 || len(s.Decisions) == 0 || r.Tokens.Prompt != first {
		t.Errorf("status %s, %d requests, ended %q, attempts %d, prompt tokens %d (want %d)", r.Status, len(a.reqs), s.Ended, s.Attempts, r.Tokens.Prompt, first)
	}
	if len(s.Prompt) != len(a.reqs[0].Messages) || s.Prompt[len(s.Prompt)-1].Content != a.reqs[0].Messages[len(s.Prompt)-1].Content {
		t.Errorf("the step's prompt is not the first attempt's")
	}
}

// TestContextBudgetJSONLargeView: with the smallest budget a plan may
// set (1,024 tokens), a view of some 40 KB pasted into the prompt stops
// the step before anything is sent.
func TestContextBudgetJSONLargeView(t *testing.T) {
	c, cfgs := loadExampleWithLines(t)
	var st map[string]any
	if err := json.Unmarshal(c.State.Bytes(), &st); err != nil {
		t.Fatal(err)
	}
	var notes []string
	for range 2000 {
		notes = append(notes, "a note of the audit trail")
	}
	st["audit"] = notes
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if c.State, err = runtime.ParseDocument(b); err != nil {
		t.Fatal(err)
	}
	a := &scripted{name: "script", script: []actors.Response{{Raw: rightProposal}}}
	sink := &memSink{}
	o := Options{Cases: []*bench.Case{c}, Configs: []*bench.Config{configNamed(t, cfgs, "unconstrained")}, Actors: []actors.Actor{a},
		Spec: runspec.Spec{Rounds: 1, PassThreshold: 0.8, MaxAttempts: 1, Protocol: ProtocolJSON, ContextTokens: 1024}, Concurrency: 1}
	if err := Run(context.Background(), o, nil, sink); err != nil {
		t.Fatal(err)
	}
	r := sink.recs[0]
	if r.Status != rundir.StatusFailed || len(a.reqs) != 0 || r.Steps[0].Ended != EndedContext || r.Steps[0].ViewTokens < 1024 {
		t.Errorf("status %s, %d requests, ended %q, view tokens %d", r.Status, len(a.reqs), r.Steps[0].Ended, r.Steps[0].ViewTokens)
	}
}

// TestContextBudgetToolLoop: in the tools protocol the conversation and
// the tools' specs are counted before each turn: with a budget the first
// turn fits exactly and the second passes (the whole state read into
// the conversation), the step ends as context_exceeded after one turn;
// one token less, before any.
func TestContextBudgetToolLoop(t *testing.T) {
	script := []actors.Response{calls(tc(tools.ReadState.Name, `{"pointer": ""}`)), calls(tc(tools.ProposePatch.Name, rightProposal))}
	a := &scripted{name: "script", script: script}
	r := runTools(t, "patchoptic", a, Options{})
	if !r.Steps[0].Committed || len(r.Steps[0].Turns) != 2 {
		t.Fatalf("the default budget: status %s, %d turns", r.Status, len(r.Steps[0].Turns))
	}
	counter, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	first := r.Steps[0].Turns[0].Tokens.Prompt + counter.count(specsText(tools.Specs()))
	for _, tt := range []struct {
		budget, turns int
	}{{first, 1}, {first - 1, 0}} {
		a := &scripted{name: "script", script: script}
		r := runTools(t, "patchoptic", a, Options{Spec: runspec.Spec{ContextTokens: tt.budget}})
		s := r.Steps[0]
		if r.Status != rundir.StatusFailed || r.Error != nil || s.Ended != EndedContext || len(s.Turns) != tt.turns || len(a.reqs) != tt.turns {
			t.Errorf("budget %d: status %s, error %v, ended %q, %d turns and %d requests (want %d)", tt.budget, r.Status, r.Error, s.Ended, len(s.Turns), len(a.reqs), tt.turns)
		}
		if len(s.Prompt) == 0 {
			t.Errorf("budget %d: no prompt recorded", tt.budget)
		}
	}
}

// budgetDriver is a Driver that makes its calls in order, keeping each
// result, then ends.
type budgetDriver struct {
	calls   []actors.ToolCall
	started bool
	results []string
	errs    []bool
}

func (*budgetDriver) Name() string { return "budget" }

func (*budgetDriver) Propose(context.Context, actors.Request) (actors.Response, error) {
	return actors.Response{}, context.Canceled
}

func (d *budgetDriver) Drive(ctx context.Context, env actors.AgentEnv) error {
	d.started = true
	for _, c := range d.calls {
		res, isErr := env.Call(ctx, c)
		d.results, d.errs = append(d.results, res), append(d.errs, isErr)
	}
	return nil
}

// TestContextBudgetDriven: for an external agent the budget bounds what
// it received in the step (the task, then the results): the result that
// would pass it is answered with an error saying so, and the step ends
// as context_exceeded; a task over the budget is not handed on (the
// agent is not started).
func TestContextBudgetDriven(t *testing.T) {
	script := func() *budgetDriver {
		return &budgetDriver{calls: []actors.ToolCall{tc(tools.ReadState.Name, `{"pointer": "/ticket", "depth": 1}`),
			tc(tools.ReadState.Name, `{"pointer": ""}`), tc(tools.ProposePatch.Name, rightProposal)}}
	}
	d := script()
	r := runTools(t, "patchoptic", d, Options{})
	s := r.Steps[0]
	if !s.Committed || len(s.Turns) != 3 {
		t.Fatalf("the default budget: status %s, error %v, %d turns", r.Status, r.Error, len(s.Turns))
	}
	counter, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	first, second := s.Turns[0].Tokens.Prompt, counter.count(s.Turns[1].Calls[0].Result)
	task := first - counter.count(s.Turns[0].Calls[0].Result)

	d = script()
	r = runTools(t, "patchoptic", d, Options{Spec: runspec.Spec{ContextTokens: first + second - 1}})
	s = r.Steps[0]
	if r.Status != rundir.StatusFailed || r.Error != nil || s.Ended != EndedContext || len(s.Turns) != 2 {
		t.Fatalf("status %s, error %v, ended %q, %d turns", r.Status, r.Error, s.Ended, len(s.Turns))
	}
	if c := s.Turns[1].Calls[0]; c.Error != tools.CodeBudgetSpent || c.Read || !strings.Contains(c.Result, "context budget") {
		t.Errorf("the call past the budget is recorded as %+v", c)
	}
	if len(d.results) != 3 || d.errs[0] || !d.errs[1] || !strings.Contains(d.results[1], "the context budget of") || strings.Contains(d.results[1], `"customer"`) {
		t.Errorf("the agent received %q (errors %v)", d.results, d.errs)
	}
	if got := s.Turns[1].Tokens.Prompt; got != counter.count(s.Turns[1].Calls[0].Result) {
		t.Errorf("the second turn's prompt tokens %d: the error's, not the result's", got)
	}

	d = script()
	r = runTools(t, "patchoptic", d, Options{Spec: runspec.Spec{ContextTokens: task - 1}})
	s = r.Steps[0]
	if r.Status != rundir.StatusFailed || r.Error != nil || s.Ended != EndedContext || len(s.Turns) != 0 || d.started || len(s.Prompt) == 0 {
		t.Errorf("a task over the budget: status %s, error %v, ended %q, %d turns, agent started %v, %d prompt messages", r.Status, r.Error, s.Ended, len(s.Turns), d.started, len(s.Prompt))
	}
}

// TestContextTokensPlan: the plan key limits.context_tokens sets the
// budget, and a figure under 1,024 is refused with the plan's line.
func TestContextTokensPlan(t *testing.T) {
	p, err := ParsePlan("p.yaml", []byte("version: 1\nlimits:\n  context_tokens: 2048\n"))
	if err != nil {
		t.Fatal(err)
	}
	if p.Spec.ContextTokens != 2048 || !p.Has("limits.context_tokens") {
		t.Errorf("plan: %d", p.Spec.ContextTokens)
	}
	_, err = ParsePlan("p.yaml", []byte("version: 1\nlimits:\n  context_tokens: 100\n"))
	if err == nil || !strings.Contains(err.Error(), "p.yaml:3: limits.context_tokens") {
		t.Errorf("100 tokens: %v", err)
	}
}

// TestCountPast: countPast is count up to its limit, and past it some
// figure above the limit.
func TestCountPast(t *testing.T) {
	c, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("{\n  \"note\": \"a line of the audit trail\",\n", 500)
	whole := c.count(text)
	for _, limit := range []int{0, 1, 100, whole - 1, whole, whole + 1, 10 * whole} {
		got := c.countPast(text, limit)
		if (limit >= whole && got != whole) || (limit < whole && got <= limit) {
			t.Errorf("limit %d: %d (the whole count is %d)", limit, got, whole)
		}
	}
	if got := c.countPast(text, 100); got > 200 {
		t.Errorf("limit 100: counted %d tokens, not stopping near the limit", got)
	}
}

// BenchmarkOverContext checks a prompt of a 100 MB view against the
// default budget: the count stops once past it.
func BenchmarkOverContext(b *testing.B) {
	tc, err := newCounter("")
	if err != nil {
		b.Fatal(err)
	}
	view := strings.Repeat("{\n  \"id\": 12345,\n  \"note\": \"a line of the audit trail\"\n},\n", 100<<20/56)
	r := &run{tc: tc}
	msgs := []actors.Message{{Role: "system", Content: "You are an agent."}, {Role: "user", Content: view}}
	for b.Loop() {
		if !r.overContext(msgs) {
			b.Fatal("within the budget")
		}
	}
}
