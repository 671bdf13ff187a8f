package browse

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/scoring"
)

// The embedded suite, loaded once for every test.
var suite = sync.OnceValues(func() ([]*bench.Case, []*bench.Config) {
	cases, problems, err := bench.LoadEmbeddedCases()
	if err != nil || len(problems) > 0 {
		panic(err)
	}
	configs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), func(p string) string { return path.Join("bench/configs", p) })
	if err != nil {
		panic(err)
	}
	return cases, configs
})

// testCases are the cases the tests run: a one-step case whose
// full-state runs leak (the oversharer quotes a card number and an IBAN)
// and a two-step case.
var testCases = []string{"fin-expense-review", "sup-account-recovery"}

// makeRun runs the no-model actors on cases of the embedded suite into a
// new run directory, as patchbench run does, and returns it.
func makeRun(t testing.TB, caseIDs, actorNames []string, rounds int) string {
	t.Helper()
	return makeRunAttempts(t, caseIDs, actorNames, rounds, 1)
}

// makeRunAttempts is makeRun with attempts proposals per step.
func makeRunAttempts(t testing.TB, caseIDs, actorNames []string, rounds, attempts int) string {
	t.Helper()
	return makeRunProtocol(t, caseIDs, actorNames, rounds, attempts, "")
}

// makeRunProtocol is makeRunAttempts in a protocol ("" for json). The
// same settings make the same run: the first call's directory is kept
// (madeRuns) and every later call gets a copy of its files in a new
// directory of its own.
func makeRunProtocol(t testing.TB, caseIDs, actorNames []string, rounds, attempts int, protocol string) string {
	t.Helper()
	key := fmt.Sprintf("%q %q %d %d %q", caseIDs, actorNames, rounds, attempts, protocol)
	madeRuns.mu.Lock()
	files, ok := madeRuns.files[key]
	madeRuns.mu.Unlock()
	if ok {
		return writeFiles(t, files)
	}
	var acts []actors.Actor
	for _, n := range actorNames {
		a, err := actors.New(n, actors.Params{})
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	dir := makeRunActors(t, caseIDs, acts, rounds, attempts, protocol)
	files = readFiles(t, dir)
	madeRuns.mu.Lock()
	if madeRuns.files == nil {
		madeRuns.files = map[string]map[string]madeFile{}
	}
	madeRuns.files[key] = files
	madeRuns.mu.Unlock()
	return dir
}

// madeRuns are the files of the run directories makeRunProtocol made, by
// its settings: running the actors is most of what a test that reads a
// run costs, and several tests read the same run.
var madeRuns struct {
	mu    sync.Mutex
	files map[string]map[string]madeFile
}

// madeFile is a file of a run directory: its contents and mode.
type madeFile struct {
	data []byte
	mode fs.FileMode
}

// readFiles reads the regular files under dir, by their slash-separated
// paths relative to it.
func readFiles(t testing.TB, dir string) map[string]madeFile {
	t.Helper()
	files := map[string]madeFile{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		files[filepath.ToSlash(rel)] = madeFile{data, fi.Mode().Perm()}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// writeFiles writes files (readFiles) into a new directory and returns
// it.
func writeFiles(t testing.TB, files map[string]madeFile) string {
	t.Helper()
	dir := t.TempDir()
	for rel, f := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f.data, f.mode); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

// makeRunActors is makeRunProtocol with the actors given.
func makeRunActors(t testing.TB, caseIDs []string, acts []actors.Actor, rounds, attempts int, protocol string) string {
	t.Helper()
	return makeRunSpec(t, caseIDs, acts, runspec.Spec{Rounds: rounds, MaxAttempts: attempts, Protocol: protocol})
}

// makeRunSpec is makeRunActors with the rounds, attempts, protocol and
// limits of spec.
func makeRunSpec(t testing.TB, caseIDs []string, acts []actors.Actor, spec runspec.Spec) string {
	t.Helper()
	rounds, attempts := spec.Rounds, spec.MaxAttempts
	spec.PassThreshold, spec.Tokenizer = 0.8, "o200k_base"
	all, configs := suite()
	var cases []*bench.Case
	for _, c := range all {
		if slices.Contains(caseIDs, c.ID) {
			cases = append(cases, c)
		}
	}
	var actorNames []string
	for _, a := range acts {
		actorNames = append(actorNames, a.Name())
	}
	o := runner.Options{Cases: cases, Configs: configs, Actors: acts, Spec: spec, Concurrency: 2}
	dir := t.TempDir()
	m := rundir.Manifest{Module: "github.com/patchbench/patchbench", CaseSet: EmbeddedSuite, CaseDigest: rundir.CaseDigest(cases), Cases: len(cases),
		Spec: runspec.Spec{Rounds: rounds, Seed: 1, MaxAttempts: attempts, PassThreshold: 0.8, Tokenizer: "o200k_base"}, PromptVersion: runner.PromptVersion,
		Started: "2026-01-02T03:04:05Z", ConfigDetails: configs, ExpectedRuns: len(o.Jobs())}
	for _, c := range configs {
		m.Configs = append(m.Configs, c.Name)
	}
	for _, c := range cases {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	m.Actors = actorNames
	if err := rundir.WriteJSON(dir, rundir.ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Run(context.Background(), o, nil, sink); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// canaries are the secret values of the cases.
func canaries(t *testing.T, caseIDs ...string) []string {
	t.Helper()
	all, _ := suite()
	var out []string
	for _, c := range all {
		if slices.Contains(caseIDs, c.ID) {
			for _, k := range scoring.Canaries(c) {
				out = append(out, k.Value)
			}
		}
	}
	if len(out) == 0 {
		t.Fatal("no canary")
	}
	return out
}

// openRun opens a run directory made by makeRun.
func openRun(t *testing.T, dirs ...string) *Browser {
	t.Helper()
	b, err := Open(dirs, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range b.Warnings() {
		t.Errorf("warning: %s", w)
	}
	return b
}

// The tests read a comparison's run ids, summary and warnings through
// these; the command has no use for them (it writes pages and files).

// RunIDs lists the runs of the comparison, sorted by case, configuration,
// actor and round. A run's id is case/config/actor/round with the actor
// named as the comparison names it (actor@dir for an actor that two
// directories hold).
func (b *Browser) RunIDs() []string {
	out := make([]string, len(b.runs))
	for i, r := range b.runs {
		out[i] = r.ID
	}
	return out
}

// Summary is the summary of the comparison's runs (report.Summarizer over
// their heads): the figures of the overview's main table.
func (b *Browser) Summary() report.Summary { return b.report.Summary }

// Warnings are what Open worked around (also given to Options.Warn),
// once the case sets are loaded.
func (b *Browser) Warnings() []string {
	<-b.casesLoaded
	return slices.Clone(b.warnings)
}

// makeRunScales runs the actors on cases of the embedded suite at each of
// scales ("1x", "200KB", ...) into one run directory, as patchbench run
// --scale 1x,200KB does: each growing case is grown once per scale, a
// case that does not grow runs once, at 1x.
func makeRunScales(t testing.TB, caseIDs, actorNames []string, scales []string) string {
	t.Helper()
	return makeRunAttacks(t, caseIDs, actorNames, nil, scales, nil)
}

// makeRunAttacks is makeRunScales in the configurations named (nil: all
// of them), crossed with attacks as patchbench run --attack does (nil
// for the default; none: the default alone): each case at each scale is
// worded by each attack, and the manifest records the attacks' names and
// the templates of those named file-*.
func makeRunAttacks(t testing.TB, caseIDs, actorNames, configNames, scales []string, attacks []*bench.Attack) string {
	t.Helper()
	all, configs := suite()
	if configNames != nil {
		configs = slices.DeleteFunc(slices.Clone(configs), func(c *bench.Config) bool { return !slices.Contains(configNames, c.Name) })
	}
	var cases []*bench.Case
	for _, c := range all {
		if slices.Contains(caseIDs, c.ID) {
			cases = append(cases, c)
		}
	}
	var acts []actors.Actor
	for _, n := range actorNames {
		a, err := actors.New(n, actors.Params{})
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	spec := runspec.Spec{Rounds: 1, Seed: 1, MaxAttempts: 1, PassThreshold: 0.8, Tokenizer: "o200k_base", Scale: strings.Join(scales, ",")}
	names, recorded, templates := bench.AttackRecords(attacks)
	spec.Attack = strings.Join(names, ",")
	o := runner.Options{Cases: cases, Configs: configs, Actors: acts, Spec: spec, Concurrency: 2, Attacks: recorded}
	for _, text := range scales {
		sc, err := bench.ParseScale(text)
		if err != nil {
			t.Fatal(err)
		}
		grown := make([]*bench.Case, len(cases))
		for i, c := range cases {
			if grown[i], err = c.Grown(sc, 1); err != nil {
				t.Fatal(err)
			}
		}
		scaled := runner.Scaled{Scale: sc, Cases: grown}
		for _, a := range attacks {
			if a == nil {
				continue
			}
			at := make([]*bench.Case, len(grown))
			for i, c := range grown {
				if at[i], err = c.Attacked(a); err != nil {
					t.Fatal(err)
				}
			}
			if scaled.Attacked == nil {
				scaled.Attacked = map[string][]*bench.Case{}
			}
			scaled.Attacked[a.Name] = at
		}
		o.Scales = append(o.Scales, scaled)
	}
	dir := t.TempDir()
	m := rundir.Manifest{Module: "github.com/patchbench/patchbench", CaseSet: EmbeddedSuite, CaseDigest: rundir.CaseDigest(cases), Cases: len(cases),
		Spec: spec, PromptVersion: runner.PromptVersion, Started: "2026-01-02T03:04:05Z", ConfigDetails: configs, ExpectedRuns: len(o.Jobs()),
		Actors: actorNames, AttackTemplates: templates}
	for _, c := range configs {
		m.Configs = append(m.Configs, c.Name)
	}
	for _, c := range cases {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	if err := rundir.WriteJSON(dir, rundir.ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := runner.Run(context.Background(), o, nil, sink); err != nil {
		t.Fatal(err)
	}
	if err := sink.Close(); err != nil {
		t.Fatal(err)
	}
	return dir
}
