package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runspec"
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
		f.cmd = "plan"
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
		p := runner.NewPlan(f.spec)
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
	f.cmd = "plan"
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

// planArg is one run flag a plan sets: the flag, its value and the
// plan's key (runner.Plan.Where: a dotted path, with an item's index for
// a list of actors).
type planArg struct{ flag, value, key string }

// applyPlan reads the --plan file and sets the settings it gives (its
// relative paths taken from the plan file's directory); a flag the
// command line gave that the plan sets too is an error (the plan is the
// record of the experiment: change it there). It records the plan and
// the flags it set (inPlan). A plan's mistake is named by its file, line
// and key.
func (f *runFlags) applyPlan(fs *flagSet) error {
	p, err := readPlan(*f.planFile)
	if err != nil {
		var fe *bench.FileError
		if errors.As(err, &fe) {
			return usagef("%v", err) // it names the file
		}
		return usagef("--plan: %v", err)
	}
	given := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { given[fl.Name] = true })
	var args []planArg
	for _, fd := range runspec.Fields() {
		if !p.Has(fd.Key) {
			continue
		}
		if given[fd.Flag] {
			return usagef("--%s is set by the plan %s; change it there, or leave the plan out", fd.Flag, *f.planFile)
		}
		v := fd.Value(&p.Spec) // the plan's own, which its digest is over
		fd.Value(&f.spec).Set(v)
		if items, ok := v.Interface().([]string); ok && strings.Contains(fd.Tag.Get("list"), "comma") {
			fd.Set(&f.spec, strings.Join(items, ",")) // as the flag splits it: "a, b" is two
		}
		if fd.Tag.Get("path") == "plan" && !filepath.IsAbs(v.String()) {
			v = fd.Value(&f.spec)
			v.SetString(filepath.Join(filepath.Dir(*f.planFile), v.String()))
		}
		if fd.Tag.Get("path") == "file:" {
			// A list's items "file:PATH": PATH from the plan's directory.
			v = fd.Value(&f.spec)
			items := strings.Split(v.String(), ",")
			for i, item := range items {
				if path, ok := strings.CutPrefix(item, "file:"); ok && path != "" && !filepath.IsAbs(path) {
					items[i] = "file:" + filepath.Join(filepath.Dir(*f.planFile), path)
				}
			}
			v.SetString(strings.Join(items, ","))
		}
		switch x := v.Interface().(type) {
		case []string:
			if fd.Tag.Get("list") == "repeat" { // one flag per item: the actors
				for i, item := range x {
					args = append(args, planArg{flag: fd.Flag, value: item, key: fmt.Sprintf("%s.%d", fd.Key, i)})
				}
				continue
			}
			args = append(args, planArg{flag: fd.Flag, value: strings.Join(x, ","), key: fd.Key})
		case *float64:
			args = append(args, planArg{flag: fd.Flag, value: fmt.Sprint(*x), key: fd.Key})
		default:
			args = append(args, planArg{flag: fd.Flag, value: fmt.Sprint(x), key: fd.Key})
		}
	}
	f.planSrc, f.planned, f.given = p, args, given
	return nil
}

// inPlanFile reports whether the --plan file set the run flag name.
func (f *runFlags) inPlanFile(name string) bool {
	return slices.ContainsFunc(f.planned, func(a planArg) bool { return a.flag == name })
}

// inPlan turns a usage error about the value of a flag the plan set
// (flagf, valueErr) into one naming the plan file, the key's line and the
// key: "plan.yaml:3: rounds: must be at least 1, not 0"; another setting
// the refusal names is named by its key too unless the command line gave
// it. Other errors are returned as they are.
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
	why := u.why
	if u.planWhy != "" && !f.given[u.with] {
		why = u.planWhy // the other setting is the plan's, or no one's
	}
	return usagef("%s:%d: %s: %s", file, line, key, why)
}
