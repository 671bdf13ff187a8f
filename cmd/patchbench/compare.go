package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const compareExamples = `  # The regression gate: exit 1 when a figure of a configuration and actor
  # moved the bad way (docs/regression.md):
  patchbench compare results/base results/new

  # A verifier whose configuration was changed on purpose (another gate set):
  patchbench compare results/base results/new --allow-config-change

  # Only the runs both directories hold (B ran one round, or PatchOptic only):
  patchbench compare results/before results/after-patchoptic --shared-only

  # A stricter gate for a live model: changes of 5 points at a family-wise 1 %:
  patchbench compare results/gpt results/gpt-new --min-delta 0.05 --alpha 0.01

  # Several directories on a side (a comma list), read as one as report reads them:
  patchbench compare results/gpt,results/mistral results/gpt-new,results/mistral-new

  # The figures for pandas, or as JSON:
  patchbench compare results/before results/after --format csv
  patchbench compare results/before results/after --format json

  # Two actors of one run directory, paired run for run on (case,
  # configuration, round, scale): exact McNemar, Holm-adjusted, B - A:
  patchbench compare --actors reference,oversharer results/run-1a2b3c4d5e

  # Two actors run into two directories (one each), as a gate: exit 1 when
  # the second is worse than the first:
  patchbench compare --actors openai:sloppy,openai:empty results/sloppy results/empty --gate
`

// compareFormats are compare's formats.
var compareFormats = []string{"text", "markdown", "csv", "latex", "json"}

// allowFlags are compare's flags that allow a difference between the
// sides' settings, by the rundir.Difference kind they allow.
var allowFlags = map[string]string{
	rundir.ChangeConfig:    "allow-config-change",
	rundir.ChangeCases:     "allow-case-change",
	rundir.ChangePrompt:    "allow-prompt-change",
	rundir.ChangeThreshold: "allow-threshold-change",
}

