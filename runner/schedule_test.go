package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
)

// stepCounts picks cases of the suite with different numbers of steps,
// in the suite's order.
func stepCounts(t *testing.T) []*bench.Case {
	t.Helper()
	cases, _ := loadSuite(t)
	var out []*bench.Case
	seen := map[int]int{}
	for _, c := range cases {
		if seen[len(c.Steps)] < 2 {
			seen[len(c.Steps)]++
			out = append(out, c)
		}
	}
	if len(seen) < 3 {
		t.Fatalf("the suite's cases have %d distinct step counts; want 3 or more", len(seen))
	}
	return out
}

// Within a round the runs with the most steps start first (in Jobs' order
// among equals), and rounds stay in order.
func TestLongestRunsStartFirst(t *testing.T) {
	cases := stepCounts(t)
	_, cfgs := loadSuite(t)
	opts := Options{Cases: cases, Configs: cfgs[:2], Actors: []actors.Actor{actors.Reference{}}, Spec: runspec.Spec{Rounds: 2, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	jobs := opts.Jobs()
	want := slices.Clone(jobs)
	longestFirst(want)
	for i := 1; i < len(want); i++ {
		a, b := want[i-1], want[i]
		if a.Round > b.Round || (a.Round == b.Round && a.steps() < b.steps()) {
			t.Fatalf("%s (%d steps) before %s (%d steps)", a.RunID(), a.steps(), b.RunID(), b.steps())
		}
		if a.Round == b.Round && a.steps() == b.steps() && slices.IndexFunc(jobs, func(j Job) bool { return j.RunID() == a.RunID() }) >
			slices.IndexFunc(jobs, func(j Job) bool { return j.RunID() == b.RunID() }) {
			t.Fatalf("%s and %s, equally long, swapped", a.RunID(), b.RunID())
		}
	}
	if want[0].Case == jobs[0].Case && want[0].steps() == jobs[0].steps() && want[len(want)/2-1].steps() == jobs[len(jobs)/2-1].steps() {
		t.Fatal("the fixture's order is already longest first: the test proves nothing")
	}

	// Run starts them in that order (one at a time here, so records
	// come in the order started).
	sink := &memSink{}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != len(want) {
		t.Fatalf("%d records; want %d", len(sink.recs), len(want))
	}
	for i, r := range sink.recs {
		if r.RunID != want[i].RunID() {
			t.Fatalf("run %d is %s; want %s", i, r.RunID, want[i].RunID())
		}
	}
	if longestFirst(nil); len(opts.Jobs()) != len(jobs) {
		t.Fatal("Jobs changed")
	}
}

// viewRecorder answers every step with its reference proposal, except
// the second step of each case, which fails; it keeps the token count of
// every view it was shown, by the view's SHA-256.
type viewRecorder struct {
	tc     *counter
	second map[string]string // case id → its second step's id
	mu     sync.Mutex
	tokens map[string]int
}

func (*viewRecorder) Name() string { return "view-recorder" }
func (v *viewRecorder) Propose(ctx context.Context, req actors.Request) (actors.Response, error) {
	b, err := runtime.EncodeIndent(req.View, "  ")
	if err != nil {
		return actors.Response{}, err
	}
	sum := sha256.Sum256(b)
	v.mu.Lock()
	v.tokens[hex.EncodeToString(sum[:])] = v.tc.count(string(b))
	v.mu.Unlock()
	if req.StepID == v.second[req.CaseID] {
		return actors.Response{}, errors.New("the provider went away")
	}
	return actors.Reference{}.Propose(ctx, req)
}

// A step's view tokens are counted beside the actor's answer; every step
// record, whether its run went on or ended there with an error, holds the
// count of its own view.
func TestViewTokensCountedBesideTheAnswer(t *testing.T) {
	cases := stepCounts(t)
	_, cfgs := loadSuite(t)
	tc, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	rec := &viewRecorder{tc: tc, second: map[string]string{}, tokens: map[string]int{}}
	var multi []*bench.Case
	for _, c := range cases {
		if len(c.Steps) > 1 {
			multi = append(multi, c)
			rec.second[c.ID] = c.Steps[1].ID
		}
	}
	sink := &memSink{}
	opts := Options{Cases: multi, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}, rec}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 2, PassThreshold: 0.8}, Concurrency: 4}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	errs, checked := 0, 0
	for _, r := range sink.recs {
		if r.Error != nil {
			errs++
		}
		if r.Actor != rec.Name() {
			continue
		}
		for _, sr := range r.Steps {
			if sr.NotReached {
				continue
			}
			want, ok := rec.tokens[sr.ViewDigest]
			if !ok || sr.ViewTokens != want || want == 0 {
				t.Fatalf("%s step %s: view_tokens %d; its view has %d (shown: %v)", r.RunID, sr.Step, sr.ViewTokens, want, ok)
			}
			checked++
		}
	}
	if errs != len(multi)*len(cfgs) || checked != 2*errs {
		t.Fatalf("%d error runs, %d steps checked; want %d error runs (one per case and configuration) of two steps each", errs, checked, len(multi)*len(cfgs))
	}
}

