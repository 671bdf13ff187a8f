package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/runner"
)

// runFlags are the flags of run.
type runFlags struct {
	casesDir, configsDir, out, caseID, domain, shard, tok, format, cacheDir *string
	promptTemplate, protocol, disclosure                                    *string
	maxTurns, maxToolCalls                                                  *int
	maxStepBytes                                                            *int64
	configNames                                                             stringList
	actorSpecs                                                              repeated
	rounds, concurrency, maxAttempts, maxOutput, maxTokensTotal, maxRetries *int
	seed, maxAnswer                                                         *int64
	retryErrors, noCache, cacheOnly, structured                             *bool
	threshold, rps                                                          *float64
	temp                                                                    optionalFloat
	timeout, progressEvery                                                  *time.Duration
	// cacheFailures counts the answers the response cache could not keep.
	cacheFailures *cacheFailures
	// planFile is --plan; planDigest the plan's digest once applied,
	// planSrc the plan and planned the flags it set (applyPlan).
	planFile   *string
	planDigest string
	planSrc    *runner.Plan
	planned    []planArg
}

// newRunFlags defines run's flags.
func newRunFlags(stdout, stderr io.Writer) (*flagSet, *runFlags) {
	fs := newFlags("run", "patchbench run [flags]", runExamples, stdout, stderr)
	f := &runFlags{cacheFailures: &cacheFailures{}}
	f.planFile = fs.String("plan", "", "read the runs' settings (cases, configurations, actors, rounds, protocol, limits) from this plan `file` (YAML; patchbench plan --print writes one; docs/plans/ has examples); a flag it sets may not be given too")
	f.casesDir = fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	f.configsDir = fs.String("configs", "", "the configurations `dir` (default: the embedded six)")
	fs.Var(&f.actorSpecs, "actor", "an actor `spec` (repeatable; default reference, oversharer and follower): "+strings.Join(actors.Known(), ", ")+
		"; a role map role=spec,role=spec gives each role of multi-agent cases its own")
	fs.Var(&f.configNames, "config", "only these configuration `names` (repeatable or comma list)")
	f.rounds = fs.Int("rounds", 1, "`n` rounds of every run")
	f.concurrency = fs.Int("concurrency", 4, "`n` runs at a time")
	f.out = fs.String("out", "", "the run `dir` (default results/run-<hash of the settings>, the same for the same settings, so a rerun resumes)")
	f.seed = fs.Int64("seed", 1, "the `seed` recorded for actors that sample")
	f.caseID = fs.String("case", "", "only the cases with these `ids` (comma list)")
	f.domain = fs.String("domain", "", "only the cases of these `domains` (comma list)")
	f.shard = fs.String("shard", "", "run only shard `i/n` (0 ≤ i < n) of the runs, chosen by a hash of each run's key; env (or env/n) takes i (and n) from a Kubernetes Indexed Job or a CI matrix: JOB_COMPLETION_INDEX or PATCHBENCH_SHARD_INDEX, and PATCHBENCH_SHARD_COUNT")
	f.retryErrors = fs.Bool("retry-errors", false, "redo the runs recorded with status error")
	f.maxAttempts = fs.Int("max-attempts", 1, "`n` proposals per step; after a rejection the actor sees the verifier's redacted feedback")
	f.tok = fs.String("tokenizer", "o200k_base", "the tiktoken `encoding` that counts tokens for actors that report none")
	f.threshold = fs.Float64("pass-threshold", 0.8, "the content `score` a semantic pass needs")
	f.format = fs.String("format", "text", "table `format`: text or json (the summary)")
	fs.Var(&f.temp, "temperature", "sampling `temperature` for live actors, in [0, 2] (default: the server's; reasoning models get none)")
	f.maxOutput = fs.Int("max-output-tokens", 0, "bound on each live response, in `tokens` (default: the server's)")
	f.timeout = fs.Duration("timeout", 2*time.Minute, "bound on each live request, and on each call of an exec: actor's program (`duration`)")
	f.cacheDir = fs.String("cache", "", "the response cache `dir` of live actors (default: patchbench/responses in the user's cache directory)")
	f.noCache = fs.Bool("no-cache", false, "send every live request, and keep no answer")
	f.cacheOnly = fs.Bool("cache-only", false, "answer live requests from the cache only; a miss is an error run (replays a recorded run offline)")
	f.rps = fs.Float64("rps", 0, "at most `n` live requests per second to each provider endpoint (0: no limit)")
	f.maxTokensTotal = fs.Int("max-tokens-total", 0, "stop cleanly once the runs recorded have used this many `tokens` (0: no limit)")
	f.structured = fs.Bool("structured", false, "ask live actors for the proposal's JSON Schema (json_schema / Ollama format) instead of any JSON object")
	f.maxRetries = fs.Int("max-retries", actors.DefaultRetry.MaxRetries, "retries of a live request on 429, 5xx, timeouts and dropped connections (`n`)")
	f.maxAnswer = fs.Int64("max-answer-bytes", actors.DefaultMaxAnswerBytes, "the longest answer an actor may send, in `bytes`; a longer one is rejected (limit_exceeded), its first 64 KiB and its length kept")
	f.progressEvery = fs.Duration("progress", 30*time.Second, "the `interval` between progress lines on standard error when it is not a terminal (a terminal shows a bar); 0: no progress")
	f.protocol = fs.String("protocol", runner.ProtocolJSON, "`protocol`: json (one answer holding the patch and a note per attempt) or tools (an agent loop with the tools read_state and propose_patch)")
	f.disclosure = fs.String("disclosure", runner.DisclosureWhole, "with --protocol tools, what the first message shows: whole (the view) or progressive (an outline; the actor reads the rest)")
	f.maxTurns = fs.Int("max-turns", runner.DefaultMaxTurns, "with --protocol tools, the actor's turns per step (`n`); a step that spends them fails with turn_budget_spent")
	f.maxToolCalls = fs.Int("max-tool-calls", runner.DefaultMaxToolCalls, "with --protocol tools, the tool calls per step (`n`); a step that spends them fails with tool_call_budget_spent")
	f.maxStepBytes = fs.Int64("max-step-bytes", runner.DefaultMaxStepBytes, "with --protocol tools, the `bytes` an actor may send per step (texts and tool arguments); a step that spends them fails with byte_budget_spent")
	f.promptTemplate = fs.String("prompt-template", "", "the prompt template `file` (text/template defining \"system\" and \"user\"; default: the embedded runner/prompt.tmpl); its hash is part of the settings")
	return fs, f
}

