package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

func loadExample(t testing.TB) (*bench.Case, []*bench.Config) {
	t.Helper()
	b, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, ps := bench.ParseCase("sup-example-refund.yaml", b)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		t.Fatal(err)
	}
	return c, cfgs
}

// memSink collects records.
type memSink struct {
	mu   sync.Mutex
	recs []*rundir.Record
}

func (m *memSink) Write(r *rundir.Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}

func TestRunNoModelActors(t *testing.T) {
	c, cfgs := loadExample(t)
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}, actors.Oversharer{}},
		Spec: runspec.Spec{Rounds: 2, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 3}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != 2*len(cfgs)*2 {
		t.Fatalf("%d records", len(sink.recs))
	}
	for _, r := range sink.recs {
		projected := r.Config == "view-only" || r.Config == "patchoptic"
		switch r.Actor {
		case "reference":
			if r.Status != rundir.StatusPassed || r.Leaked || r.ContentScore != 1 || !r.Steps[0].Committed {
				t.Errorf("%s: %+v", r.RunID, r)
			}
		case "oversharer":
			if r.Leaked == projected {
				t.Errorf("%s: leaked %v, projected %v", r.RunID, r.Leaked, projected)
			}
			if r.Leaked && (r.Leaks[0].Secret != "card" || r.Leaks[0].Where != "output" || r.Status != rundir.StatusFailed) {
				t.Errorf("%s: leaks %+v status %s", r.RunID, r.Leaks, r.Status)
			}
		}
		if r.Tokens.Prompt == 0 || r.Tokens.Completion == 0 || r.Tokens.Source != "tokenizer:o200k_base" {
			t.Errorf("%s: tokens %+v", r.RunID, r.Tokens)
		}
	}
	sum := summarize(sink.recs, cfgs, []string{"reference", "oversharer"})
	for _, row := range sum.Rows {
		if row.Runs != 2 {
			t.Errorf("%s/%s: %d runs", row.Config, row.Actor, row.Runs)
		}
		if row.View == bench.ViewProjected && (row.TokensChangeVsFull == nil || *row.TokensChangeVsFull >= 0) {
			t.Errorf("%s/%s: projected tokens do not drop: %v", row.Config, row.Actor, row.TokensChangeVsFull)
		}
		if row.Actor == "oversharer" && row.View == bench.ViewFull && (row.LeakRate != 1 || row.LeakedPerRound != 1) {
			t.Errorf("%s: leak rate %v per round %v", row.Config, row.LeakRate, row.LeakedPerRound)
		}
	}
}

// failing is an actor whose provider is down.
type failing struct{}

func (failing) Name() string { return "failing" }
func (failing) Propose(context.Context, actors.Request) (actors.Response, error) {
	return actors.Response{}, os.ErrDeadlineExceeded
}

// chatty answers with prose around a fenced proposal, or with no JSON.
type chatty struct{ noJSON bool }

func (chatty) Name() string { return "chatty" }
func (a chatty) Propose(_ context.Context, req actors.Request) (actors.Response, error) {
	if a.noJSON {
		return actors.Response{Raw: "I would rather not."}, nil
	}
	return actors.Response{Raw: "Sure! Here it is:\n```json\n" + string(req.Reference) + "\n```\nAnything else?"}, nil
}

func TestRunErrorsAndMalformed(t *testing.T) {
	c, cfgs := loadExample(t)
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs[len(cfgs)-1:], Actors: []actors.Actor{failing{}, chatty{}, chatty{noJSON: true}},
		Spec: runspec.Spec{Rounds: 1, MaxAttempts: 2, PassThreshold: 0.8}, Concurrency: 1}
	opts.Actors[2] = namedChatty{chatty{noJSON: true}}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	by := map[string]*rundir.Record{}
	for _, r := range sink.recs {
		by[r.Actor] = r
	}
	if r := by["failing"]; r.Status != rundir.StatusError || r.Error == nil || r.Leaked || r.SemanticPass {
		t.Errorf("failing: %+v", r)
	}
	if r := by["chatty"]; r.Status != rundir.StatusPassed {
		t.Errorf("chatty with a fenced proposal: %+v", r)
	}
	r := by["mute"]
	if r.Status != rundir.StatusFailed || r.Steps[0].Attempts != 2 || len(r.Steps[0].Earlier) != 1 || r.Steps[0].Decisions[0].Code != "malformed_patch" {
		t.Errorf("no JSON: %+v", r.Steps[0])
	}
}

type namedChatty struct{ chatty }

func (namedChatty) Name() string { return "mute" }

