package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
)

const planExamples = `  # The plan the default run amounts to (every key, with its value):
  patchbench plan --print

  # The plan of a command line, to keep beside the results:
  patchbench plan --print --actor openai:gpt-5-mini --rounds 3 --max-tokens-total 8000000 > gpt.yaml

  # Check a plan file, and print it as read with its digest:
  patchbench plan docs/plans/paper-gpt-5-mini.yaml

  # Run it (the same command again resumes):
  patchbench run --plan gpt.yaml --out results/gpt-5-mini
`

// runPlanCmd prints the plan a run command line amounts to (--print), or
// checks a plan file and prints it as read, with its digest.
func runPlanCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 && (args[0] == "--print" || args[0] == "-print") {
		fs, f := newRunFlags(stdout, stderr)
		fs.usageLine = "patchbench plan --print [run flags]"
		fs.Init("plan", flag.ContinueOnError) // a refusal names the command run: plan
		if err := fs.parse(args[1:]); err != nil {
			return fs.exit(err)
		}
		if len(fs.Args()) > 0 {
			return fs.usageError("unexpected arguments %q", fs.Args())
		}
		if *f.planFile != "" {
			if err := f.applyPlan(fs); err != nil {
				return fs.exit(err)
			}
		}
		if _, err := f.check(stderr, os.Getenv); err != nil {
			return fs.exit(f.inPlan(err))
		}
		p := f.toPlan()
		fmt.Fprintf(stdout, "# patchbench plan (plan_digest %s)\n%s", p.Digest(), p.YAML())
		return exitOK
	}
	fs := newFlags("plan", "patchbench plan --print [run flags] | patchbench plan FILE", planExamples, stdout, stderr)
	pos, err := fs.parseWithArgs(args, 1)
	if err != nil {
		return fs.exit(err)
	}
	if len(pos) != 1 {
		return fs.usageError("give a plan file, or --print and run's flags")
	}
	// The same checks as run --plan, but that a live actor needs no key
	// and no directory is made: the plan, as run's flags, and what they
	// load (cases, configurations, the prompt template, the actors).
	rfs, f := newRunFlags(io.Discard, io.Discard)
	*f.planFile = pos[0]
	if _, err := f.prepare(rfs, stderr, true); err != nil {
		var msg strings.Builder
		code := exitCode(&msg, "plan", err)
		// The plan's own mistakes are shown without a pointer to -h.
		fmt.Fprintln(stderr, strings.TrimSuffix(strings.TrimSpace(msg.String()), "\nRun \"patchbench plan -h\" for usage."))
		return code
	}
	fmt.Fprintf(stdout, "# %s (plan_digest %s)\n%s", pos[0], f.planSrc.Digest(), f.planSrc.YAML())
	return exitOK
}

// prepare is what run does before it runs, shared by patchbench plan
// FILE so that a plan passes one only if it passes the other: the plan
// of --plan applied to the flags (applyPlan), the flags checked (check),
// and the actors, configurations, cases and prompt made and loaded
// (plan; only to check them when checkOnly). A refusal of a value the
// plan set names the plan file, the line and the key (inPlan).
func (f *runFlags) prepare(fs *flagSet, stderr io.Writer, checkOnly bool) (*runPlan, error) {
	if *f.planFile != "" {
		if err := f.applyPlan(fs); err != nil {
			return nil, err
		}
	}
	sh, err := f.check(stderr, os.Getenv)
	if err != nil {
		return nil, f.inPlan(err)
	}
	p, err := f.plan(stderr, sh, checkOnly)
	return p, f.inPlan(err)
}

// readPlan reads and parses a plan file (runner.ParsePlan).
func readPlan(path string) (*runner.Plan, error) {
	b, err := readInput(path, runner.MaxPlanBytes)
	if err != nil {
		return nil, err
	}
	return runner.ParsePlan(path, b)
}

// planArg is one run flag a plan sets: --flag=value, from the plan's key
// (runner.Plan.Where: a dotted path, with an item's index for a list of
// actors).
type planArg struct{ flag, value, key string }

// arg is the flag's command line argument.
func (a planArg) arg() string { return "--" + a.flag + "=" + a.value }

