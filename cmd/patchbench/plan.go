package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

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
			return fs.exit(err)
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
	p, err := readPlan(pos[0])
	if err != nil {
		return failf(stderr, "plan", "%v", err)
	}
	// The flags the plan amounts to must be run's, with values run takes.
	rfs, f := newRunFlags(io.Discard, io.Discard)
	if err := rfs.FlagSet.Parse(planArgs(p, filepath.Dir(pos[0]))); err != nil {
		return failf(stderr, "plan", "%s: %v", pos[0], err)
	}
	var msg strings.Builder
	if _, err := f.check(&msg, os.Getenv); err != nil {
		exitCode(&msg, "run", err)
		return failf(stderr, "plan", "%s: %s", pos[0], strings.TrimSpace(msg.String()))
	}
	fmt.Fprintf(stdout, "# %s (plan_digest %s)\n%s", pos[0], p.Digest(), p.YAML())
	return exitOK
}

// readPlan reads and parses a plan file (runner.ParsePlan).
func readPlan(path string) (*runner.Plan, error) {
	b, err := readInput(path, runner.MaxPlanBytes)
	if err != nil {
		return nil, err
	}
	return runner.ParsePlan(path, b)
}

// planArgs are the run flags a plan amounts to; relative paths in it
// (cases.dir, configs.dir, prompt_template) are taken from dir, the plan
// file's directory.
func planArgs(p *runner.Plan, dir string) []string {
	var a []string
	add := func(name, v string) { a = append(a, "--"+name+"="+v) }
	path := func(name, v string) {
		if v != "" {
			if !filepath.IsAbs(v) {
				v = filepath.Join(dir, v)
			}
			add(name, v)
		}
	}
	list := func(name string, v []string) {
		if len(v) > 0 {
			add(name, strings.Join(v, ","))
		}
	}
	path("cases", p.Cases.Dir)
	list("case", p.Cases.IDs)
	list("domain", p.Cases.Domains)
	path("configs", p.Configs.Dir)
	list("config", p.Configs.Names)
	for _, s := range p.Actors {
		add("actor", s)
	}
	if p.Rounds != 0 {
		add("rounds", strconv.Itoa(p.Rounds))
	}
	if p.Protocol != "" {
		add("protocol", p.Protocol)
	}
	if p.Disclosure != "" {
		add("disclosure", p.Disclosure)
	}
	s := p.Settings
	if s.Temperature != nil {
		add("temperature", strconv.FormatFloat(*s.Temperature, 'g', -1, 64))
	}
	optInt(add, "max-output-tokens", s.MaxOutputTokens)
	if s.Structured != nil {
		add("structured", strconv.FormatBool(*s.Structured))
	}
	optInt(add, "seed", s.Seed)
	if s.Timeout != "" {
		add("timeout", s.Timeout)
	}
	optInt(add, "max-retries", s.MaxRetries)
	if s.RPS != nil {
		add("rps", strconv.FormatFloat(*s.RPS, 'g', -1, 64))
	}
	l := p.Limits
	optInt(add, "max-attempts", l.MaxAttempts)
	optInt(add, "max-turns", l.MaxTurns)
	optInt(add, "max-tool-calls", l.MaxToolCalls)
	optInt(add, "max-step-bytes", l.MaxStepBytes)
	optInt(add, "max-answer-bytes", l.MaxAnswerBytes)
	optInt(add, "max-tokens-total", l.MaxTokensTotal)
	if p.Scoring.PassThreshold != nil {
		add("pass-threshold", strconv.FormatFloat(*p.Scoring.PassThreshold, 'g', -1, 64))
	}
	if p.Scoring.Tokenizer != "" {
		add("tokenizer", p.Scoring.Tokenizer)
	}
	path("prompt-template", p.PromptTemplate)
	return a
}

func optInt[T int | int64](add func(name, v string), name string, v *T) {
	if v != nil {
		add(name, strconv.FormatInt(int64(*v), 10))
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
// plan in the manifest fields of f.
func (f *runFlags) applyPlan(fs *flagSet) error {
	p, err := readPlan(*f.planFile)
	if err != nil {
		return usagef("--plan: %v", err)
	}
	args := planArgs(p, filepath.Dir(*f.planFile))
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	for _, a := range args {
		name, _, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
		if given[name] {
			return usagef("--%s is set by the plan %s; change it there, or leave the plan out", name, *f.planFile)
		}
	}
	if err := fs.FlagSet.Parse(args); err != nil {
		return usagef("--plan %s: %v", *f.planFile, err)
	}
	f.planDigest = p.Digest()
	return nil
}