// runCompare is the regression gate: it pairs the runs of BASE (A) and
// NEW (B) by their key (case, configuration, actor, round) and judges
// every figure of every configuration and actor (report.Comparer). Exit 1
// when a figure regressed or B lacks runs of A (unless --shared-only), 2
// when the sides differ in what they measure (unless allowed) or share no
// run. With --actors it compares two actors instead (compareActors).
func runCompare(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "patchbench compare BASE NEW [--alpha P] [--min-delta D] [--exact ACTORS] [--shared-only] [--common] [--allow-config-change] [--allow-case-change] [--allow-prompt-change] [--allow-threshold-change] [--format text|markdown|csv|latex|json]\n  patchbench compare --actors A,B DIR... [--gate] [--common] [--alpha P] [--min-delta D] [--format text|markdown|csv|latex|json]", compareExamples, stdout, stderr)
	format := fs.choice("format", "text", "output `format`: text, markdown, csv (the figures), latex or json", compareFormats...)
	common := fs.Bool("common", false, commonUsage+" (both sides over the cases every directory of either holds)")
	sharedOnly := fs.Bool("shared-only", false, "compare only the runs both sides hold: runs of A missing from B do not fail the gate")
	alpha := fs.Float64("alpha", report.DefaultAlpha, "the family-wise error `rate` of the tests of sampled actors: a figure regresses only with a Holm-adjusted exact p at most this (with --actors: over the tests of the table that can reach it)")
	minDelta := fs.Float64("min-delta", report.DefaultMinDelta, "the smallest `change` for the worse (in rate or mean score, B − A over the pairs) that is a regression (with --actors: that makes B worse)")
	exact := fs.String("exact", strings.Join(report.DefaultExact, ","), "the `actors` (comma list; \"\" for none) whose answers do not sample: any change of theirs of at least --min-delta is a regression, whatever its p")
	actors := fs.String("actors", "", "compare two `actors` A,B of the run directories given (one holding both, or one directory per actor) rather than two directories: runs pair on every part of the run id but the actor (case, configuration, round, scale)")
	gate := fs.Bool("gate", false, "with --actors, exit 1 when B is worse than A on a rate by at least --min-delta with a Holm-adjusted p at most --alpha (without it, --actors compares and exits 0)")
	allowed := map[string]*bool{}
	for _, kind := range []string{rundir.ChangeConfig, rundir.ChangeCases, rundir.ChangePrompt, rundir.ChangeThreshold} {
		what := map[string]string{rundir.ChangeConfig: "definition of a configuration both ran (view or gates)",
			rundir.ChangeCases: "case set (digest or ids; the cases both hold are paired)", rundir.ChangePrompt: "prompt template",
			rundir.ChangeThreshold: "pass threshold"}[kind]
		allowed[kind] = fs.Bool(allowFlags[kind], false, "compare sides whose "+what+" differs: the change is the point")
	}
	pos, err := fs.parseWithArgs(args, 1<<20)
	if err != nil {
		return fs.exit(err)
	}
	actorsSet := false
	fs.Visit(func(f *flag.Flag) { actorsSet = actorsSet || f.Name == "actors" })
	if actorsSet && strings.TrimSpace(*actors) == "" {
		return fs.usageError("--actors is empty: give two actors, A,B (the base first)")
	}
	if *actors != "" || *gate {
		return compareActors(fs, pos, *actors, *gate, *common, *alpha, *minDelta, *format, stdout, stderr)
	}
	switch {
	case len(pos) != 2:
		return fs.usageError("give two run directories, BASE and NEW (each side may be a comma list of directories)")
	case len(sideDirs(pos[0])) == 0:
		return fs.usageError("BASE %q names no directory: give a run directory or a comma list of them", pos[0])
	case len(sideDirs(pos[1])) == 0:
		return fs.usageError("NEW %q names no directory: give a run directory or a comma list of them", pos[1])
	case !(*alpha > 0 && *alpha <= 1):
		return fs.usageError("--alpha must be in (0, 1], not %v", *alpha)
	case !(*minDelta >= 0 && *minDelta <= 1):
		return fs.usageError("--min-delta must be in [0, 1], not %v", *minDelta)
	}
	var exactActors []string
	for _, a := range strings.Split(*exact, ",") {
		if a = strings.TrimSpace(a); a != "" {
			exactActors = append(exactActors, a)
		}
	}
	var a, b *rundir.Set
	if *common {
		// Both sides over the cases every directory of either holds, so
		// that they hold the same cases.
		sets, lost, err := rundir.ReadSetsCommon([][]string{sideDirs(pos[0]), sideDirs(pos[1])})
		if err != nil {
			return failf(stderr, "compare", "%v", err)
		}
		sayLeftOut(stderr, "compare", lost)
		a, b = sets[0], sets[1]
	} else {
		var err error
		if a, err = readSet(sideDirs(pos[0]), false, "compare", stderr); err != nil {
			return failf(stderr, "compare", "%v", err)
		}
		if b, err = readSet(sideDirs(pos[1]), false, "compare", stderr); err != nil {
			return failf(stderr, "compare", "%v", err)
		}
	}
	var refused, allowedText []string
	for _, d := range rundir.SideDifferences(a.Combined, b.Combined) {
		if *allowed[d.Kind] {
			allowedText = append(allowedText, d.Text+" (--"+allowFlags[d.Kind]+")")
		} else {
			refused = append(refused, d.Text+" (--"+allowFlags[d.Kind]+" if the change is the point)")
		}
	}
	if len(refused) > 0 {
		return failf(stderr, "compare", "%s and %s do not measure the same thing:\n  %s", pos[0], pos[1], strings.Join(refused, "\n  "))
	}
	// The directories of a side that are rounds or shards of one run are
	// one actor's runs, paired repeat by repeat (Combined.OneName,
	// Repeat); an actor renamed "actor@dir" for a directory of other
	// settings is still exact when the actor is.
	configs, actorNames := report.CompareNames(a.Configs, b.Configs, a.OneActors, b.OneActors)
	c := report.NewComparer(configs, actorNames)
	for side, set := range []*rundir.Set{a, b} {
		if err := set.EachSideHead(func(_, repeat int, r *rundir.Record) error { c.AddRepeat(side, repeat, r); return nil }); err != nil {
			return failf(stderr, "compare", "%v", err)
		}
	}
	isExact := func(name string) bool {
		return slices.Contains(exactActors, name) || slices.Contains(exactActors, a.ActorOf(name)) || slices.Contains(exactActors, b.ActorOf(name))
	}
	cmp := c.Compare(report.GateOptions{Alpha: *alpha, MinDelta: *minDelta, SharedOnly: *sharedOnly, Exact: isExact})
	cmp.Allowed = append(cmp.Allowed, allowedText...)
	if cmp.Paired == 0 {
		return failf(stderr, "compare", "%s and %s share no run: nothing to compare", pos[0], pos[1])
	}
	if err := writeComparison(stdout, cmp, *format); err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	if cmp.Failed() {
		return exitNegative
	}
	return exitOK
}

