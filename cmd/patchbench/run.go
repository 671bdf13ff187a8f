package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"

	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
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
  patchbench run --actor 'reviewer=ollama:mistral,openai:gpt-5-mini' --rps 2

  # A model on an Ollama server (OLLAMA_HOST; ollama pull mistral first):
  patchbench run --actor ollama:mistral --temperature 0

  # Half of the runs on this machine, the other half elsewhere:
  patchbench run --shard 1/2

  # A person (or a model called elsewhere) answers: requests go to panel/pending,
  # answers come from panel/answers; exit 3 while some wait, the same command continues:
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel
  patchbench pending panel
`

// repeated is a repeatable flag whose values keep their commas.
type repeated []string

func (s *repeated) String() string     { return strings.Join(*s, " ") }
func (s *repeated) Set(v string) error { *s = append(*s, v); return nil }

// optionalFloat is a number flag that may be left unset (no default is
// printed, and none is sent).
type optionalFloat struct {
	v   float64
	set bool
}

func (f *optionalFloat) String() string {
	if f == nil || !f.set {
		return ""
	}
	return strconv.FormatFloat(f.v, 'g', -1, 64)
}

func (f *optionalFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	f.v, f.set = v, true
	return nil
}

// stringList is a repeatable flag.
type stringList []string

func (s *stringList) String() string { return strings.Join(*s, ",") }
func (s *stringList) Set(v string) error {
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			*s = append(*s, p)
		}
	}
	return nil
}

// Manifest is manifest.json: what a run directory holds and how it was
// made (PatchBench design §7).
type Manifest struct {
	Module        string          `json:"module"`
	Version       string          `json:"version"`
	GitRevision   string          `json:"git_revision,omitempty"`
	CaseSet       string          `json:"case_set"`
	CaseDigest    string          `json:"case_digest"`
	Cases         int             `json:"cases"`
	CaseIDs       []string        `json:"case_ids"`
	Configs       []string        `json:"configs"`
	ConfigDetails []*bench.Config `json:"config_details"`
	Actors        []string        `json:"actors"`
	Rounds        int             `json:"rounds"`
	Seed          int64           `json:"seed"`
	// Temperature (null: the server's default) and MaxOutputTokens (0:
	// the server's) of live actors; a spec's own ?temperature= wins.
	Temperature     *float64 `json:"temperature"`
	MaxOutputTokens int      `json:"max_output_tokens,omitempty"`
	OpenAIBaseURL   string   `json:"openai_base_url,omitempty"`
	OllamaHost      string   `json:"ollama_host,omitempty"`
	Structured      bool     `json:"structured,omitempty"`
	MaxAttempts     int      `json:"max_attempts"`
	PassThreshold   float64  `json:"pass_threshold"`
	Tokenizer       string   `json:"tokenizer"`
	PromptVersion   string   `json:"prompt_version"`
	Shard           string   `json:"shard,omitempty"`
	// ExpectedRuns is the number of runs the settings (and shard) call
	// for; a directory with fewer is incomplete.
	ExpectedRuns int    `json:"expected_runs"`
	Started      string `json:"started"`
	Finished     string `json:"finished,omitempty"`
	Interrupted  bool   `json:"interrupted,omitempty"`
	// TokenBudgetSpent says the run stopped at --max-tokens-total.
	TokenBudgetSpent bool `json:"token_budget_spent,omitempty"`
	// Revisions lists the module versions and VCS revisions of every
	// session that added runs, when the build knows them.
	Revisions []string `json:"revisions,omitempty"`
}

// key is what makes two manifests the same run: everything but times.
func (m Manifest) key() string {
	m.Started, m.Finished, m.Interrupted, m.Version, m.GitRevision, m.Revisions = "", "", false, "", "", nil
	m.TokenBudgetSpent = false
	m.ExpectedRuns = 0 // follows from the rest (and differs between shards)
	b, _ := json.Marshal(m)
	return string(b)
}

// differences names the settings in which two manifests differ.
func (m Manifest) differences(o Manifest) []string {
	var a, b map[string]any
	ja, _ := json.Marshal(m)
	jb, _ := json.Marshal(o)
	json.Unmarshal(ja, &a)
	json.Unmarshal(jb, &b)
	var out []string
	for k := range a {
		switch k {
		case "started", "finished", "interrupted", "version", "git_revision", "revisions", "expected_runs", "token_budget_spent":
			continue
		}
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

// redactURL hides a password written into a URL.
func redactURL(s string) string {
	if u, err := url.Parse(s); err == nil && u.User != nil {
		return u.Redacted()
	}
	return s
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

// Bounds on the size of one run, so that a typo cannot exhaust memory.
const (
	maxRounds = 10000
	maxShards = 10000
)

func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("run", "patchbench run [flags]", runExamples, stdout, stderr)
	casesDir := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	configsDir := fs.String("configs", "", "the configurations `dir` (default: the embedded six)")
	var configNames stringList
	var actorSpecs repeated
	fs.Var(&actorSpecs, "actor", "an actor `spec` (repeatable; default reference, oversharer and follower): "+strings.Join(actors.Known(), ", ")+
		"; a role map role=spec,role=spec gives each role of multi-agent cases its own")
	fs.Var(&configNames, "config", "only these configuration `names` (repeatable or comma list)")
	rounds := fs.Int("rounds", 1, "`n` rounds of every run")
	concurrency := fs.Int("concurrency", 4, "`n` runs at a time")
	out := fs.String("out", "", "the run `dir` (default results/run-<hash of the settings>, the same for the same settings, so a rerun resumes)")
	seed := fs.Int64("seed", 1, "the `seed` recorded for actors that sample")
	caseID := fs.String("case", "", "only the case with this `id`")
	domain := fs.String("domain", "", "only the cases of this `domain`")
	shard := fs.String("shard", "", "run only shard `i/n` (0 ≤ i < n) of the runs, chosen by a hash of each run's key")
	retryErrors := fs.Bool("retry-errors", false, "redo the runs recorded with status error")
	maxAttempts := fs.Int("max-attempts", 1, "`n` proposals per step; after a rejection the actor sees the verifier's redacted feedback")
	tok := fs.String("tokenizer", "o200k_base", "the tiktoken `encoding` that counts tokens for actors that report none")
	threshold := fs.Float64("pass-threshold", 0.8, "the content `score` a semantic pass needs")
	format := fs.String("format", "text", "table `format`: text or json (the summary)")
	var temp optionalFloat
	fs.Var(&temp, "temperature", "sampling `temperature` for live actors, in [0, 2] (default: the server's; reasoning models get none)")
	maxOutput := fs.Int("max-output-tokens", 0, "bound on each live response, in `tokens` (default: the server's)")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound on each live request (`duration`)")
	cacheDir := fs.String("cache", "", "the response cache `dir` of live actors (default: patchbench/responses in the user's cache directory)")
	noCache := fs.Bool("no-cache", false, "send every live request, and keep no answer")
	cacheOnly := fs.Bool("cache-only", false, "answer live requests from the cache only; a miss is an error run (replays a recorded run offline)")
	rps := fs.Float64("rps", 0, "at most `n` live requests per second to each provider endpoint (0: no limit)")
	maxTokensTotal := fs.Int("max-tokens-total", 0, "stop cleanly once the runs recorded have used this many `tokens` (0: no limit)")
	structured := fs.Bool("structured", false, "ask live actors for the proposal's JSON Schema (json_schema / Ollama format) instead of any JSON object")
	maxRetries := fs.Int("max-retries", actors.DefaultRetry.MaxRetries, "retries of a live request on 429, 5xx, timeouts and dropped connections (`n`)")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	if *rounds < 1 || *concurrency < 1 || *maxAttempts < 1 {
		return fs.usageError("--rounds, --concurrency and --max-attempts must be at least 1")
	}
	if *rounds > maxRounds || *maxAttempts > 100 {
		return fs.usageError("--rounds is at most %d and --max-attempts at most 100", maxRounds)
	}
	if !(*threshold >= 0 && *threshold <= 1) { // also refuses NaN
		return fs.usageError("--pass-threshold must be in [0, 1]")
	}
	var sh runner.Shard
	if *shard != "" {
		i, n, ok := strings.Cut(*shard, "/")
		si, err1 := strconv.Atoi(i)
		sn, err2 := strconv.Atoi(n)
		if !ok || err1 != nil || err2 != nil || sn < 1 || sn > maxShards || si < 0 || si >= sn {
			return fs.usageError("--shard %q: want i/n with 0 ≤ i < n ≤ %d", *shard, maxShards)
		}
		sh = runner.Shard{Index: si, Of: sn}
	}
	if len(actorSpecs) == 0 {
		actorSpecs = repeated{"reference", "oversharer", "follower"}
	}
	if *maxRetries < 0 || *maxOutput < 0 || *timeout <= 0 || (temp.set && !(temp.v >= 0 && temp.v <= 2)) {
		return fs.usageError("--max-retries and --max-output-tokens must be ≥ 0, --timeout positive, --temperature in [0, 2]")
	}
	params := actors.Params{
		OpenAIBaseURL: os.Getenv("OPENAI_BASE_URL"), OpenAIKey: os.Getenv("OPENAI_API_KEY"), OllamaHost: os.Getenv("OLLAMA_HOST"),
		MaxOutputTokens: *maxOutput, Timeout: *timeout,
		Retry: actors.Retry{MaxRetries: *maxRetries, Base: actors.DefaultRetry.Base, Max: actors.DefaultRetry.Max},
	}
	if temp.set {
		params.Temperature = &temp.v
	}
	seedInt := int(*seed)
	params.Seed = &seedInt
	if *noCache && *cacheOnly {
		return fs.usageError("--no-cache and --cache-only are opposites")
	}
	if !(*rps == 0 || (*rps >= 0.001 && *rps <= 1e6)) || *maxTokensTotal < 0 {
		return fs.usageError("--rps must be 0 (no limit) or in [0.001, 1e6], --max-tokens-total ≥ 0")
	}
	params.Structured, params.CacheOnly = *structured, *cacheOnly
	acts, err := actors.Build(actorSpecs, actors.BuildOptions{Params: params, RPS: *rps, NoCache: *noCache, CacheDir: *cacheDir, DefaultCacheDir: defaultCacheDir})
	var dupErr *actors.DuplicateSpecError
	var cacheErr *actors.CacheDirError
	switch {
	case errors.As(err, &dupErr):
		return fs.usageError("--actor %s is given twice", dupErr.Spec)
	case errors.As(err, &cacheErr):
		return fs.usageError("--actor: %v; give --cache DIR or --no-cache", err)
	case err != nil:
		return fs.usageError("--actor: %v", err)
	}
	var roleMaps []*actors.RoleMap
	for _, a := range acts {
		if m, ok := a.(*actors.RoleMap); ok {
			roleMaps = append(roleMaps, m)
		}
	}
	configs, err := loadConfigs(*configsDir)
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	if len(configNames) > 0 {
		var names []string
		for _, c := range configs {
			names = append(names, c.Name)
		}
		for _, n := range configNames {
			if !slices.Contains(names, n) {
				return fs.usageError("--config: no configuration %q (names: %s)", n, strings.Join(names, ", "))
			}
		}
		var keep []*bench.Config // in the configurations' own order
		for _, c := range configs {
			if slices.Contains(configNames, c.Name) {
				keep = append(keep, c)
			}
		}
		configs = keep
	}
	if err := runner.CheckTokenizer(*tok); err != nil {
		return fs.usageError("--tokenizer: %v", err)
	}
	cases, problems, err := loadCases(*casesDir)
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	if len(problems) > 0 {
		return failf(stderr, "run", "the case set does not load:\n%v\nRun \"patchbench validate\" for every problem.", problems)
	}
	if ds := bench.DomainsOf(cases); *domain != "" && !slices.Contains(ds, *domain) {
		return fs.usageError("--domain: unknown domain %q (the case set's domains: %s)", *domain, strings.Join(ds, ", "))
	}
	var chosen []*bench.Case
	for _, c := range cases {
		if (*caseID == "" || c.ID == *caseID) && (*domain == "" || c.Domain == *domain) {
			chosen = append(chosen, c)
		}
	}
	if len(chosen) == 0 {
		return fs.usageError("no case matches --case %q --domain %q", *caseID, *domain)
	}
	var roles []string
	for _, c := range chosen {
		for _, st := range c.Steps {
			if !slices.Contains(roles, st.Role) {
				roles = append(roles, st.Role)
			}
		}
	}
	for _, m := range roleMaps {
		if missing := m.Missing(roles); len(missing) > 0 {
			return fs.usageError("--actor %s: no actor for the roles %s (add role=spec entries, or a spec alone for every other role)", m.Name(), strings.Join(missing, ", "))
		}
	}
	ids := map[string]string{}
	for _, c := range chosen {
		if prev, ok := ids[c.ID]; ok {
			return failf(stderr, "run", "case id %s is used by %s and %s; run \"patchbench validate\"", c.ID, prev, c.File)
		}
		ids[c.ID] = c.File
	}
	m := Manifest{
		Module: "github.com/patchbench/patchbench", CaseSet: displayDir(*casesDir), CaseDigest: caseDigest(chosen),
		Cases: len(chosen), Rounds: *rounds, Seed: *seed, MaxAttempts: *maxAttempts, PassThreshold: *threshold,
		Tokenizer: *tok, PromptVersion: runner.PromptVersion, Shard: *shard,
		Started: time.Now().UTC().Format(time.RFC3339),
	}
	for _, c := range configs {
		m.Configs = append(m.Configs, c.Name)
	}
	m.ConfigDetails = configs
	for _, c := range chosen {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	for _, a := range acts {
		m.Actors = append(m.Actors, a.Name())
	}
	m.Temperature, m.MaxOutputTokens, m.Structured = params.Temperature, params.MaxOutputTokens, params.Structured
	for _, a := range acts {
		// A role map names its live actors inside its spec.
		if strings.Contains(a.Name(), "openai:") {
			m.OpenAIBaseURL = redactURL(params.OpenAIBaseURL)
		}
		if strings.Contains(a.Name(), "ollama:") {
			m.OllamaHost = redactURL(params.OllamaHost)
		}
	}
	m.Version, m.GitRevision = buildVersion()
	opts := runner.Options{
		Cases: chosen, Configs: configs, Actors: acts, Rounds: *rounds, Concurrency: *concurrency,
		MaxAttempts: *maxAttempts, PassThreshold: *threshold, Tokenizer: *tok, Shard: sh,
		MaxTokensTotal: *maxTokensTotal,
	}
	m.ExpectedRuns = len(opts.Jobs())
	dir := *out
	if dir == "" {
		sum := sha256.Sum256([]byte(m.key()))
		dir = filepath.Join("results", "run-"+hex.EncodeToString(sum[:])[:10])
	}
	old, err := checkManifest(dir, m)
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	if old != nil {
		// A resumed run keeps its first start and its sessions' builds.
		m.Started, m.Revisions = old.Started, old.Revisions
	}
	if rev := strings.TrimSpace(m.Version + " " + m.GitRevision); rev != "" && !slices.Contains(m.Revisions, rev) {
		m.Revisions = append(m.Revisions, rev)
	}
	// Lock the directory first, then read what it holds: no other
	// process can add runs in between.
	sink, err := runner.OpenSink(dir, -1)
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	recs, truncateAt, needNewline, err := runner.ReadRunsForAppend(filepath.Join(dir, runner.RunsFile))
	if err == nil && truncateAt >= 0 {
		err = sink.Truncate(truncateAt)
	}
	if err == nil && needNewline {
		err = sink.Newline()
	}
	if err != nil {
		sink.Close()
		return failf(stderr, "run", "%v", err)
	}
	skip := map[string]bool{}
	for _, r := range recs {
		// A pending run is continued; an error run is redone when asked.
		if r.HasOutcome() || (r.Status == runner.StatusError && !*retryErrors) {
			skip[r.RunID] = true
		}
		opts.TokensSpent += r.TokensSent
	}
	if err := runner.WriteJSON(dir, runner.ManifestFile, m); err != nil {
		sink.Close()
		return failf(stderr, "run", "%v", err)
	}
	if isTerminal(stderr) {
		opts.Progress = func(done, total int) {
			fmt.Fprintf(stderr, "\rpatchbench run: %d/%d runs", done, total)
			if done == total {
				fmt.Fprintln(stderr)
			}
		}
	}
	runErr := runner.Run(ctx, opts, skip, sink)
	sink.Close()
	m.Finished = time.Now().UTC().Format(time.RFC3339)
	if errors.Is(runErr, runner.ErrTokenBudget) {
		m.TokenBudgetSpent, runErr = true, nil
		fmt.Fprintf(stderr, "patchbench run: the token budget (--max-tokens-total %d) is spent; the runs not done are left for a later run\n", *maxTokensTotal)
	}
	m.Interrupted = runErr != nil
	if err := runner.WriteJSON(dir, runner.ManifestFile, m); err != nil {
		return failf(stderr, "run", "%v", err)
	}
	var fatal *runner.FatalError
	if errors.As(runErr, &fatal) {
		return failf(stderr, "run", "stopped: %v (the run is recorded in %s; fix the cause and run the same command with --retry-errors)", fatal, dir)
	}
	if runErr != nil && !errors.Is(runErr, context.Canceled) {
		return failf(stderr, "run", "%v", runErr)
	}
	recs, _, err = runner.ReadRuns(filepath.Join(dir, runner.RunsFile))
	if err != nil {
		return failf(stderr, "run", "%v", err)
	}
	recs = latest(recs)
	summary := runner.Summarize(recs, configs, m.Actors)
	summary.RunsExpected, summary.Complete = m.ExpectedRuns, settled(recs) >= m.ExpectedRuns
	if err := runner.WriteJSON(dir, runner.SummaryFile, summary); err != nil {
		return failf(stderr, "run", "%v", err)
	}
	if *format == "json" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		printMainTable(stdout, summary)
		if at := runner.AttackTable(summary); len(at.Rows) > 0 {
			fmt.Fprintf(stdout, "\n%s\n", at.Title)
			renderTable(stdout, at, false)
		}
	}
	if runErr != nil {
		fmt.Fprintf(stderr, "patchbench run: interrupted; %d runs are in %s; run the same command again to resume\n", len(recs), dir)
		return exitUsage
	}
	errs, first := 0, ""
	for _, r := range recs {
		if r.Status == runner.StatusError {
			errs++
			if first == "" && r.Error != nil {
				first = *r.Error
			}
		}
	}
	if errs > 0 {
		fmt.Fprintf(stderr, "patchbench run: %d of %s ended in an error (--retry-errors redoes them); the first: %s\n", errs, plural(len(recs), "run"), first)
	}
	fmt.Fprintf(stderr, "run directory: %s (%s)\n", dir, plural(len(recs), "run"))
	if pending := len(recs) - settled(recs); pending > 0 {
		for _, a := range acts {
			f, ok := a.(*actors.Files)
			if !ok {
				continue
			}
			mine := 0
			for _, r := range recs {
				if r.Actor == f.Name() && r.Status == runner.StatusPending {
					mine++
				}
			}
			if mine == 0 {
				continue
			}
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
				pluralOf(mine, "run", "runs"), f.Name(), verb, plural(len(n), "request"), filepath.Join(f.Dir(), actors.FilesPending), filepath.Join(f.Dir(), actors.FilesAnswers), f.Dir())
		}
		return exitIncomplete
	}
	return exitOK
}

// settled counts the records that are not pending (passed, failed or
// error).
func settled(recs []*runner.Record) int {
	n := 0
	for _, r := range recs {
		if r.HasOutcome() || r.Status == runner.StatusError {
			n++
		}
	}
	return n
}

// latest keeps the last record of each run id (a retried error run is
// recorded again).
func latest(recs []*runner.Record) []*runner.Record {
	last := map[string]int{}
	for i, r := range recs {
		last[r.RunID] = i
	}
	var out []*runner.Record
	for i, r := range recs {
		if last[r.RunID] == i {
			out = append(out, r)
		}
	}
	return out
}

// checkManifest refuses a run directory that holds a different run, or
// that is not a run directory but holds files. It returns the manifest
// already there, if any.
func checkManifest(dir string, m Manifest) (*Manifest, error) {
	b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
	if errors.Is(err, os.ErrNotExist) {
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return nil, fmt.Errorf("%s is not empty and holds no %s; choose a new or empty --out", dir, runner.ManifestFile)
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var old Manifest
	if err := json.Unmarshal(b, &old); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, runner.ManifestFile), err)
	}
	if old.key() != m.key() {
		return nil, fmt.Errorf("%s holds a run with other settings (%s differ); rerun with its settings to resume, or choose another --out",
			dir, strings.Join(old.differences(m), ", "))
	}
	return &old, nil
}

// caseDigest is a SHA-256 over the cases' ids and file digests: it
// changes when anything in a case file does.
func caseDigest(cases []*bench.Case) string {
	h := sha256.New()
	for _, c := range cases {
		fmt.Fprintf(h, "%s\x00%s\x00", c.ID, c.Digest)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// buildVersion returns the module version and VCS revision the binary was
// built from, when known.
func buildVersion() (string, string) {
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "", ""
	}
	rev := ""
	for _, s := range info.Settings {
		if s.Key == "vcs.revision" {
			rev = s.Value
		}
	}
	return info.Main.Version, rev
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// printMainTable prints the main table of PatchBench design §7.
func printMainTable(w io.Writer, s runner.Summary) { renderTable(w, runner.MainTable(s), false) }
