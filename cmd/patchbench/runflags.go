package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runspec"
)

// runFlags are the flags of run: the run's settings (spec, bound by
// runspec.Bind), and the flags that are not about the runs.
type runFlags struct {
	spec                            runspec.Spec
	out, shard, format, cacheDir    *string
	concurrency                     *int
	retryErrors, noCache, cacheOnly *bool
	progressEvery                   *time.Duration
	// cacheFailures counts the answers the response cache could not keep.
	cacheFailures *cacheFailures
	// planFile is --plan; planSrc the plan once applied (applyPlan) and
	// planned the flags it set.
	planFile *string
	planSrc  *runner.Plan
	planned  []planArg
	// given are the flags the command line gave beside the plan.
	given map[string]bool
	// cmd is the command the flags are of (run, plan, mcp), which the
	// notes of check and plan on stderr name.
	cmd string
	// attackTemplates are the templates of the attacks read from files,
	// by name, for the manifest (plan sets them).
	attackTemplates map[string]string
}

// newRunFlags defines run's flags: the settings' (runspec.Bind, with
// their defaults) and run's own.
func newRunFlags(stdout, stderr io.Writer) (*flagSet, *runFlags) {
	fs := newFlags("run", "patchbench run [flags]", runExamples, stdout, stderr)
	f := &runFlags{cacheFailures: &cacheFailures{}, spec: runspec.Default(), cmd: "run"}
	runspec.Bind(fs.FlagSet, &f.spec)
	actor := fs.Lookup("actor")
	actor.Usage += ": " + strings.Join(actors.Known(), ", ") + "; a role map role=spec,role=spec gives each role of multi-agent cases its own; SPEC#name=NAME shows and records the actor as NAME"
	f.planFile = fs.String("plan", "", "read the runs' settings (cases, configurations, actors, rounds, protocol, limits) from this plan `file` (YAML; patchbench plan --print writes one; docs/plans/ has examples); a flag it sets may not be given too")
	f.concurrency = fs.Int("concurrency", 4, "`n` runs at a time")
	f.out = fs.String("out", "", "the run `dir` (default results/run-<hash of the settings>, the same for the same settings, so a rerun resumes)")
	f.shard = fs.String("shard", "", "run only shard `i/n` (0 ≤ i < n) of the runs, chosen by a hash of each run's key; env (or env/n) takes i (and n) from a Kubernetes Indexed Job or a CI matrix: JOB_COMPLETION_INDEX or PATCHBENCH_SHARD_INDEX, and PATCHBENCH_SHARD_COUNT")
	f.retryErrors = fs.Bool("retry-errors", false, "redo the runs recorded with status error")
	f.format = fs.String("format", "text", "table `format`: text or json (the summary)")
	f.cacheDir = fs.String("cache", "", "the response cache `dir` of live actors (default: patchbench/responses in the user's cache directory)")
	f.noCache = fs.Bool("no-cache", false, "send every live request, and keep no answer")
	f.cacheOnly = fs.Bool("cache-only", false, "answer live requests from the cache only; a miss is an error run (replays a recorded run offline)")
	f.progressEvery = fs.Duration("progress", 30*time.Second, "the `interval` between progress lines on standard error when it is not a terminal (a terminal shows a bar); 0: no progress")
	return fs, f
}

// check checks the flags' values: run's own, then the settings
// (runspec.Spec.Check, which fills in the default actors), and parses
// the shard (--shard env reads getenv, and says where it read it). A
// refused value is a usage error naming its flag (flagf), which a plan
// file's key replaces when the plan set it (inPlan).
func (f *runFlags) check(stderr io.Writer, getenv func(string) string) (runner.Shard, error) {
	var sh runner.Shard
	switch {
	case *f.format != "text" && *f.format != "json":
		return sh, flagf("format", "must be text or json, not %q", *f.format)
	case *f.concurrency < 1:
		return sh, flagf("concurrency", "must be at least 1, not %d", *f.concurrency)
	case *f.noCache && *f.cacheOnly:
		return sh, usagef("--no-cache and --cache-only are opposites")
	case *f.progressEvery < 0:
		return sh, usagef("--progress must be ≥ 0")
	}
	if err := f.spec.Check(); err != nil {
		var se *runspec.Error
		if errors.As(err, &se) {
			u := &usageErr{msg: se.Error(), flag: se.Flag, why: se.Why, with: se.With, planWhy: se.KeyWhy}
			return sh, u
		}
		return sh, err
	}
	sh, from, err := resolveShard(*f.shard, getenv)
	if err != nil {
		return sh, usagef("%v", err)
	}
	if from != "" {
		fmt.Fprintf(stderr, "patchbench %s: %s\n", f.cmd, from)
	}
	return sh, nil
}

// params are the live actors' parameters: the flags, and the server
// addresses and keys from the environment (the variables of every
// registered kind of actor, actors.EnvVars).
func (f *runFlags) params() actors.Params {
	p := actors.Params{
		MaxOutputTokens: f.spec.MaxOutputTokens, Timeout: f.spec.Timeout, Temperature: f.spec.Temperature,
		Retry:      actors.Retry{MaxRetries: f.spec.MaxRetries, Base: actors.DefaultRetry.Base, Max: actors.DefaultRetry.Max},
		Structured: f.spec.Structured, CacheOnly: *f.cacheOnly, MaxAnswerBytes: f.spec.MaxAnswerBytes,
	}
	seed := int(f.spec.Seed)
	p.Seed = &seed
	for _, v := range actors.EnvVars() {
		v.Set(&p, os.Getenv(v.Name))
	}
	return p
}