func TestResumeAndTruncatedLine(t *testing.T) {
	c, cfgs := loadExample(t)
	dir := t.TempDir()
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}},
		Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 2}
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	// A first run of three configurations only.
	first := opts
	first.Configs = cfgs[:3]
	if err := Run(context.Background(), first, nil, sink); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	// A crash in the middle of the fourth line.
	path := filepath.Join(dir, rundir.RunsFile)
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString(`{"run_id":"sup-example-refund/view-only/refer`)
	f.Close()
	sink, err = rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sink.Resume(false)
	if err != nil || res.Records != 3 || len(res.Skip) != 3 {
		t.Fatalf("Resume: %+v, %v", res, err)
	}
	counting := &countingSink{Sink: sink}
	if err := Run(context.Background(), opts, res.Skip, counting); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	if counting.n != len(cfgs)-3 {
		t.Errorf("resumed %d runs, want %d", counting.n, len(cfgs)-3)
	}
	recs := readRuns(t, path)
	if len(recs) != len(cfgs) {
		t.Fatalf("after resume: %d records", len(recs))
	}
	ids := map[string]bool{}
	for _, r := range recs {
		if ids[r.RunID] {
			t.Errorf("%s recorded twice", r.RunID)
		}
		ids[r.RunID] = true
	}
}

// readRuns reads every record of a runs.jsonl.
func readRuns(t testing.TB, path string) []*rundir.Record {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var recs []*rundir.Record
	r := rundir.NewReader(f)
	for r.Next() {
		recs = append(recs, r.Record())
	}
	if err := r.Err(); err != nil {
		t.Fatalf("the directory does not read back: %v", err)
	}
	return recs
}

type countingSink struct {
	*rundir.Sink
	mu sync.Mutex
	n  int
}

func (c *countingSink) Write(r *rundir.Record) error {
	c.mu.Lock()
	c.n++
	c.mu.Unlock()
	return c.Sink.Write(r)
}

func TestShardsPartitionTheRuns(t *testing.T) {
	c, cfgs := loadExample(t)
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}, actors.Oversharer{}}, Spec: runspec.Spec{Rounds: 3}}
	all := map[string]int{}
	for i := 0; i < 3; i++ {
		opts.Shard = Shard{Index: i, Of: 3}
		for _, j := range opts.Jobs() {
			all[j.RunID()]++
		}
	}
	opts.Shard = Shard{}
	if len(all) != len(opts.Jobs()) {
		t.Fatalf("shards cover %d runs of %d", len(all), len(opts.Jobs()))
	}
	for id, n := range all {
		if n != 1 {
			t.Errorf("%s in %d shards", id, n)
		}
	}
}

func TestPromptShowsOnlyTheView(t *testing.T) {
	c, _ := loadExample(t)
	s := c.Steps[0]
	msgs, err := DefaultPrompt.Render(s, "triage", c.Now, s.Contract.View(c.State), []string{"scope: write_outside_region: operation 0 writes /order/total"})
	if err != nil {
		t.Fatal(err)
	}
	text := msgs[0].Content + msgs[1].Content
	for _, want := range []string{"agent", "/ticket/reply", "/audit/-", "/order/id", "Current workflow phase: triage", "Current time: 2025-06-03T10:15:00Z", "covers its whole subtree", `"patch"`, "write_outside_region", "Refund for a damaged item"} {
		if !strings.Contains(text, want) {
			t.Errorf("prompt lacks %q", want)
		}
	}
	if strings.Contains(text, "4000 0000 0000 9995") {
		t.Error("the projected prompt shows the canary")
	}
	full, _ := DefaultPrompt.Render(s, "triage", c.Now, c.State.Value(), nil)
	if !strings.Contains(full[1].Content, "4000 0000 0000 9995") {
		t.Error("the full-state prompt does not show the state")
	}
	if !strings.HasPrefix(PromptVersion, "patchbench-prompt/2+") || len(PromptVersion) != len("patchbench-prompt/2+")+12 {
		t.Errorf("version %q", PromptVersion)
	}
}