// planArgs are the run flags a plan amounts to, each with its key;
// relative paths in it (cases.dir, configs.dir, prompt_template) are
// taken from dir, the plan file's directory.
func planArgs(p *runner.Plan, dir string) []planArg {
	var a []planArg
	add := func(name, key, v string) { a = append(a, planArg{flag: name, value: v, key: key}) }
	path := func(name, key, v string) {
		if v != "" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			add(name, key, v)
		}
	}
	list := func(name, key string, v []string) {
		if len(v) > 0 {
			add(name, key, strings.Join(v, ","))
		}
	}
	path("cases", "cases.dir", p.Cases.Dir)
	list("case", "cases.ids", p.Cases.IDs)
	list("domain", "cases.domains", p.Cases.Domains)
	path("configs", "configs.dir", p.Configs.Dir)
	list("config", "configs.names", p.Configs.Names)
	for i, s := range p.Actors {
		add("actor", fmt.Sprintf("actors.%d", i), s)
	}
	if p.Rounds != 0 {
		add("rounds", "rounds", strconv.Itoa(p.Rounds))
	}
	if p.Protocol != "" {
		add("protocol", "protocol", p.Protocol)
	}
	if p.Disclosure != "" {
		add("disclosure", "disclosure", p.Disclosure)
	}
	s := p.Settings
	if s.Temperature != nil {
		add("temperature", "settings.temperature", strconv.FormatFloat(*s.Temperature, 'g', -1, 64))
	}
	optInt(add, "max-output-tokens", "settings.max_output_tokens", s.MaxOutputTokens)
	if s.Structured != nil {
		add("structured", "settings.structured", strconv.FormatBool(*s.Structured))
	}
	optInt(add, "seed", "settings.seed", s.Seed)
	if s.Timeout != "" {
		add("timeout", "settings.timeout", s.Timeout)
	}
	optInt(add, "max-retries", "settings.max_retries", s.MaxRetries)
	if s.RPS != nil {
		add("rps", "settings.rps", strconv.FormatFloat(*s.RPS, 'g', -1, 64))
	}
	l := p.Limits
	optInt(add, "max-attempts", "limits.max_attempts", l.MaxAttempts)
	optInt(add, "max-turns", "limits.max_turns", l.MaxTurns)
	optInt(add, "max-tool-calls", "limits.max_tool_calls", l.MaxToolCalls)
	optInt(add, "max-step-bytes", "limits.max_step_bytes", l.MaxStepBytes)
	optInt(add, "max-answer-bytes", "limits.max_answer_bytes", l.MaxAnswerBytes)
	optInt(add, "max-tokens-total", "limits.max_tokens_total", l.MaxTokensTotal)
	if p.Scoring.PassThreshold != nil {
		add("pass-threshold", "scoring.pass_threshold", strconv.FormatFloat(*p.Scoring.PassThreshold, 'g', -1, 64))
	}
	if p.Scoring.Tokenizer != "" {
		add("tokenizer", "scoring.tokenizer", p.Scoring.Tokenizer)
	}
	path("prompt-template", "prompt_template", p.PromptTemplate)
	return a
}

func optInt[T int | int64](add func(name, key, v string), name, key string, v *T) {
	if v != nil {
		add(name, key, strconv.FormatInt(int64(*v), 10))
	}
}

// toPlan is the plan run's flags amount to: every key a plan has, with
// the flag's value (its default when not given), the case and
// configuration lists only when given (none is every one).
func (f *runFlags) toPlan() *runner.Plan {
	p := &runner.Plan{Version: runner.PlanVersion, Rounds: *f.rounds, Protocol: *f.protocol, Disclosure: *f.disclosure,
		Actors: append([]string(nil), f.actorSpecs...), PromptTemplate: *f.promptTemplate}
	p.Cases.Dir, p.Configs.Dir, p.Configs.Names = *f.casesDir, *f.configsDir, append([]string(nil), f.configNames...)
	p.Cases.IDs, p.Cases.Domains = splitList(*f.caseID), splitList(*f.domain)
	if f.temp.set {
		t := f.temp.v
		p.Settings.Temperature = &t
	}
	p.Settings.MaxOutputTokens, p.Settings.Structured, p.Settings.Seed = f.maxOutput, f.structured, f.seed
	p.Settings.Timeout, p.Settings.MaxRetries, p.Settings.RPS = f.timeout.String(), f.maxRetries, f.rps
	p.Limits = runner.PlanLimits{MaxAttempts: f.maxAttempts, MaxTurns: f.maxTurns, MaxToolCalls: f.maxToolCalls, MaxStepBytes: f.maxStepBytes,
		MaxAnswerBytes: f.maxAnswer, MaxTokensTotal: f.maxTokensTotal}
	p.Scoring = runner.PlanScoring{PassThreshold: f.threshold, Tokenizer: *f.tok}
	return p
}

// splitList splits a comma list of --case or --domain ("" is none).
func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// applyPlan reads the --plan file and sets the run flags it amounts to;
// a flag the command line gave that the plan sets too is an error (the
// plan is the record of the experiment: change it there). It records the
// plan and the flags it set (inPlan), and the plan's digest for the
// manifest. A plan's mistake is named by its file, line and key.
func (f *runFlags) applyPlan(fs *flagSet) error {
	p, err := readPlan(*f.planFile)
	if err != nil {
		var fe *bench.FileError
		if errors.As(err, &fe) {
			return usagef("%v", err) // it names the file
		}
		return usagef("--plan: %v", err)
	}
	args := planArgs(p, filepath.Dir(*f.planFile))
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, a := range args {
		if given[a.flag] {
			return usagef("--%s is set by the plan %s; change it there, or leave the plan out", a.flag, *f.planFile)
		}
	}
	f.planSrc, f.planned = p, args
	for _, a := range args {
		// One at a time, so that a value the flag refuses is named by
		// its key.
		if err := fs.FlagSet.Parse([]string{a.arg()}); err != nil {
			return f.inPlan(valueErr(a.flag, a.value, fmt.Sprintf("--plan %s: %v", *f.planFile, err), err.Error()))
		}
	}
	f.planDigest = p.Digest()
	return nil
}

// inPlan turns a usage error about the value of a flag the plan set
// (flagf, valueErr) into one naming the plan file, the key's line and the
// key: "plan.yaml:3: rounds: must be at least 1, not 0". Other errors are
// returned as they are.
func (f *runFlags) inPlan(err error) error {
	var u *usageErr
	if f.planSrc == nil || !errors.As(err, &u) || u.flag == "" {
		return err
	}
	var from *planArg
	for i, a := range f.planned {
		if a.flag == u.flag && (from == nil || u.value == "" || a.value == u.value) {
			from = &f.planned[i] // the last of a repeated flag's, or the one refused
		}
	}
	if from == nil {
		return err // the command line set it
	}
	key := from.key
	file, line := f.planSrc.Where(key)
	if k, _, ok := strings.Cut(key, "."); ok && k == "actors" {
		key = k // actors.N: the line is the item's
	}
	return usagef("%s:%d: %s: %s", file, line, key, u.why)
}
