// Package runner runs PatchBench (docs/run.md): Run crosses cases ×
// configurations × actors × rounds (Jobs) with bounded concurrency, runs
// each case's steps in order through one runtime.Session (project, render
// the prompt of prompt.tmpl, ask the actor, ExtractProposal, verify with the
// configuration's gates and audit with the full contract, commit or
// reject, move the phase), scores each run (scoring.LeakScan, scoring.ScoreScanned), counts
// tokens with a tiktoken encoding for actors that report none, and hands
// each finished run at once to a Sink (a rundir.Sink appends it to
// runs.jsonl). A provider endpoint found down (its breaker open, see
// actors.Breaker) stops the runs of the actors that use it (DownError);
// Options.Progress hears where a session stands. Stress submits every
// stress artifact to every configuration; Replay runs them as runs.
//
// In the tools protocol (Options.Protocol, docs/agents.md) each step
// is a StepEnv with the tools read_state and propose_patch: an actor that
// answers turn by turn is asked in a loop (toolLoop), an external agent
// (an actors.Driver, over MCP) calls the tools itself through an
// actors.AgentEnv (drivenLoop); both end a step on a commit or a budget.
package runner

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"golang.org/x/sync/errgroup"
)

// Options configure a benchmark run.
type Options struct {
	Cases   []*bench.Case
	Configs []*bench.Config
	Actors  []actors.Actor
	// Spec is the run's settings (rounds, attempts, the pass threshold,
	// the answer limit, the tokenizer, the token budget, the protocol and
	// its budgets: runspec.Spec). A zero answer limit or tools budget is
	// its default (actors.DefaultMaxAnswerBytes, DefaultMaxTurns, ...);
	// a zero protocol the json one.
	runspec.Spec
	// Concurrency bounds the runs asking their actors at once (at least
	// 1). A run that waits to retry after a provider's 5xx without
	// Retry-After gives its slot back meanwhile (actors.Pauser), so up to
	// 2 × Concurrency runs are in progress. Runs start in Jobs' order,
	// longest first within a round (longestFirst).
	Concurrency int
	// Shard, when Of > 1, runs only the runs whose key hashes to Index
	// modulo Of.
	Shard Shard
	// TokensSpent is what the runs already recorded used, counted
	// against Spec.MaxTokensTotal (when positive, Run stops cleanly,
	// ErrTokenBudget, once the runs recorded have sent that many tokens
	// to providers; runs in flight finish and are recorded) on a resume.
	TokensSpent int
	// Progress, when set, is called once before the first run starts,
	// after each run ends and after each run skipped because its
	// endpoint is down (one call at a time) with where the session
	// stands.
	Progress func(Progress)
	// EndpointDown, when set, is called once for each provider endpoint
	// found down (its breaker opened: actors.BreakAfter consecutive
	// connection failures), as soon as a run meets it; no run of an
	// actor that uses it is started afterwards.
	EndpointDown func(*actors.EndpointDownError)
	// Prompt is the prompt template (--prompt-template); nil is the
	// embedded one, DefaultPrompt.
	Prompt *Prompt
}

// Progress is where a session of Run stands: Done of the Total runs it
// set out to do (the runs the directory did not hold already) have
// finished, Errors and Pending of them without an outcome; Tokens counts
// their prompt and completion tokens and TokensSent the part sent to
// providers (not answered by the response cache). NotStarted counts the
// runs skipped because their endpoint is down; they are part of Total.
type Progress struct {
	Done, Total, Errors, Pending, NotStarted int
	Tokens, TokensSent                       int
}

// Shard selects a stable subset of runs: Index in [0, Of).
type Shard struct{ Index, Of int }

// Job is one run to do: a case, a configuration, an actor and a round.
type Job struct {
	Case   *bench.Case
	Config *bench.Config
	Actor  actors.Actor
	Round  int
	// Artifact, when set, replays a stress artifact as a run (Replay):
	// the artifact's step is submitted in the artifact's submit_phase,
	// and the run ends after it.
	Artifact *bench.Artifact
}

// RunID is the stable key of a run: case/config/actor/round
// (rundir.RunID).
func (j Job) RunID() string {
	return rundir.RunID(j.Case.ID, j.Config.Name, j.Actor.Name(), j.Round)
}

// InShard reports whether the run with this id belongs to shard s.
func (s Shard) InShard(runID string) bool {
	if s.Of <= 1 {
		return true
	}
	h := fnv.New32a()
	h.Write([]byte(runID))
	return int(uint64(h.Sum32())%uint64(s.Of)) == s.Index
}

// Jobs lists the runs of the options in a fixed order (round, case,
// configuration, actor), restricted to the shard.
func (o *Options) Jobs() []Job {
	var out []Job
	for r := 1; r <= o.Rounds; r++ {
		for _, c := range o.Cases {
			for _, cfg := range o.Configs {
				for _, a := range o.Actors {
					j := Job{Case: c, Config: cfg, Actor: a, Round: r}
					if o.Shard.InShard(j.RunID()) {
						out = append(out, j)
					}
				}
			}
		}
	}
	return out
}

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

// FatalError stops a run: an actor's error that every other run would
// meet too (HTTP 401, 403 or 404: a bad key, an unknown model). The run
// that met it is recorded.
type FatalError struct{ Msg string }

func (e *FatalError) Error() string { return e.Msg }

// ErrTokenBudget is Run's error when MaxTokensTotal is spent.
var ErrTokenBudget = errors.New("runner: the token budget is spent")

// DownError is Run's error when provider endpoints were found down: the
// runs that met them are recorded (as errors), and NotStarted runs of the
// actors that use them were not started. The same command again (with
// --retry-errors for the error runs) goes on once the endpoints are up.
type DownError struct {
	Endpoints  []*actors.EndpointDownError
	NotStarted int
}

func (e *DownError) Error() string {
	names := make([]string, len(e.Endpoints))
	for i, d := range e.Endpoints {
		names[i] = d.Error()
	}
	return fmt.Sprintf("%s; %d runs not started", strings.Join(names, "; "), e.NotStarted)
}

// Sink receives finished runs; it must be safe for concurrent use.
type Sink interface {
	Write(*rundir.Record) error
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