// A case whose step removes the phase's parent cannot move its phase: the
// run is an error (a broken case), not a failure of the actor.
// A commit that removes the phase's place fails the run on the actor's
// account (the workflow cannot move on); a case whose initial state has
// no place for the phase is the case's fault: an error run.
func TestBrokenAdvance(t *testing.T) {
	b, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Replace(string(b), "write: [/ticket/reply, /ticket/status, /audit/-]", "write: [/ticket/reply, /ticket/status, /audit/-, /meta]", 1)
	text = strings.Replace(text, "        - {op: replace, path: /ticket/status, value: resolved}\n",
		"        - {op: replace, path: /ticket/status, value: resolved}\n        - {op: replace, path: /meta, value: gone}\n", 1)
	text = strings.Replace(text, "required: [meta, customer, order, ticket, audit]", "required: [customer, order, ticket, audit]", 1)
	text = strings.Replace(text, "    meta:\n      type: object\n", "    meta:\n", 1)
	c, ps := bench.ParseCase("sup-example-refund.yaml", []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	cfgs, _ := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs[:1], Actors: []actors.Actor{actors.Reference{}}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1}, Concurrency: 1}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	r := sink.recs[0]
	if r.Status != rundir.StatusFailed || r.Error != nil || !strings.Contains(r.Steps[0].PhaseError, `the phase cannot be moved to "done": the committed patch broke /meta/phase`) {
		t.Fatalf("status %s error %v, step %+v", r.Status, r.Error, r.Steps[0])
	}

	// The case's own state has no place for the phase.
	text = strings.Replace(string(b), "  meta: {phase: triage, queue: billing}\n", "  meta: triage\n", 1)
	text = strings.Replace(text, "  phase_path: /meta/phase\n", "  phase_path: /meta/phase/now\n", 1)
	c, ps = bench.ParseCase("sup-example-refund.yaml", []byte(text))
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	sink = &memSink{}
	opts.Cases = []*bench.Case{c}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	r = sink.recs[0]
	if r.Status != rundir.StatusError || r.Error == nil || !strings.Contains(*r.Error, "the phase cannot be moved") {
		t.Fatalf("a broken case: status %s error %v", r.Status, r.Error)
	}
}

func TestTokenBudget(t *testing.T) {
	c, cfgs := loadExample(t)
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}},
		Spec: runspec.Spec{Rounds: 2, MaxAttempts: 1, PassThreshold: 0.8, MaxTokensTotal: 1000}, Concurrency: 1}
	err := Run(context.Background(), opts, nil, sink)
	if !errors.Is(err, ErrTokenBudget) {
		t.Fatalf("error %v", err)
	}
	// Runs start until the budget is spent: all but the last run
	// recorded used less than it, and the last one crossed it.
	spent := 0
	for i, r := range sink.recs {
		if i == len(sink.recs)-1 && spent >= 1000 {
			t.Errorf("run %d started with the budget spent (%d tokens)", i+1, spent)
		}
		spent += r.Tokens.Prompt + r.Tokens.Completion
	}
	if spent < 1000 || len(sink.recs) >= 12 {
		t.Errorf("%d runs, %d tokens", len(sink.recs), spent)
	}
	// A resume counts what was spent already.
	opts.TokensSpent = 1000
	sink2 := &memSink{}
	if err := Run(context.Background(), opts, map[string]bool{}, sink2); !errors.Is(err, ErrTokenBudget) || len(sink2.recs) != 0 {
		t.Errorf("resume with the budget spent: %v, %d runs", err, len(sink2.recs))
	}
}

// TestJobsCrossScales: Jobs crosses the scales with the cases,
// configurations, actors and rounds: a growing case runs at each scale
// (its grown copy, the run id naming the scale after 1x), a case that
// does not grow runs once, at 1x, whatever the scales; every id is
// unique, and the same options give the same ids.
func TestJobsCrossScales(t *testing.T) {
	plain, cfgs := loadExample(t)
	grows := *plain
	grows.ID, grows.Grow = "grows", []bench.Grow{{}}
	big := grows // stands for the grown copy
	opts := Options{Cases: []*bench.Case{plain, &grows}, Configs: cfgs[:2], Actors: []actors.Actor{actors.Reference{}}, Spec: runspec.Spec{Rounds: 2},
		Scales: []Scaled{{Scale: bench.Scale{}, Cases: []*bench.Case{plain, &grows}}, {Scale: bench.Scale{Bytes: 1e6}, Cases: []*bench.Case{plain, &big}}}}
	jobs := opts.Jobs()
	// 2 rounds × 2 configurations × (1 plain + 2 scales of grows).
	if len(jobs) != 12 {
		t.Fatalf("%d jobs, want 12", len(jobs))
	}
	seen := map[string]bool{}
	for _, j := range jobs {
		id := j.RunID()
		if seen[id] {
			t.Errorf("run id %s twice", id)
		}
		seen[id] = true
		switch {
		case j.Case == plain && j.Scale != "":
			t.Errorf("%s: the case that does not grow at scale %q", id, j.Scale)
		case j.Case == &big && (j.Scale != "1MB" || !strings.HasSuffix(id, "@1MB")):
			t.Errorf("%s: the grown copy at scale %q", id, j.Scale)
		case j.Case == &grows && j.Scale != "":
			t.Errorf("%s: the 1x copy at scale %q", id, j.Scale)
		}
	}
	if !seen["grows/"+cfgs[0].Name+"/reference/2@1MB"] || !seen[plain.ID+"/"+cfgs[1].Name+"/reference/1"] {
		t.Errorf("ids %v", seen)
	}
	for i, j := range opts.Jobs() {
		if j.RunID() != jobs[i].RunID() {
			t.Fatalf("job %d: %s, then %s", i, jobs[i].RunID(), j.RunID())
		}
	}
}