// sideDirs are the directories of one side: the argument when it names a
// directory, else its comma-separated parts.
func sideDirs(arg string) []string {
	if fi, err := os.Stat(arg); err == nil && fi.IsDir() {
		return []string{arg}
	}
	var out []string
	for _, p := range strings.Split(arg, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// writeTitledTable writes t under its title: a Markdown heading with
// md, a line of text without.
func writeTitledTable(w io.Writer, t report.Table, md bool) {
	if md {
		fmt.Fprintf(w, "### %s\n\n", t.Title)
	} else {
		fmt.Fprintln(w, t.Title)
	}
	report.RenderTable(w, t, md)
}

// writeComparisonData writes a comparison in the formats made for
// programs and papers: JSON the comparison v as it is, CSV and LaTeX its
// table t. done is false for text and Markdown, which the caller writes.
func writeComparisonData(w io.Writer, v any, t report.Table, format string) (done bool, err error) {
	switch format {
	case "json":
		b, err := json.MarshalIndent(v, "", "  ")
		if err != nil {
			return true, err
		}
		_, err = fmt.Fprintf(w, "%s\n", b)
		return true, err
	case "csv":
		return true, report.WriteCSV(w, t)
	case "latex":
		report.RenderLaTeX(w, t)
		return true, nil
	}
	return false, nil
}

// writeComparison writes a comparison: JSON as it is; CSV and LaTeX the
// figures' table; text and Markdown the changes allowed, the regressions
// with the runs that moved, the runs B lacks, the table and the verdict.
func writeComparison(w io.Writer, cmp report.Comparison, format string) error {
	t := report.DeltaTable(cmp)
	if done, err := writeComparisonData(w, cmp, t, format); done {
		return err
	}
	md := format == "markdown"
	item := func(s string) {
		if md {
			fmt.Fprintf(w, "- %s\n", s)
		} else {
			fmt.Fprintf(w, "%s\n", s)
		}
	}
	for _, s := range cmp.Allowed {
		item("allowed: " + s)
	}
	for _, d := range cmp.Regressions {
		item("REGRESSION: " + report.Finding(d))
		if d.Worse > 0 {
			// Under its regression: indented text, a nested Markdown item.
			fmt.Fprintf(w, "  %sworse in B: %s\n", map[bool]string{true: "- "}[md], report.RunList(d.WorseRuns, d.Worse, 5))
		}
	}
	if cmp.OnlyA > 0 {
		s := fmt.Sprintf("%s of A missing from B: %s", report.Plural(cmp.OnlyA, "run"), report.RunList(cmp.MissingB, cmp.OnlyA, 5))
		if cmp.SharedOnly {
			s += " (left out: --shared-only)"
		} else {
			s = "INCOMPLETE: " + s + " (rerun B to completion, or --shared-only to compare the runs both hold)"
		}
		item(s)
	}
	if len(cmp.Allowed)+len(cmp.Regressions) > 0 || cmp.OnlyA > 0 {
		fmt.Fprintln(w)
	}
	writeTitledTable(w, t, md)
	exact := "none"
	if len(cmp.Exact) > 0 {
		exact = strings.Join(cmp.Exact, ", ")
	}
	verdict := "no regression: exit 0"
	if cmp.Failed() {
		verdict = fmt.Sprintf("%s: exit 1", report.PluralOf(len(cmp.Regressions), "regression", "regressions"))
		if !cmp.SharedOnly && cmp.OnlyA > 0 {
			verdict = fmt.Sprintf("%s, %s missing from B: exit 1", report.PluralOf(len(cmp.Regressions), "regression", "regressions"), report.Plural(cmp.OnlyA, "run"))
		}
	}
	_, err := fmt.Fprintf(w, "\n%d paired runs (%d only in A, %d only in B); --min-delta %g, --alpha %g (Holm over %s), exact actors: %s; %s\n",
		cmp.Paired, cmp.OnlyA, cmp.OnlyB, cmp.MinDelta, cmp.Alpha, report.Plural(cmp.Tested, "test"), exact, verdict)
	return err
}

// compareActors is compare --actors A,B DIR...: the run directories
// given (each argument a directory or a comma list), read as one as
// report reads them, and the runs of actor A paired with those of actor
// B on every part of the run id but the actor (report.ActorComparer).
// Exit 0 (a comparison), or with --gate 1 when B is worse than A on a
// rate; 2 for a usage error, an actor the directories do not hold, or no
// pair.
func compareActors(fs *flagSet, pos []string, actors string, gate, common bool, alpha, minDelta float64, format string, stdout, stderr io.Writer) int {
	var notHere []string
	fs.Visit(func(f *flag.Flag) {
		if f.Name == "exact" || f.Name == "shared-only" || strings.HasPrefix(f.Name, "allow-") {
			notHere = append(notHere, "--"+f.Name)
		}
	})
	// empty is the index of an argument that names no directory ("" or
	// ","), or -1.
	empty := slices.IndexFunc(pos, func(p string) bool { return len(sideDirs(p)) == 0 })
	names := strings.Split(actors, ",")
	for i := range names {
		names[i] = strings.TrimSpace(names[i])
	}
	switch {
	case actors == "":
		return fs.usageError("--gate goes with --actors A,B (the gate of two directories is on by default)")
	case len(notHere) > 0:
		verb := "goes"
		if len(notHere) > 1 {
			verb = "go"
		}
		return fs.usageError("%s %s with a comparison of two directories, not --actors (the directories of --actors are read as one: their settings must agree)", strings.Join(notHere, ", "), verb)
	case len(names) != 2 || names[0] == "" || names[1] == "":
		return fs.usageError("--actors takes two actors, A,B (the base first), not %q", actors)
	case names[0] == names[1]:
		return fs.usageError("--actors names %s twice: give two actors", names[0])
	case len(pos) == 0:
		return fs.usageError("give the run directory holding both actors, or one directory per actor")
	case empty >= 0:
		return fs.usageError("the run directory argument %q names no directory: give a run directory or a comma list of them", pos[empty])
	case !(alpha > 0 && alpha <= 1):
		return fs.usageError("--alpha must be in (0, 1], not %v", alpha)
	case !(minDelta >= 0 && minDelta <= 1):
		return fs.usageError("--min-delta must be in [0, 1], not %v", minDelta)
	}
	var dirs []string
	for _, p := range pos {
		dirs = append(dirs, sideDirs(p)...)
	}
	set, err := readSet(dirs, common, "compare", stderr)
	if err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	for _, n := range names {
		if !slices.Contains(set.Actors, n) {
			verb := "hold"
			if len(dirs) == 1 {
				verb = "holds"
			}
			return failf(stderr, "compare", "%s %s no run of actor %q (actors: %s)", strings.Join(dirs, ", "), verb, n, strings.Join(set.Actors, ", "))
		}
	}
	c := report.NewActorComparer(set.Configs, names[0], names[1])
	if err := set.EachHead(func(_ int, r *rundir.Record) error { c.Add(r); return nil }); err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	cmp := c.Compare(alpha, minDelta, gate)
	if cmp.Paired == 0 {
		return failf(stderr, "compare", "actors %s and %s share no (case, configuration, round, scale) in %s: nothing to compare", names[0], names[1], strings.Join(dirs, ", "))
	}
	if err := writeActorComparison(stdout, cmp, format); err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	if cmp.Failed() {
		return exitNegative
	}
	return exitOK
}

// writeActorComparison writes an actor comparison: JSON as it is; CSV
// and LaTeX the table; text and Markdown the rates where B is worse, the
// table and a last line with the pairs and the verdict.
func writeActorComparison(w io.Writer, cmp report.ActorComparison, format string) error {
	t := report.ActorDeltaTable(cmp)
	if done, err := writeComparisonData(w, cmp, t, format); done {
		return err
	}
	md := format == "markdown"
	for _, d := range cmp.Worse {
		if !cmp.Gate {
			break // a comparison: the table's verdicts say it
		}
		if md {
			fmt.Fprintf(w, "- B WORSE: %s\n  - worse in B (A's run ids): %s\n", report.ActorFinding(d), report.RunList(d.WorseRuns, d.WorsePairs(), 5))
		} else {
			fmt.Fprintf(w, "B WORSE: %s\n  worse in B (A's run ids): %s\n", report.ActorFinding(d), report.RunList(d.WorseRuns, d.WorsePairs(), 5))
		}
	}
	if cmp.Gate && len(cmp.Worse) > 0 {
		fmt.Fprintln(w)
	}
	writeTitledTable(w, t, md)
	verdict := "a comparison: exit 0 (--gate to fail when B is worse)"
	switch {
	case cmp.Failed():
		verdict = fmt.Sprintf("B worse on %s: exit 1", report.Plural(len(cmp.Worse), "rate"))
	case cmp.Gate:
		verdict = "B not worse: exit 0"
	}
	if note := cmp.RepeatNote(); note != "" {
		fmt.Fprintf(w, "\nNote: %s\n", note)
	}
	_, err := fmt.Fprintf(w, "\nA = %s, B = %s: %d paired runs (%d of A without B, %d of B without A; %d pairs with an error or pending run left out of the rates); --min-delta %g, --alpha %g (Holm over %s); %s\n",
		cmp.ActorA, cmp.ActorB, cmp.Paired, cmp.OnlyA, cmp.OnlyB, cmp.Unsettled, cmp.MinDelta, cmp.Alpha, report.Plural(cmp.Tested, "test"), verdict)
	return err
}
