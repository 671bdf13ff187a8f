package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"golang.org/x/term"
)

const runExamples = `  # The benchmark on the embedded cases, every configuration, the no-model actors:
  patchbench run

  # Three rounds of one domain with the reference actor, into a chosen directory:
  patchbench run --domain finance --actor reference --rounds 3 --out results/fin

  # The same command again resumes an interrupted run; --retry-errors also
  # redoes the runs that ended in an error:
  patchbench run --domain finance --actor reference --rounds 3 --out results/fin --retry-errors

  # A model behind an OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY):
  OPENAI_BASE_URL=http://localhost:8000/v1 patchbench run --actor openai:my-model --temperature 0

  # Two models sharing a multi-agent case, by role:
  patchbench run --actor 'release-manager=ollama:mistral,openai:gpt-5-mini' --rps 2

  # A model behind Anthropic's Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL),
  # as a tool-using agent (native tool use) reading the state progressively:
  patchbench run --actor anthropic:claude-sonnet-4-5 --protocol tools --disclosure progressive

  # A model on an Ollama server (OLLAMA_HOST; ollama pull mistral first):
  patchbench run --actor ollama:mistral --temperature 0

  # Your own agent: a program that reads the request (JSON) on stdin and
  # writes {"text": "...", "usage": {...}} on stdout:
  patchbench run --actor 'exec:python3 my_agent.py' --timeout 10m

  # An external agent over MCP: for each run the tools are served over streamable
  # HTTP on 127.0.0.1 (PATCHBENCH_MCP_URL, PATCHBENCH_MCP_TOKEN) and the command runs:
  patchbench run --protocol tools --actor 'mcp:python3 my_mcp_agent.py' --timeout 10m

  # The tools protocol: each step an agent loop with read_state and propose_patch,
  # the first message holding an outline of the view (the actor reads the rest):
  patchbench run --protocol tools --disclosure progressive --max-attempts 3

  # Half of the runs on this machine, the other half elsewhere:
  patchbench run --shard 1/2

  # One shard of a Kubernetes Indexed Job or a CI matrix (the index from
  # JOB_COMPLETION_INDEX or PATCHBENCH_SHARD_INDEX, the count from
  # PATCHBENCH_SHARD_COUNT; scripts/k8s and scripts/github show both):
  patchbench run --shard env --out /results/shard-$JOB_COMPLETION_INDEX

  # A person (or a model called elsewhere) answers: requests go to panel/pending,
  # answers come from panel/answers; exit 3 while some wait, the same command continues:
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel
  patchbench pending panel

  # A provider that cannot be reached: after 5 consecutive connection failures
  # no more of its runs start (exit 3); once it answers, go on:
  OPENAI_BASE_URL=http://localhost:8000/v1 patchbench run --actor openai:my-model --retry-errors

Exit status:
  0  every expected run has an outcome (passed or failed)
  2  bad usage or input, an interrupted session (Ctrl-C), a write that failed
     (a full disk), or a stop on a bad key or model (HTTP 401, 403, 404)
  3  the work is not done: a run ended in an error, waits for a file actor's
     answer, or was not run (an endpoint down, the token budget spent); the
     same command continues, with --retry-errors to redo the error runs
`

// Bounds on the size of one run, so that a typo cannot exhaust memory.
const maxRounds = 10000

// Bounds of --max-answer-bytes: 1 KiB to 16 MiB (a body of about twice
// the limit is read per request in flight).
const (
	minAnswerBytes = 1 << 10
	maxAnswerBytes = 16 << 20
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
	// planFile is --plan; planDigest the plan's digest once applied.
	planFile   *string
	planDigest string
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

// runPlan is what a run does, once its flags are checked and its inputs
// loaded.
type runPlan struct {
	opts          runner.Options
	manifest      rundir.Manifest
	dir           string
	acts          []actors.Actor
	progressEvery time.Duration
	cacheFailures *cacheFailures
}

// runRun runs the benchmark: flags, actors, configurations and cases,
// the run directory, the runs, then the tables.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newRunFlags(stdout, stderr)
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if *f.planFile != "" {
		if code, ok := f.applyPlan(fs); !ok {
			return code
		}
	}
	sh, code, ok := f.check(fs, os.Getenv)
	if !ok {
		return code
	}
	// Provenance first: a run whose manifest cannot say what built it
	// should be known before it is spent.
	if w := readBuildInfo().warning(); w != "" {
		fmt.Fprintf(stderr, "patchbench run: warning: %s\n", w)
	}
	p, code, ok := f.plan(fs, sh)
	if !ok {
		return code
	}
	return execute(ctx, p, *f.retryErrors, *f.format, stdout, stderr)
}