// check checks the flags' values, in the order of the README, and parses
// the shard (--shard env reads getenv, and says where it read it). A
// refused value is a usage error naming its flag (flagf), which a plan
// file's key replaces when the plan set it (inPlan).
func (f *runFlags) check(stderr io.Writer, getenv func(string) string) (runner.Shard, error) {
	var sh runner.Shard
	if *f.format != "text" && *f.format != "json" {
		return sh, flagf("format", "must be text or json, not %q", *f.format)
	}
	for _, c := range []struct {
		name  string
		v     int
		least int
		most  int
	}{{"rounds", *f.rounds, 1, maxRounds}, {"concurrency", *f.concurrency, 1, 0}, {"max-attempts", *f.maxAttempts, 1, 100}} {
		switch {
		case c.v < c.least:
			return sh, flagf(c.name, "must be at least %d, not %d", c.least, c.v)
		case c.most > 0 && c.v > c.most:
			return sh, flagf(c.name, "must be at most %d, not %d", c.most, c.v)
		}
	}
	if !(*f.threshold >= 0 && *f.threshold <= 1) { // also refuses NaN
		return sh, flagf("pass-threshold", "must be in [0, 1], not %g", *f.threshold)
	}
	sh, from, err := resolveShard(*f.shard, getenv)
	if err != nil {
		return sh, usagef("%v", err)
	}
	if from != "" {
		fmt.Fprintf(stderr, "patchbench run: %s\n", from)
	}
	if len(f.actorSpecs) == 0 {
		f.actorSpecs = repeated{"reference", "oversharer", "follower"}
	}
	temp := f.temp
	switch {
	case *f.maxRetries < 0:
		return sh, flagf("max-retries", "must be ≥ 0, not %d", *f.maxRetries)
	case *f.maxOutput < 0:
		return sh, flagf("max-output-tokens", "must be ≥ 0, not %d", *f.maxOutput)
	case *f.timeout <= 0:
		return sh, flagf("timeout", "must be positive, not %s", *f.timeout)
	case temp.set && !(temp.v >= 0 && temp.v <= 2):
		return sh, flagf("temperature", "must be in [0, 2], not %g", temp.v)
	case *f.noCache && *f.cacheOnly:
		return sh, usagef("--no-cache and --cache-only are opposites")
	case !(*f.rps == 0 || (*f.rps >= 0.001 && *f.rps <= 1e6)):
		return sh, flagf("rps", "must be 0 (no limit) or in [0.001, 1e6], not %g", *f.rps)
	case *f.maxTokensTotal < 0:
		return sh, flagf("max-tokens-total", "must be ≥ 0, not %d", *f.maxTokensTotal)
	case *f.maxAnswer < minAnswerBytes || *f.maxAnswer > maxAnswerBytes:
		return sh, flagf("max-answer-bytes", "must be in [%d, %d], not %d", minAnswerBytes, maxAnswerBytes, *f.maxAnswer)
	case *f.progressEvery < 0:
		return sh, usagef("--progress must be ≥ 0")
	case *f.protocol != runner.ProtocolJSON && *f.protocol != runner.ProtocolTools:
		return sh, flagf("protocol", "must be json or tools, not %q", *f.protocol)
	case *f.disclosure != runner.DisclosureWhole && *f.disclosure != runner.DisclosureProgressive:
		return sh, flagf("disclosure", "must be whole or progressive, not %q", *f.disclosure)
	case *f.maxTurns < 1 || *f.maxTurns > 1000:
		return sh, flagf("max-turns", "must be in [1, 1000], not %d", *f.maxTurns)
	case *f.maxToolCalls < 1 || *f.maxToolCalls > 10000:
		return sh, flagf("max-tool-calls", "must be in [1, 10000], not %d", *f.maxToolCalls)
	case *f.maxStepBytes < minAnswerBytes || *f.maxStepBytes > 1<<30:
		return sh, flagf("max-step-bytes", "must be in [%d, %d], not %d", minAnswerBytes, 1<<30, *f.maxStepBytes)
	case *f.protocol == runner.ProtocolTools && *f.promptTemplate != "":
		return sh, flagf("prompt-template", "is for the json protocol; the tools protocol's prompt is runner/tools.tmpl")
	}
	return sh, nil
}

// params are the live actors' parameters: the flags, and the server
// addresses and key from the environment.
func (f *runFlags) params() actors.Params {
	p := actors.Params{
		OpenAIBaseURL: os.Getenv("OPENAI_BASE_URL"), OpenAIKey: os.Getenv("OPENAI_API_KEY"), OllamaHost: os.Getenv("OLLAMA_HOST"),
		AnthropicBaseURL: os.Getenv("ANTHROPIC_BASE_URL"), AnthropicKey: os.Getenv("ANTHROPIC_API_KEY"),
		MaxOutputTokens: *f.maxOutput, Timeout: *f.timeout,
		Retry:      actors.Retry{MaxRetries: *f.maxRetries, Base: actors.DefaultRetry.Base, Max: actors.DefaultRetry.Max},
		Structured: *f.structured, CacheOnly: *f.cacheOnly, MaxAnswerBytes: *f.maxAnswer,
	}
	if f.temp.set {
		p.Temperature = &f.temp.v
	}
	seed := int(*f.seed)
	p.Seed = &seed
	return p
}
