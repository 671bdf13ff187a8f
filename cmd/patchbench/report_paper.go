package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runtime"
)

// parsePaperMap reads --paper-map's row=actor pairs into the paper
// model's key → actors: the row a paper model (report.PaperModels, by key
// or name), the actor one of actors (the report's names).
func parsePaperMap(pairs []string, actors []string) (map[string][]string, error) {
	if len(pairs) == 0 {
		return nil, nil
	}
	out := map[string][]string{}
	for _, p := range pairs {
		row, actor, ok := strings.Cut(p, "=")
		if !ok {
			return nil, fmt.Errorf("%q is not row=actor", p)
		}
		m, ok := report.PaperModelOf(row)
		if !ok {
			var keys []string
			for _, m := range report.PaperModels {
				keys = append(keys, m.Key)
			}
			return nil, fmt.Errorf("no paper row %q (rows: %s)", row, strings.Join(keys, ", "))
		}
		if !slices.Contains(actors, actor) {
			return nil, fmt.Errorf("no actor %q in this report (actors: %s)", actor, strings.Join(actors, ", "))
		}
		if !slices.Contains(out[m.Key], actor) {
			out[m.Key] = append(out[m.Key], actor)
		}
	}
	return out, nil
}

// paperTable runs the no-model stress test on the run's case set (for the
// stress figure) and puts every figure of the paper beside the run's,
// each model's rows from the actors mapped to it (--paper-map) or found
// to be runs of it.
func paperTable(ctx context.Context, set *rundir.Set, b *report.Builder, sum report.Summary, casesDir string, mapped map[string][]string, stderr io.Writer) report.Table {
	in := report.PaperInput{Summary: sum, StressConfigs: set.Configs, Map: mapped}
	m := set.Manifests[0]
	dir := casesDir
	if dir == "" && m.CaseSet != displayDir("") {
		dir = m.CaseSet
	}
	cases, problems, err := loadCases(dir)
	switch {
	case err != nil || len(problems) > 0:
		fmt.Fprintf(stderr, "patchbench report: the case set %s does not load; the stress figure is not measured (give --cases)\n", displayDir(dir))
	default:
		var keep []*bench.Case
		for _, c := range cases {
			if slices.Contains(m.CaseIDs, c.ID) {
				keep = append(keep, c)
			}
		}
		configs, err := gatedConfigs(set.Configs)
		if err == nil {
			in.StressConfigs = configs
			in.Stress, err = runner.Stress(ctx, keep, configs)
		}
		if err != nil {
			fmt.Fprintf(stderr, "patchbench report: stress test: %v; the stress figure is not measured\n", err)
		}
	}
	producers := map[string]report.Producer{}
	for i, d := range set.Dirs {
		for _, a := range d.Manifest.Actors {
			name := set.Name(i, a)
			if _, ok := producers[name]; ok {
				continue
			}
			producers[name] = report.Producer{Actor: name, Spec: d.Manifest.ActorSpecs[a], Models: b.Models(name), Rounds: d.Manifest.Rounds, Temperature: d.Manifest.Temperature,
				MaxOutputTokens: d.Manifest.MaxOutputTokens, MaxAttempts: d.Manifest.MaxAttempts, Structured: d.Manifest.Structured, Dir: filepath.Base(filepath.Clean(d.Path))}
		}
	}
	return report.PaperTable(in, producers)
}

// gatedConfigs are the configurations of a run as the stress test needs
// them: with their gates compiled from the names the manifest recorded
// (a manifest does not hold the compiled set), or, for a manifest that
// recorded names only, the embedded configuration of that name.
func gatedConfigs(configs []*bench.Config) ([]*bench.Config, error) {
	var embedded []*bench.Config
	var out []*bench.Config
	for _, c := range configs {
		if c.View == "" && len(c.Gates) == 0 {
			if embedded == nil {
				var err error
				if embedded, err = loadConfigs(""); err != nil {
					return nil, err
				}
			}
			i := slices.IndexFunc(embedded, func(e *bench.Config) bool { return e.Name == c.Name })
			if i < 0 {
				return nil, fmt.Errorf("the manifest does not say what configuration %s checks", c.Name)
			}
			out = append(out, embedded[i])
			continue
		}
		gs, err := runtime.GatesFromList(c.Gates)
		if err != nil {
			return nil, fmt.Errorf("configuration %s: %w", c.Name, err)
		}
		g := *c
		g.GateSet = gs
		out = append(out, &g)
	}
	return out, nil
}