// check checks the flags' values, in the order of the README, and parses
// the shard (--shard env reads getenv, and says where it read it).
func (f *runFlags) check(fs *flagSet, getenv func(string) string) (runner.Shard, int, bool) {
	var sh runner.Shard
	switch {
	case *f.format != "text" && *f.format != "json":
		return sh, fs.usageError("--format must be text or json, not %q", *f.format), false
	case *f.rounds < 1 || *f.concurrency < 1 || *f.maxAttempts < 1:
		return sh, fs.usageError("--rounds, --concurrency and --max-attempts must be at least 1"), false
	case *f.rounds > maxRounds || *f.maxAttempts > 100:
		return sh, fs.usageError("--rounds is at most %d and --max-attempts at most 100", maxRounds), false
	case !(*f.threshold >= 0 && *f.threshold <= 1): // also refuses NaN
		return sh, fs.usageError("--pass-threshold must be in [0, 1]"), false
	}
	sh, from, err := resolveShard(*f.shard, getenv)
	if err != nil {
		return sh, fs.usageError("%v", err), false
	}
	if from != "" {
		fmt.Fprintf(fs.stderr, "patchbench run: %s\n", from)
	}
	if len(f.actorSpecs) == 0 {
		f.actorSpecs = repeated{"reference", "oversharer", "follower"}
	}
	temp := f.temp
	switch {
	case *f.maxRetries < 0 || *f.maxOutput < 0 || *f.timeout <= 0 || (temp.set && !(temp.v >= 0 && temp.v <= 2)):
		return sh, fs.usageError("--max-retries and --max-output-tokens must be ≥ 0, --timeout positive, --temperature in [0, 2]"), false
	case *f.noCache && *f.cacheOnly:
		return sh, fs.usageError("--no-cache and --cache-only are opposites"), false
	case !(*f.rps == 0 || (*f.rps >= 0.001 && *f.rps <= 1e6)) || *f.maxTokensTotal < 0:
		return sh, fs.usageError("--rps must be 0 (no limit) or in [0.001, 1e6], --max-tokens-total ≥ 0"), false
	case *f.maxAnswer < minAnswerBytes || *f.maxAnswer > maxAnswerBytes:
		return sh, fs.usageError("--max-answer-bytes must be in [%d, %d]", minAnswerBytes, maxAnswerBytes), false
	case *f.progressEvery < 0:
		return sh, fs.usageError("--progress must be ≥ 0"), false
	case *f.protocol != runner.ProtocolJSON && *f.protocol != runner.ProtocolTools:
		return sh, fs.usageError("--protocol must be json or tools, not %q", *f.protocol), false
	case *f.disclosure != runner.DisclosureWhole && *f.disclosure != runner.DisclosureProgressive:
		return sh, fs.usageError("--disclosure must be whole or progressive, not %q", *f.disclosure), false
	case *f.maxTurns < 1 || *f.maxTurns > 1000 || *f.maxToolCalls < 1 || *f.maxToolCalls > 10000 || *f.maxStepBytes < minAnswerBytes || *f.maxStepBytes > 1<<30:
		return sh, fs.usageError("--max-turns must be in [1, 1000], --max-tool-calls in [1, 10000], --max-step-bytes in [%d, %d]", minAnswerBytes, 1<<30), false
	case *f.protocol == runner.ProtocolTools && *f.promptTemplate != "":
		return sh, fs.usageError("--prompt-template is for the json protocol; the tools protocol's prompt is runner/tools.tmpl"), false
	}
	return sh, 0, true
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

// plan builds the actors, loads the configurations and the cases, and
// makes the runner's options and the manifest.
func (f *runFlags) plan(fs *flagSet, sh runner.Shard) (*runPlan, int, bool) {
	params := f.params()
	acts, code, ok := f.buildActors(fs, params)
	if !ok {
		return nil, code, false
	}
	configs, code, ok := f.selectConfigs(fs)
	if !ok {
		return nil, code, false
	}
	if err := runner.CheckTokenizer(*f.tok); err != nil {
		return nil, fs.usageError("--tokenizer: %v", err), false
	}
	chosen, code, ok := f.selectCases(fs, acts)
	if !ok {
		return nil, code, false
	}
	prompt, err := loadPrompt(*f.promptTemplate)
	if err != nil {
		return nil, fs.usageError("--prompt-template: %v", err), false
	}
	p := &runPlan{acts: acts, progressEvery: *f.progressEvery, cacheFailures: f.cacheFailures, opts: runner.Options{
		Cases: chosen, Configs: configs, Actors: acts, Rounds: *f.rounds, Concurrency: *f.concurrency,
		MaxAttempts: *f.maxAttempts, PassThreshold: *f.threshold, Tokenizer: *f.tok, Shard: sh,
		MaxTokensTotal: *f.maxTokensTotal, MaxAnswerBytes: *f.maxAnswer, Prompt: prompt,
	}}
	for _, a := range acts {
		if _, driven := a.(actors.Driver); driven && *f.protocol != runner.ProtocolTools {
			return nil, fs.usageError("--actor %s: an MCP agent works through the tools; add --protocol tools", a.Name()), false
		}
	}
	if *f.protocol == runner.ProtocolTools {
		for _, a := range acts {
			if !actors.SpeaksTools(a) {
				return nil, fs.usageError("--protocol tools: actor %s speaks only the json protocol", a.Name()), false
			}
		}
		p.opts.Protocol, p.opts.Prompt = runner.ProtocolTools, runner.ToolsPrompt
		p.opts.Tools = runner.ToolOptions{Disclosure: *f.disclosure, MaxTurns: *f.maxTurns, MaxToolCalls: *f.maxToolCalls, MaxStepBytes: *f.maxStepBytes}
	}
	p.manifest = f.manifest(params, p.opts)
	p.dir = *f.out
	if p.dir == "" {
		p.dir = rundir.DefaultDir("results", p.manifest)
	}
	return p, 0, true
}

// loadPrompt reads and checks a --prompt-template file; "" is the
// embedded template.
func loadPrompt(path string) (*runner.Prompt, error) {
	if path == "" {
		return runner.DefaultPrompt, nil
	}
	b, err := readInput(path, runner.MaxPromptTemplateBytes)
	if err != nil {
		return nil, err
	}
	return runner.ParsePrompt(path, b)
}

// buildActors makes the actors of the --actor specs (actors.Build).
func (f *runFlags) buildActors(fs *flagSet, params actors.Params) ([]actors.Actor, int, bool) {
	acts, err := actors.Build(f.actorSpecs, actors.BuildOptions{Params: params, RPS: *f.rps, NoCache: *f.noCache,
		CacheDir: *f.cacheDir, DefaultCacheDir: defaultCacheDir, OnCacheWriteError: f.cacheFailures.add})
	var dupErr *actors.DuplicateSpecError
	var cacheErr *actors.CacheDirError
	switch {
	case errors.As(err, &dupErr):
		return nil, fs.usageError("--actor %s is given twice", dupErr.Spec), false
	case errors.As(err, &cacheErr):
		return nil, fs.usageError("--actor: %v; give --cache DIR or --no-cache", err), false
	case err != nil:
		return nil, fs.usageError("--actor: %v", err), false
	}
	return acts, 0, true
}

// defaultCacheDir is the response cache's directory when --cache is not
// given: patchbench/responses in the user's cache directory.
func defaultCacheDir() (string, error) {
	base, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v); give --cache DIR or --no-cache", err)
	}
	return filepath.Join(base, "patchbench", "responses"), nil
}

