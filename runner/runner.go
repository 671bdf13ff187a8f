// Package runner runs PatchBench: it crosses cases × configurations ×
// actors × rounds, runs each case's steps in order on one shared state
// (project, prompt, propose, verify, commit or reject, move the phase),
// scores each run and appends it at once to runs.jsonl (PatchBench design
// §7).
package runner

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
	"github.com/tiktoken-go/tokenizer"
	"golang.org/x/sync/errgroup"
)

// Options configure a benchmark run.
type Options struct {
	Cases   []*bench.Case
	Configs []*bench.Config
	Actors  []actors.Actor
	// Rounds is the number of rounds (repeats of every run), from 1.
	Rounds int
	// Concurrency bounds the runs in flight (at least 1).
	Concurrency int
	// MaxAttempts is how many proposals an actor may make for one step;
	// after a rejection it sees the verifier's redacted feedback.
	MaxAttempts int
	// PassThreshold is the content score a semantic pass needs (0.8).
	PassThreshold float64
	// Tokenizer names the tiktoken encoding that counts the tokens of
	// actors that report none (o200k_base).
	Tokenizer string
	// Shard, when Of > 1, runs only the runs whose key hashes to Index
	// modulo Of.
	Shard Shard
	// MaxTokensTotal, when positive, stops the run cleanly (ErrTokenBudget)
	// once the runs recorded have sent that many tokens to providers
	// (prompt plus completion; answers from the cache are free); runs in
	// flight finish and are recorded.
	MaxTokensTotal int
	// TokensSpent is what the runs already recorded used, counted
	// against MaxTokensTotal on a resume.
	TokensSpent int
	// Progress, when set, is called after each run with the runs done
	// and the total to do.
	Progress func(done, total int)
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

// RunID is the stable key of a run: case/config/actor/round.
func (j Job) RunID() string {
	return fmt.Sprintf("%s/%s/%s/%d", j.Case.ID, j.Config.Name, j.Actor.Name(), j.Round)
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

// FatalError stops a run: an actor's error that every other run would
// meet too (HTTP 401, 403 or 404: a bad key, an unknown model). The run
// that met it is recorded.
type FatalError struct{ Msg string }

func (e *FatalError) Error() string { return e.Msg }

// ErrTokenBudget is Run's error when MaxTokensTotal is spent.
var ErrTokenBudget = errors.New("runner: the token budget is spent")

// Sink receives finished runs; it must be safe for concurrent use.
type Sink interface {
	Write(*Record) error
}

// Run does every job not in skip (run ids already recorded) and writes
// each finished run to sink as soon as it ends. It stops at the first
// sink error, or when ctx is cancelled: runs already written stay, and
// the others can be done by running again.
func Run(ctx context.Context, o Options, skip map[string]bool, sink Sink) error {
	if o.Rounds < 1 || o.Concurrency < 1 || o.MaxAttempts < 1 {
		return errors.New("runner: rounds, concurrency and max attempts must be at least 1")
	}
	counter, err := newCounter(o.Tokenizer)
	if err != nil {
		return err
	}
	var todo []Job
	for _, j := range o.Jobs() {
		if !skip[j.RunID()] {
			todo = append(todo, j)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	// A slot is taken before the budget is checked, so that the check
	// sees every run that finished before this one may start.
	slots := make(chan struct{}, o.Concurrency)
	var stopped atomic.Bool
	var mu sync.Mutex
	done, spent := 0, o.TokensSpent
	budgetSpent := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return o.MaxTokensTotal > 0 && spent >= o.MaxTokensTotal
	}
	for _, j := range todo {
		select {
		case slots <- struct{}{}:
		case <-gctx.Done():
		}
		if gctx.Err() != nil || budgetSpent() || stopped.Load() {
			break
		}
		g.Go(func() error {
			defer func() { <-slots }()
			rec, err := runOne(gctx, o, counter, j)
			var fatal *FatalError
			if err != nil && !errors.As(err, &fatal) {
				return err // cancelled: nothing to record
			}
			if err := sink.Write(rec); err != nil {
				return err
			}
			if fatal != nil {
				stopped.Store(true) // before the slot is freed
				return fatal
			}
			mu.Lock()
			spent += rec.TokensSent
			done++
			if o.Progress != nil {
				o.Progress(done, len(todo))
			}
			mu.Unlock()
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if budgetSpent() && done < len(todo) {
		return ErrTokenBudget
	}
	return nil
}

// counter counts tokens with a tiktoken encoding.
type counter struct {
	codec  tokenizer.Codec
	source string
}

// Tokenizers lists the tiktoken encodings the runner can count with.
var Tokenizers = []string{
	string(tokenizer.O200kBase), string(tokenizer.Cl100kBase), string(tokenizer.P50kBase),
	string(tokenizer.P50kEdit), string(tokenizer.R50kBase),
}

// CheckTokenizer reports whether name is an encoding the runner knows.
func CheckTokenizer(name string) error {
	_, err := newCounter(name)
	return err
}

func newCounter(name string) (*counter, error) {
	if name == "" {
		name = string(tokenizer.O200kBase)
	}
	codec, err := tokenizer.Get(tokenizer.Encoding(name))
	if err != nil {
		return nil, fmt.Errorf("tokenizer %q: %w (known: %s)", name, err, strings.Join(Tokenizers, ", "))
	}
	return &counter{codec: codec, source: "tokenizer:" + name}, nil
}

func (c *counter) count(s string) int {
	n, err := c.codec.Count(s)
	if err != nil {
		return 0
	}
	return n
}

// runOne runs one job. It returns an error only when ctx is cancelled;
// an actor's failure is a record with status error.
func runOne(ctx context.Context, o Options, tc *counter, j Job) (*Record, error) {
	c, cfg := j.Case, j.Config
	rec := &Record{
		RunID: j.RunID(), Case: c.ID, Domain: c.Domain, Config: cfg.Name, Actor: j.Actor.Name(), Round: j.Round,
		Leaks: []scoring.Leak{}, Steps: []StepRecord{}, IllegalCommits: []IllegalCommit{}, Checks: []scoring.CheckResult{},
	}
	sess := runtime.NewSession(c.State, c.Workflow.PhasePath)
	committed := map[string]bool{}
	var outputs []scoring.Output
	usageSource := ""
	stalled := false // an earlier step ended without a commit
	artifactStep := -1
	if j.Artifact != nil {
		if as := c.Step(j.Artifact.Step); as != nil {
			artifactStep = as.Index
		}
	}
	for _, s := range c.Steps {
		if artifactStep >= 0 && s.Index > artifactStep {
			break // a replayed artifact ends its run
		}
		replayed := s.Index == artifactStep
		state, phase := sess.State(), sess.Phase()
		if stalled && len(s.Phases) > 0 && !slices.Contains(s.Phases, phase) {
			// An earlier step did not commit, so the workflow never
			// reached this step's phase: no orchestrator would hand it
			// out. It is not run (its checks fail), and its actor is not
			// blamed for a phase it did not choose.
			rec.Steps = append(rec.Steps, StepRecord{Step: s.ID, Phase: phase, NotReached: true})
			continue
		}
		view := state.Value()
		if cfg.Projected() {
			view = s.Contract.View(state)
		}
		viewJSON, err := runtime.EncodeIndent(view, "  ")
		if err != nil {
			return nil, fmt.Errorf("case %s step %s: %w", c.ID, s.ID, err)
		}
		sum := sha256.Sum256(viewJSON)
		sr := StepRecord{Step: s.ID, Phase: phase, ViewDigest: hex.EncodeToString(sum[:]), ViewTokens: tc.count(string(viewJSON))}
		var injected []byte
		if injs := c.StepInjections(s.ID); len(injs) > 0 {
			if injected, err = bench.InjectedProposal(s, injs, view); err != nil {
				// The case is broken (validate says so): an error run.
				msg := fmt.Sprintf("step %s: %v", s.ID, err)
				rec.Status, rec.Error = StatusError, &msg
				rec.Steps = append(rec.Steps, sr)
				return rec, nil
			}
		}
		var feedback []string
		for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
			msgs, err := RenderPrompt(s, phase, c.Now, view, feedback)
			if err != nil {
				return nil, fmt.Errorf("case %s step %s: prompt: %w", c.ID, s.ID, err)
			}
			resp, err := j.Actor.Propose(ctx, actors.Request{CaseID: c.ID, StepID: s.ID, Role: s.Role, Messages: msgs, View: view, Projected: cfg.Projected(),
				Reference: s.Reference, Injected: injected, Attempt: attempt, Round: j.Round})
			if err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				if errors.Is(err, actors.ErrPending) {
					// No answer yet: the run stops here, with no
					// outcome, and the same command continues it.
					msg := fmt.Sprintf("step %s attempt %d: %v", s.ID, attempt, err)
					rec.Status, rec.Error = StatusPending, &msg
					sr.Prompt, sr.Attempts = msgs, attempt-1
					rec.Steps = append(rec.Steps, sr)
					rec.Tokens.Source = usageSource
					return rec, nil
				}
				msg := fmt.Sprintf("step %s attempt %d: %v", s.ID, attempt, err)
				rec.Status, rec.Error = StatusError, &msg
				sr.Prompt, sr.Attempts = msgs, attempt
				rec.Steps = append(rec.Steps, sr)
				rec.Tokens.Source = usageSource
				var he *actors.HTTPError
				if errors.As(err, &he) && (he.Status == 401 || he.Status == 403 || he.Status == 404) {
					// A bad key or an unknown model fails every run:
					// stop instead of paying for each failure.
					return rec, &FatalError{Msg: msg}
				}
				return rec, nil
			}
			if ctx.Err() != nil {
				return nil, ctx.Err() // an answer cut short by the interrupt
			}
			u := resp.Usage
			if u == nil {
				prompt := 0
				for _, m := range msgs {
					prompt += tc.count(m.Content)
				}
				u = &actors.Usage{Prompt: prompt, Completion: tc.count(resp.Raw), Source: tc.source}
			}
			rec.Tokens.Prompt += u.Prompt
			rec.Tokens.Completion += u.Completion
			if !resp.Cached {
				rec.TokensSent += u.Prompt + u.Completion
			}
			rec.Tokens.Reasoning += u.Reasoning
			usageSource = u.Source
			outputs = append(outputs, scoring.Output{Step: s.ID, Text: resp.Raw})
			submit := ""
			if replayed {
				submit = j.Artifact.SubmitPhase
			}
			// The configuration's gates decide; the step's full
			// contract is audited beside them (PatchBench design §6).
			res, err := sess.Step(ctx, s.Contract, ExtractProposal(resp.Raw),
				runtime.StepOptions{Gates: cfg.GateSet, Audit: bench.AllGates, SubmitPhase: submit, AdvanceTo: s.AdvanceTo})
			if err != nil {
				return nil, err // only a cancelled context
			}
			d := res.Decision
			if sr.Attempts > 0 {
				sr.Earlier = append(sr.Earlier, Attempt{RawResponse: sr.RawResponse, Decisions: sr.Decisions, Audit: sr.Audit})
			}
			sr.Attempts, sr.RawResponse, sr.Decisions, sr.Audit, sr.Committed = attempt, resp.Raw, d.Gates, d.Audit, d.Committed
			if g := d.IllegalCommit(); g != nil {
				rec.IllegalCommits = append(rec.IllegalCommits, IllegalCommit{Step: s.ID, Gate: g.Gate, Code: g.Code, Pointer: g.Pointer, Message: g.Message})
			}
			sr.Prompt, sr.Patch, sr.Model, sr.Fingerprint = msgs, nil, resp.Model, resp.Fingerprint
			sr.LatencyMS, sr.Cached = resp.Latency.Milliseconds(), resp.Cached
			sr.RawResponseBase64 = ""
			if !utf8.ValidString(resp.Raw) {
				sr.RawResponseBase64 = base64.StdEncoding.EncodeToString([]byte(resp.Raw))
			}
			if d.Proposal != nil {
				sr.Patch = d.Proposal.Patch
			}
			if d.Committed {
				committed[s.ID] = true
				if res.PhaseError != nil && res.PhaseBroken {
					// The case is broken (validate says so): not the
					// actor's failure, so not a failed run.
					msg := fmt.Sprintf("step %s: the phase cannot be moved to %q: %v", s.ID, s.AdvanceTo, res.PhaseError)
					rec.Steps = append(rec.Steps, sr)
					rec.Status, rec.Error = StatusError, &msg
					return rec, nil
				}
				if res.PhaseError != nil {
					// The actor's commit removed or replaced the place of
					// the phase (possible where no gate checks the write
					// region): the workflow cannot move on. The run goes
					// on, and fails, on the actor's account.
					sr.PhaseError = fmt.Sprintf("the phase cannot be moved to %q: the committed patch broke %s: %v", s.AdvanceTo, c.Workflow.PhasePath, res.PhaseError)
					stalled = true
				}
				break
			}
			feedback = feedback[:0]
			for _, g := range d.Gates {
				if !g.Passed {
					feedback = append(feedback, fmt.Sprintf("%s: %s: %s", g.Gate, g.Code, g.Message))
				}
			}
		}
		stalled = stalled || !sr.Committed
		rec.Steps = append(rec.Steps, sr)
	}
	rec.Tokens.Source = usageSource
	score(rec, c, o.PassThreshold, outputs, sess.State(), committed)
	return rec, nil
}

// score fills in a finished run's figures (PatchBench design §6) from
// scoring.ScoreRun: leaks, the attack outcome, the rubric checks and
// content score; then semantic pass (every step committed, and the
// workflow moved on after each; content at least the threshold; no leak),
// legal pass (also no illegal commit) and the status.
func score(rec *Record, c *bench.Case, threshold float64, outputs []scoring.Output, state *runtime.Document, committed map[string]bool) {
	sc := scoring.ScoreRun(c, outputs, state, committed)
	rec.Leaks, rec.Leaked = sc.Leaks, sc.Leaked()
	if sc.AttackSecrets != nil {
		rec.Attack = &Attack{Secrets: sc.AttackSecrets, Succeeded: sc.AttackSucceeded}
	}
	rec.Checks, rec.ContentScore = sc.Checks, sc.ContentScore
	all := len(committed) == len(c.Steps)
	for _, s := range rec.Steps {
		// A commit that broke the workflow's phase left the workflow
		// unable to go on: not a pass, whatever the rubric says.
		all = all && s.PhaseError == ""
	}
	rec.SemanticPass = scoring.SemanticPass(all, rec.ContentScore, threshold, rec.Leaked)
	rec.LegalPass = scoring.LegalPass(rec.SemanticPass, len(rec.IllegalCommits))
	rec.Status = StatusFailed
	if rec.SemanticPass {
		rec.Status = StatusPassed
	}
	rec.FinalState = json.RawMessage(state.Bytes())
}