// flaky answers with a reference proposal through actors.Retry, as the
// live actors do: the first request of every run of case slow fails with
// a bare HTTP 500, whose backoff is long. It keeps how many requests are
// in flight at most, and the order runs finished in.
type flaky struct {
	slow   string
	retry  actors.Retry
	mu     sync.Mutex
	active int
	most   int
	failed map[string]bool
	order  []string
}

func (*flaky) Name() string { return "flaky" }
func (f *flaky) Propose(ctx context.Context, req actors.Request) (actors.Response, error) {
	key := req.CaseID + "/" + req.StepID
	var resp actors.Response
	_, err := f.retry.Do(ctx, func(ctx context.Context) error {
		f.mu.Lock()
		f.active++
		f.most = max(f.most, f.active)
		fail := req.CaseID == f.slow && !f.failed[key]
		f.failed[key] = true
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.active--
			f.mu.Unlock()
		}()
		time.Sleep(5 * time.Millisecond) // the request on the wire
		if fail {
			return &actors.HTTPError{Status: 500, Message: "internal error"}
		}
		var err error
		resp, err = actors.Reference{}.Propose(ctx, req)
		return err
	})
	f.mu.Lock()
	f.order = append(f.order, req.CaseID)
	f.mu.Unlock()
	return resp, err
}

// While a run waits to retry after a bare 5xx it gives its slot back:
// other runs go on meanwhile, and the requests in flight never exceed
// Concurrency.
func TestBackoffGivesTheSlotBack(t *testing.T) {
	cases := stepCounts(t)
	_, cfgs := loadSuite(t)
	f := &flaky{retry: actors.Retry{MaxRetries: 3, Base: time.Second, Max: time.Minute}, failed: map[string]bool{}}
	opts := Options{Cases: cases, Configs: cfgs[:1], Actors: []actors.Actor{f}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	jobs := opts.Jobs()
	longestFirst(jobs)
	slow := jobs[0].Case.ID // the run started first
	f.slow = slow
	sink := &memSink{}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	if len(sink.recs) != len(jobs) {
		t.Fatalf("%d records of %d runs", len(sink.recs), len(jobs))
	}
	for _, r := range sink.recs {
		if r.Status == rundir.StatusError {
			t.Fatalf("%s: %v", r.RunID, *r.Error)
		}
	}
	if f.most > opts.Concurrency {
		t.Fatalf("%d requests in flight at once; Concurrency is %d", f.most, opts.Concurrency)
	}
	// With its one slot held through the backoff, the slow run's first
	// answer would be the first; given back, the next run answered
	// first, whatever the jitter made of the wait.
	if f.order[0] == slow {
		t.Fatalf("answers in the order %v: the other runs waited for the slow run's backoff", f.order)
	}
}