// selectConfigs loads the configurations and keeps those --config names,
// in their own order.
func (f *runFlags) selectConfigs(fs *flagSet) ([]*bench.Config, int, bool) {
	configs, err := loadConfigs(*f.configsDir)
	if err != nil {
		return nil, failf(fs.stderr, "run", "%v", err), false
	}
	if len(f.configNames) == 0 {
		return configs, 0, true
	}
	var names []string
	for _, c := range configs {
		names = append(names, c.Name)
	}
	for _, n := range f.configNames {
		if !slices.Contains(names, n) {
			return nil, fs.usageError("--config: no configuration %q (names: %s)", n, strings.Join(names, ", ")), false
		}
	}
	var keep []*bench.Config
	for _, c := range configs {
		if slices.Contains(f.configNames, c.Name) {
			keep = append(keep, c)
		}
	}
	return keep, 0, true
}

// selectCases loads the cases and keeps those of --case and --domain;
// every role of theirs must have an actor in each role map, and case ids
// must be unique.
func (f *runFlags) selectCases(fs *flagSet, acts []actors.Actor) ([]*bench.Case, int, bool) {
	cases, problems, err := loadCases(*f.casesDir)
	if err != nil {
		return nil, failf(fs.stderr, "run", "%v", err), false
	}
	if len(problems) > 0 {
		return nil, failf(fs.stderr, "run", "the case set does not load:\n%v\nRun \"patchbench validate\" for every problem.", problems), false
	}
	ds, domains, wanted := bench.DomainsOf(cases), splitList(*f.domain), splitList(*f.caseID)
	for _, d := range domains {
		if !slices.Contains(ds, d) {
			return nil, fs.usageError("--domain: unknown domain %q (the case set's domains: %s)", d, strings.Join(ds, ", ")), false
		}
	}
	var chosen []*bench.Case
	var roles []string
	for _, c := range cases {
		if (len(wanted) == 0 || slices.Contains(wanted, c.ID)) && (len(domains) == 0 || slices.Contains(domains, c.Domain)) {
			chosen = append(chosen, c)
			for _, st := range c.Steps {
				if !slices.Contains(roles, st.Role) {
					roles = append(roles, st.Role)
				}
			}
		}
	}
	for _, id := range wanted {
		if !slices.ContainsFunc(cases, func(c *bench.Case) bool { return c.ID == id }) {
			return nil, fs.usageError("--case: no case %q in the case set (patchbench cases lists them)", id), false
		}
	}
	if len(chosen) == 0 {
		return nil, fs.usageError("no case matches --case %q --domain %q", *f.caseID, *f.domain), false
	}
	for _, a := range acts {
		if m, ok := a.(*actors.RoleMap); ok {
			if missing := m.Missing(roles); len(missing) > 0 {
				return nil, fs.usageError("--actor %s: no actor for the roles %s (add role=spec entries, or a spec alone for every other role)", m.Name(), strings.Join(missing, ", ")), false
			}
			if unknown := m.Unknown(roles); len(unknown) > 0 {
				all := caseRoles(cases)
				if typo := m.Unknown(all); len(typo) > 0 {
					return nil, fs.usageError("--actor %s: %s is not a role of any case (the roles: %s)", m.Name(), strings.Join(typo, ", "), strings.Join(all, ", ")), false
				}
				fmt.Fprintf(fs.stderr, "patchbench run: --actor %s: no chosen case has the role %s; its actor is not asked\n", m.Name(), strings.Join(unknown, ", "))
			}
		}
	}
	ids := map[string]string{}
	for _, c := range chosen {
		if prev, ok := ids[c.ID]; ok {
			return nil, failf(fs.stderr, "run", "case id %s is used by %s and %s; run \"patchbench validate\"", c.ID, prev, c.File), false
		}
		ids[c.ID] = c.File
	}
	return chosen, 0, true
}

