package runner

import (
	"cmp"
	"context"
	"errors"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"golang.org/x/sync/errgroup"
)

// slot is a run's place among the Concurrency runs that may ask their
// actors at once; it is the run's actors.Pauser. Only the run's goroutine
// uses it.
type slot struct {
	slots chan struct{}
	held  bool
}

// Pause gives the slot back while the run waits to retry.
func (s *slot) Pause() {
	if s.held {
		s.held = false
		<-s.slots
	}
}

// Resume takes a slot again, waiting for one; ctx's error when it is
// done first.
func (s *slot) Resume(ctx context.Context) error {
	if s.held {
		return nil
	}
	select {
	case s.slots <- struct{}{}:
		s.held = true
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// release gives the slot back at the end of the run, when it holds one.
func (s *slot) release() { s.Pause() }

// longestFirst orders jobs, within each round, by their number of steps,
// the most first (a stable sort: otherwise in Jobs' order). A step is one
// request to a live actor at least, so a run's steps are its length on a
// live run's critical path; starting the longest runs first leaves the
// short ones for the end, when fewer runs than Concurrency remain and
// slots would idle while the last long runs finish (longest-processing-
// time-first scheduling). Rounds stay in order, so a run cut short keeps
// whole early rounds.
func longestFirst(jobs []Job) {
	slices.SortStableFunc(jobs, func(a, b Job) int {
		if a.Round != b.Round {
			return cmp.Compare(a.Round, b.Round)
		}
		return cmp.Compare(b.steps(), a.steps())
	})
}

// steps is how many steps the job's run has at most: one for a replayed
// artifact, the case's steps otherwise.
func (j Job) steps() int {
	if j.Artifact != nil {
		return 1
	}
	return len(j.Case.Steps)
}

// Run does every job not in skip (run ids already recorded) and writes
// each finished run to sink as soon as it ends. It stops at the first
// sink error, or when ctx is cancelled: runs already written stay, and
// the others can be done by running again. When a provider endpoint is
// found down (a run's actor returns an *actors.EndpointDownError), the run
// is recorded, no further run of an actor using that endpoint is started,
// the others go on, and Run returns a *DownError. A run whose driven
// agent called no tool and said so (actors.ErrNoToolCalled) is not
// recorded; the others go on, and Run returns that error when nothing
// else went wrong.
func Run(ctx context.Context, o Options, skip map[string]bool, sink Sink) error {
	if o.Rounds < 1 || o.Concurrency < 1 || o.MaxAttempts < 1 {
		return errors.New("runner: rounds, concurrency and max attempts must be at least 1")
	}
	counter, err := sharedCounter(o.Tokenizer)
	if err != nil {
		return err
	}
	var todo []Job
	for _, j := range o.Jobs() {
		if !skip[j.RunID()] {
			todo = append(todo, j)
		}
	}
	longestFirst(todo)
	// The orphans of exec programs that no call could claim while another
	// was in flight are killed once every run is over.
	defer actors.EndPrograms()
	g, gctx := errgroup.WithContext(ctx)
	// A slot is taken before the budget is checked, so that the check
	// sees every run that finished before this one may start. A run
	// gives its slot back while it waits to retry after a server error
	// (actors.Pauser), so at most 2 × Concurrency runs are in progress.
	slots := make(chan struct{}, o.Concurrency)
	inProgress := make(chan struct{}, 2*o.Concurrency)
	var stopped, noCall atomic.Bool
	st := &runState{o: &o, spent: o.TokensSpent, prog: Progress{Total: len(todo)}, down: map[string]*actors.EndpointDownError{}}
	if o.Progress != nil {
		o.Progress(st.prog)
	}
	for _, j := range todo {
		select {
		case inProgress <- struct{}{}:
		case <-gctx.Done():
		}
		if gctx.Err() == nil {
			select {
			case slots <- struct{}{}:
			case <-gctx.Done():
				<-inProgress
			}
		}
		if gctx.Err() != nil || st.budgetSpent() || stopped.Load() {
			break
		}
		if e := actors.Down(j.Actor); e != nil {
			// Its endpoint's breaker is open: the run would fail
			// at once.
			<-slots
			<-inProgress
			st.notStarted(e)
			continue
		}
		g.Go(func() error {
			sl := &slot{slots: slots, held: true}
			defer func() { sl.release(); <-inProgress }()
			rec, err := runOne(actors.WithPauser(gctx, sl), o, counter, j)
			var fatal *FatalError
			var endpoint *actors.EndpointDownError
			if errors.Is(err, actors.ErrNoToolCalled) {
				noCall.Store(true) // not recorded: the run stays to do
				return nil
			}
			if err != nil && !errors.As(err, &fatal) && !errors.As(err, &endpoint) {
				return err // cancelled: nothing to record
			}
			if err := sink.Write(rec); err != nil {
				return err
			}
			if fatal != nil {
				stopped.Store(true) // before the slot is freed
				return fatal
			}
			st.recorded(rec, endpoint)
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(st.downOrder) > 0 {
		return &DownError{Endpoints: st.downOrder, NotStarted: st.prog.NotStarted}
	}
	if st.budgetSpent() && st.prog.Done < len(todo) {
		return ErrTokenBudget
	}
	if noCall.Load() {
		return actors.ErrNoToolCalled
	}
	return nil
}

// runState is what Run's runs share: the tokens spent against the budget,
// the progress, and the endpoints found down, in the order they were
// found. Its methods hold mu.
type runState struct {
	o         *Options
	mu        sync.Mutex
	spent     int
	prog      Progress
	down      map[string]*actors.EndpointDownError
	downOrder []*actors.EndpointDownError
}

// budgetSpent reports whether the token budget (MaxTokensTotal) is spent.
func (st *runState) budgetSpent() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	return st.o.MaxTokensTotal > 0 && st.spent >= st.o.MaxTokensTotal
}

// notStarted counts a run not started because its endpoint is down.
func (st *runState) notStarted(e *actors.EndpointDownError) {
	st.mu.Lock()
	defer st.mu.Unlock()
	st.noteDown(e)
	st.prog.NotStarted++
	if st.o.Progress != nil {
		st.o.Progress(st.prog) // the last call counts every run skipped
	}
}

// recorded counts a run written to the sink; endpoint, when not nil, is
// the endpoint the run found down.
func (st *runState) recorded(rec *rundir.Record, endpoint *actors.EndpointDownError) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if endpoint != nil {
		st.noteDown(endpoint)
	}
	st.spent += rec.TokensSent
	st.prog.Done++
	if st.o.scaled() {
		st.prog.Scale = cmp.Or(rec.Scale, "1x")
	}
	st.prog.Tokens += rec.Tokens.Prompt + rec.Tokens.Completion
	st.prog.TokensSent += rec.TokensSent
	switch rec.Status {
	case rundir.StatusError:
		st.prog.Errors++
	case rundir.StatusPending:
		st.prog.Pending++
	}
	if st.o.Progress != nil {
		st.o.Progress(st.prog)
	}
}

// noteDown records an endpoint found down, once, and tells
// Options.EndpointDown; mu held.
func (st *runState) noteDown(e *actors.EndpointDownError) {
	if st.down[e.Endpoint] == nil {
		st.down[e.Endpoint] = e
		st.downOrder = append(st.downOrder, e)
		if st.o.EndpointDown != nil {
			st.o.EndpointDown(e)
		}
	}
}
