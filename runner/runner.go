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
// is an environment (stepEnv) with the tools of package tools: an actor that
// answers turn by turn is asked in a loop (toolLoop), an external agent
// (an actors.Driver, over MCP) calls the tools itself through an
// actors.AgentEnv (drivenLoop); both end a step on a commit or a budget.
package runner

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"math"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/tools"
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
	// Scales, when set, are the scales the runs cross (Spec.Scale's
	// list), each with the cases grown to it: Scales[i].Cases[k] is
	// Cases[k] grown (the same case when it does not grow). Nil runs
	// Cases as they are, recorded at Spec.Scale.
	Scales []Scaled
	// Attacks are the attacks the runs cross (Spec.Attack's list, by
	// the names records carry: "" for the default, the case's own
	// planted texts), each run at each; the cases under an attack other
	// than the default are each Scaled's Attacked[name]. Nil is the
	// default alone.
	Attacks []string
}

// Scaled is one scale of a run with the cases grown to it, in the order
// of Options.Cases: each case is grown once per scale, and its runs at
// that scale share the grown state, which no run modifies.
type Scaled struct {
	Scale bench.Scale
	Cases []*bench.Case
	// Attacked holds, for each attack of Options.Attacks other than the
	// default, the cases of Cases under it (bench.Case.Attacked), in
	// the same order: each is attacked once per scale.
	Attacked map[string][]*bench.Case
}

// Protocols (Options.Protocol, run --protocol) and disclosure modes
// (Options.Disclosure), described in docs/agents.md.
const (
	// ProtocolJSON is the paper's: one answer holding
	// {"patch": [...], "note": "..."} per attempt.
	ProtocolJSON = runspec.ProtocolJSON
	// ProtocolTools is an agent loop: each step is an environment with
	// the tools of package tools (read_state, propose_patch).
	ProtocolTools = runspec.ProtocolTools
	// DisclosureWhole pastes the view in the first message.
	DisclosureWhole = runspec.DisclosureWhole
	// DisclosureProgressive gives an outline of the view (its top-level
	// members, containers as their sizes); the actor reads the rest.
	DisclosureProgressive = runspec.DisclosureProgressive
)

// Budget defaults of a step in the tools protocol.
const (
	DefaultMaxTurns     = 16
	DefaultMaxToolCalls = 64
	DefaultMaxStepBytes = 4 << 20
	// keptToolBytes is how much of a call's arguments and result a
	// record keeps (64 KiB).
	keptToolBytes = actors.KeptAnswerBytes
)

// maxTurns, maxToolCalls and maxStepBytes are the budgets of a step in
// the tools protocol: Spec's, their defaults for 0 (and for a negative
// figure, which no command passes).
func (o *Options) maxTurns() int     { return cmp.Or(max(o.MaxTurns, 0), DefaultMaxTurns) }
func (o *Options) maxToolCalls() int { return cmp.Or(max(o.MaxToolCalls, 0), DefaultMaxToolCalls) }
func (o *Options) maxStepBytes() int64 {
	if o.MaxStepBytes > 0 {
		return o.MaxStepBytes
	}
	return DefaultMaxStepBytes
}

// recordedScale is the scale a record of case c at scale names: the
// scale, or "" at 1x and for a case that does not grow (its state is as
// written at any scale).
func recordedScale(scale string, c *bench.Case) string {
	if scale == "" || strings.EqualFold(scale, "1x") || len(c.Grow) == 0 {
		return ""
	}
	return scale
}

// DefaultContextTokens is an actor's context budget in tokens when
// Options.ContextTokens is 0 (Spec's default).
const DefaultContextTokens = 128000

// contextTokens is the context budget of each actor, in tokens
// (Options.ContextTokens; DefaultContextTokens for 0 or a negative
// figure, which no command passes).
func (o *Options) contextTokens() int {
	if o.ContextTokens > 0 {
		return o.ContextTokens
	}
	return DefaultContextTokens
}

// maxResult is the result limit of a tool call in bytes: Spec's, the
// default for 0 (and for a negative figure, which no command passes).
func (o *Options) maxResult() int {
	if o.MaxResultBytes > 0 {
		return int(min(o.MaxResultBytes, math.MaxInt32))
	}
	return tools.DefaultResultBytes
}

// maxAnswer is the answer limit in bytes.
func (o *Options) maxAnswer() int64 {
	if o.MaxAnswerBytes > 0 {
		return o.MaxAnswerBytes
	}
	return actors.DefaultMaxAnswerBytes
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
	// Scale is the scale of the run that ended last ("1x" for one at
	// 1x), set when the runs are at a scale other than 1x or at
	// several (Options.Scales); "" otherwise.
	Scale string
}

// scaled reports whether the runs' scales are worth naming: more than
// one, or one other than 1x.
func (o *Options) scaled() bool {
	return len(o.Scales) > 1 || len(o.Scales) == 1 && !o.Scales[0].Scale.IsBase()
}

// Shard selects a stable subset of runs: Index in [0, Of).
type Shard struct{ Index, Of int }

// Job is one run to do: a case (grown to the job's scale), a
// configuration, an actor, a round and the scale its record names ("" at
// 1x, and for a case that does not grow).
type Job struct {
	Case   *bench.Case
	Config *bench.Config
	Actor  actors.Actor
	Round  int
	Scale  string
	// Attack is the attack the case's planted texts are worded by, as
	// its record names it ("" for the default).
	Attack string
	// Artifact, when set, replays a stress artifact as a run (Replay):
	// the artifact's step is submitted in the artifact's submit_phase,
	// and the run ends after it.
	Artifact *bench.Artifact
}

// RunID is the stable key of a run: case/config/actor/round, with
// "@scale" after the round for a grown case and "+attack" after that
// for an attack other than the default (rundir.RunIDOf).
func (j Job) RunID() string {
	return rundir.RunIDOf(j.Case.ID, j.Config.Name, j.Actor.Name(), j.Round, j.Scale, j.Attack)
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
// scale, attack, configuration, actor), restricted to the shard. A case
// that does not grow runs once, at 1x (its state is the same at every
// scale), not once per scale. Every run is crossed with every attack
// (Options.Attacks).
func (o *Options) Jobs() []Job {
	var out []Job
	for r := 1; r <= o.Rounds; r++ {
		for k, c := range o.Cases {
			for i, sc := range o.Scales {
				if i > 0 && len(c.Grow) == 0 {
					break
				}
				if k >= len(sc.Cases) {
					continue
				}
				scale := recordedScale(sc.Scale.String(), c)
				if o.Attacks == nil {
					out = o.caseJobs(out, sc.Cases[k], r, scale, "")
				}
				for _, name := range o.Attacks {
					ac := sc.Cases[k]
					if name != "" {
						if k >= len(sc.Attacked[name]) {
							continue
						}
						ac = sc.Attacked[name][k]
					}
					out = o.caseJobs(out, ac, r, scale, name)
				}
			}
			if o.Scales == nil {
				out = o.caseJobs(out, c, r, recordedScale(o.Scale, c), "")
			}
		}
	}
	return out
}

// caseJobs appends the runs of case c (grown to scale, its planted texts
// worded by attack) in round r, one per configuration and actor, those
// of the shard.
func (o *Options) caseJobs(out []Job, c *bench.Case, r int, scale, attack string) []Job {
	for _, cfg := range o.Configs {
		for _, a := range o.Actors {
			j := Job{Case: c, Config: cfg, Actor: a, Round: r, Scale: scale, Attack: attack}
			if o.Shard.InShard(j.RunID()) {
				out = append(out, j)
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