// caseRoles returns the roles of the cases' steps, sorted.
func caseRoles(cases []*bench.Case) []string {
	var roles []string
	for _, c := range cases {
		for _, st := range c.Steps {
			if !slices.Contains(roles, st.Role) {
				roles = append(roles, st.Role)
			}
		}
	}
	slices.Sort(roles)
	return roles
}

// manifest is the run's manifest: its settings (PatchBench design §7),
// the build, the start time and the runs the settings call for.
func (f *runFlags) manifest(params actors.Params, o runner.Options) rundir.Manifest {
	m := rundir.Manifest{
		Module: "github.com/patchbench/patchbench", CaseSet: displayDir(*f.casesDir), CaseDigest: rundir.CaseDigest(o.Cases),
		Cases: len(o.Cases), Rounds: o.Rounds, Seed: *f.seed, MaxAttempts: o.MaxAttempts, PassThreshold: o.PassThreshold,
		Tokenizer: o.Tokenizer, PromptVersion: o.Prompt.Version, PromptTemplate: *f.promptTemplate, Shard: shardString(*f.shard, o.Shard),
		Started:         time.Now().UTC().Format(time.RFC3339),
		ConfigDetails:   o.Configs,
		Temperature:     params.Temperature,
		MaxOutputTokens: params.MaxOutputTokens,
		Structured:      params.Structured,
		Plan:            *f.planFile,
		PlanDigest:      f.planDigest,
	}
	if o.Protocol == runner.ProtocolTools {
		m.Protocol, m.Disclosure = o.Protocol, o.Tools.Disclosure
		m.MaxTurns, m.MaxToolCalls, m.MaxStepBytes = o.Tools.MaxTurns, o.Tools.MaxToolCalls, o.Tools.MaxStepBytes
	}
	if o.MaxAnswerBytes != actors.DefaultMaxAnswerBytes {
		m.MaxAnswerBytes = o.MaxAnswerBytes // the default is left out, as before it could be set
	}
	for _, c := range o.Configs {
		m.Configs = append(m.Configs, c.Name)
	}
	for _, c := range o.Cases {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	for _, a := range o.Actors {
		m.Actors = append(m.Actors, a.Name())
		for _, p := range actors.Providers(a) {
			switch p {
			case "openai":
				m.OpenAIBaseURL = redactURL(params.OpenAIBaseURL)
			case "ollama":
				m.OllamaHost = redactURL(params.OllamaHost)
			case "anthropic":
				m.AnthropicBaseURL = redactURL(params.AnthropicBaseURL)
			}
		}
	}
	b := readBuildInfo()
	m.Version, m.GitRevision, m.Build = b.Version, b.Revision, b.manifest()
	m.ExpectedRuns = len(o.Jobs())
	return m
}

// nothingToDo reports whether the directory holds every run of the plan
// (none is left for this session).
func nothingToDo(p *runPlan, skip map[string]bool) bool {
	for _, j := range p.opts.Jobs() {
		if !skip[j.RunID()] {
			return false
		}
	}
	return true
}

// redactURL hides a password written into a URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
}

// execute opens the run directory (resuming what it holds), does the
// runs with their progress on standard error, records how the session
// ended in the manifest, and reports.
func execute(ctx context.Context, p *runPlan, retryErrors bool, format string, stdout, stderr io.Writer) int {
	d, err := runner.OpenDir(p.dir, p.manifest, p.opts.Configs, retryErrors)
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	p.opts.TokensSpent = d.TokensSent
	if len(d.Skip) > 0 && nothingToDo(p, d.Skip) {
		fmt.Fprintf(stderr, "patchbench run: nothing to do: every run of %s is recorded (--retry-errors redoes the error runs); the tables below are the directory's\n", p.dir)
	}
	tty, width := terminal(stderr)
	prog := startProgress(stderr, tty, width, p.progressEvery)
	p.opts.Progress = prog.update
	p.opts.EndpointDown = func(e *actors.EndpointDownError) {
		prog.say("patchbench run: %v; no more requests are sent to it, and no more of its runs are started", e)
	}
	p.cacheFailures.setSay(prog.say)
	runErr := runner.Run(ctx, p.opts, d.Skip, d)
	prog.finish()
	end, err := d.End(runErr)
	if end.TokenBudgetSpent {
		fmt.Fprintf(stderr, "patchbench run: the token budget (--max-tokens-total %d) is spent; the runs not done are left for a later run\n", p.opts.MaxTokensTotal)
	}
	if err != nil {
		if end.Err != nil && !errors.Is(end.Err, context.Canceled) {
			failf(stderr, "run", "%v", end.Err) // what failed first
		}
		return failf(stderr, "run", "%v; %s still marks the session interrupted (as it has since the session started); fix the cause, then run the same command again", err, rundir.ManifestFile)
	}
	var fatal *runner.FatalError
	if errors.As(end.Err, &fatal) {
		return failf(stderr, "run", "stopped: %s (the run is recorded in %s; fix the cause and run the same command with --retry-errors)", actors.OneLine(fatal.Error()), p.dir)
	}
	if end.Err != nil && !errors.Is(end.Err, context.Canceled) {
		return failf(stderr, "run", "%v; the runs recorded so far are kept and the manifest marks the session interrupted; fix the cause, then run the same command again", end.Err)
	}
	return finish(p, d, end, format, stdout, stderr)
}

// terminal reports whether w is a terminal, and its width in columns.
func terminal(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return true, width
}

// cacheFailures counts the answers the response cache could not keep (a
// full disk, a directory that cannot be written): the first is said at
// once, the count at the end. The runs keep those answers in their
// records.
type cacheFailures struct {
	mu    sync.Mutex
	n     int
	first error
	say   func(format string, a ...any)
}

func (c *cacheFailures) setSay(say func(format string, a ...any)) {
	c.mu.Lock()
	c.say = say
	c.mu.Unlock()
}

// add counts one failure (actors.BuildOptions.OnCacheWriteError).
func (c *cacheFailures) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == 1 {
		c.first = err
		if c.say != nil {
			c.say("patchbench run: warning: an answer could not be kept in the response cache (%v); the run records it all the same", err)
		}
	}
}

// finish reads the directory back (the last record of each run), writes
// summary.json, prints the tables and says what the directory holds. It
// returns exit 2 for an interrupted session and exit 3 while the work is
// not done: a run ended in an error, waits for a file actor's answer, or
// was not run (an endpoint down, the token budget spent); complete in
// summary.json is true only when every expected run has an outcome.
func finish(p *runPlan, d *runner.DirSession, end runner.Ending, format string, stdout, stderr io.Writer) int {
	summary, t, err := d.Summary()
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	if format == "json" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		o := report.RenderOptions{Width: textWidth(stdout, false)}
		report.RenderText(stdout, report.MainTable(summary), o)
		for _, t := range []report.Table{report.AttackTable(summary), report.ToolsTable(summary)} {
			if len(t.Rows) > 0 {
				fmt.Fprintf(stdout, "\n%s\n", t.Title)
				report.RenderText(stdout, t, o)
			}
		}
	}
	if end.Interrupted() {
		fmt.Fprintf(stderr, "patchbench run: interrupted; %d runs are in %s; run the same command again to resume\n", t.Runs, p.dir)
		return exitUsage
	}
	if t.Errors > 0 {
		fmt.Fprintf(stderr, "patchbench run: %d of %s ended in an error (--retry-errors redoes them); the first: %s\n", t.Errors, report.Plural(t.Runs, "run"), actors.OneLine(t.FirstError))
	}
	if down := end.Down; down != nil {
		names := make([]string, len(down.Endpoints))
		for i, e := range down.Endpoints {
			names[i] = e.Redacted()
		}
		fmt.Fprintf(stderr, "patchbench run: %s not started (unreachable: %s); once the server answers, run the same command with --retry-errors to do them and redo the error runs\n",
			report.PluralOf(down.NotStarted, "run was", "runs were"), strings.Join(names, ", "))
	}
	if c := p.cacheFailures; c != nil && c.n > 0 {
		fmt.Fprintf(stderr, "patchbench run: %s could not be kept in the response cache (the first: %v); the runs recorded them\n", report.PluralOf(c.n, "answer", "answers"), c.first)
	}
	fmt.Fprintf(stderr, "run directory: %s (%s)\n", p.dir, report.Plural(t.Runs, "run"))
	if t.Runs > t.Settled {
		waiting(p.acts, t, stderr)
	}
	if t.Outcomes < p.manifest.ExpectedRuns {
		fmt.Fprintf(stderr, "patchbench run: the work is not done: %d of %d expected runs have an outcome (exit %d)\n", t.Outcomes, p.manifest.ExpectedRuns, exitIncomplete)
		return exitIncomplete
	}
	return exitOK
}

// waiting says, for each file actor with pending runs, how many requests
// wait for an answer and where the answers go.
func waiting(acts []actors.Actor, t runner.Totals, stderr io.Writer) {
	for _, a := range acts {
		f, ok := a.(*actors.Files)
		if !ok || t.Pending[f.Name()] == 0 {
			continue
		}
		mine := t.Pending[f.Name()]
		n, _, err := actors.PendingRequests(f.Dir())
		if err != nil {
			fmt.Fprintf(stderr, "patchbench run: %v\n", err)
			continue
		}
		verb := "wait"
		if mine == 1 {
			verb = "waits"
		}
		fmt.Fprintf(stderr, "patchbench run: %s of actor %s %s for an answer (%s in %s); write each answer to %s/<key>.txt (\"patchbench pending %s\" lists them), then run the same command again\n",
			report.PluralOf(mine, "run", "runs"), f.Name(), verb, report.Plural(len(n), "request"), filepath.Join(f.Dir(), actors.FilesPending), filepath.Join(f.Dir(), actors.FilesAnswers), f.Dir())
	}
}
