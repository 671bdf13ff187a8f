package main

import (
	"cmp"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

// plan builds the actors, loads the configurations and the cases, and
// makes the runner's options and the manifest. With checkOnly the actors
// are made only to check their specs (actors.BuildOptions.CheckOnly):
// the plan is not for running.
func (f *runFlags) plan(stderr io.Writer, sh runner.Shard, checkOnly bool) (*runPlan, error) {
	params := f.params()
	acts, err := f.buildActors(params, checkOnly)
	if err != nil {
		return nil, err
	}
	configs, err := f.selectConfigs()
	if err != nil {
		return nil, err
	}
	if err := runner.CheckTokenizer(f.spec.Tokenizer); err != nil {
		return nil, flagCausef("tokenizer", "%v", err)
	}
	chosen, err := f.selectCases(stderr, acts)
	if err != nil {
		return nil, err
	}
	scales, err := parseScales(f.spec.Scale)
	if err != nil {
		return nil, flagCausef("scale", "%v", err)
	}
	var list []string
	for _, sc := range scales {
		list = append(list, sc.String())
	}
	f.spec.Scale = strings.Join(list, ",") // one spelling in the manifest and the records
	var scaled []runner.Scaled
	for _, sc := range scales {
		// Each case is grown once per scale; its runs at that scale
		// share the grown state, which no run modifies.
		grown := slices.Clone(chosen)
		if !checkOnly {
			for i, c := range chosen {
				if grown[i], err = c.Grown(sc, uint64(f.spec.ScaleSeed)); err != nil {
					return nil, flagCausef("scale", "%v", err)
				}
			}
		}
		scaled = append(scaled, runner.Scaled{Scale: sc, Cases: grown})
	}
	attacks, flag, err := parseAttacks(f.spec.Attack, f.spec.AttackFile)
	if err != nil {
		return nil, flagCausef(flag, "%v", err)
	}
	names, recorded, templates := bench.AttackRecords(attacks)
	for _, a := range attacks {
		if a == nil {
			continue
		}
		for i := range scaled {
			// Each case is attacked once per scale; its runs under
			// that attack share the attacked state.
			at := slices.Clone(scaled[i].Cases)
			if !checkOnly {
				for k, c := range scaled[i].Cases {
					if at[k], err = c.Attacked(a); err != nil {
						if bench.IsFileAttack(a.Name) {
							return nil, flagCausef("attack", "attack template file %s: %v", a.Source, err)
						}
						return nil, flagCausef("attack", "%v", err)
					}
				}
			}
			if scaled[i].Attacked == nil {
				scaled[i].Attacked = map[string][]*bench.Case{}
			}
			scaled[i].Attacked[a.Name] = at
		}
	}
	f.spec.Attack = strings.Join(names, ",") // one spelling in the manifest
	f.spec.AttackFile = ""                   // its attack is in the list
	prompt, err := loadPrompt(f.spec.PromptTemplate)
	if err != nil {
		return nil, flagCausef("prompt-template", "%v", err)
	}
	p := &runPlan{acts: acts, progressEvery: *f.progressEvery, cacheFailures: f.cacheFailures, opts: runner.Options{
		Spec: f.spec, Cases: chosen, Configs: configs, Actors: acts, Concurrency: *f.concurrency, Shard: sh, Prompt: prompt, Scales: scaled,
		Attacks: recorded,
	}}
	for _, a := range acts {
		if _, driven := actors.Unnamed(a).(actors.Driver); driven && f.spec.Protocol != runner.ProtocolTools {
			why := "an MCP agent works through the tools; add --protocol tools (protocol: tools in a plan)"
			return nil, valueErr("actor", a.Name(), fmt.Sprintf("--actor %s: %s", a.Name(), why), a.Name()+": "+why)
		}
	}
	if f.spec.Protocol == runner.ProtocolTools {
		for _, a := range acts {
			if !actors.SpeaksTools(a) {
				return nil, flagf("protocol", "tools: actor %s speaks only the json protocol", a.Name())
			}
		}
		p.opts.Prompt = runner.ToolsPrompt
	}
	f.attackTemplates = templates
	p.manifest = f.manifest(params, p.opts)
	p.dir = *f.out
	if p.dir == "" {
		p.dir = rundir.DefaultDir("results", p.manifest)
	}
	return p, nil
}

// parseScales reads run --scale: a comma list of scales
// (bench.ParseScale), each at most once, in ascending size ("1MB,1x"
// is 1x, 1MB), so that one set of scales is one manifest whatever order
// it was given in.
func parseScales(text string) ([]bench.Scale, error) {
	var out []bench.Scale
	for _, item := range strings.Split(text, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		sc, err := bench.ParseScale(item)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, sc) {
			return nil, fmt.Errorf("scale %s is given twice", sc)
		}
		out = append(out, sc)
	}
	if len(out) == 0 {
		return []bench.Scale{{}}, nil
	}
	slices.SortFunc(out, func(a, b bench.Scale) int { return cmp.Compare(a.Bytes, b.Bytes) })
	return out, nil
}

// parseAttacks reads run --attack and --attack-file: a comma list of
// attack names (bench.LookupAttack; "file:PATH" a template file, as
// --attack-file PATH is), each at most once, in the order given, the
// default (nil) for an empty list; an empty item is refused. On an error
// it also returns the flag the error is of ("attack" or "attack-file");
// the error of a template file names the file.
func parseAttacks(text, file string) (_ []*bench.Attack, flag string, _ error) {
	type item struct{ text, flag string }
	var items []item
	if strings.TrimSpace(text) != "" {
		for _, s := range strings.Split(text, ",") {
			s = strings.TrimSpace(s)
			if s == "" {
				return nil, "attack", fmt.Errorf("%q holds an empty attack name; give a comma list of attacks", text)
			}
			items = append(items, item{s, "attack"})
		}
	}
	if file != "" {
		items = append(items, item{"file:" + file, "attack-file"})
	}
	var out []*bench.Attack
	from := map[string]string{} // the attacks given, by name: what gave them
	for _, it := range items {
		var a *bench.Attack
		var err error
		if path, ok := strings.CutPrefix(it.text, "file:"); ok {
			a, err = loadAttackFile(path)
		} else {
			a, err = bench.LookupAttack(it.text)
		}
		if err != nil {
			return nil, it.flag, err
		}
		name := bench.AttackCase
		if a != nil {
			name = a.Name
		}
		if prev, seen := from[name]; seen {
			if bench.IsFileAttack(name) && filepath.Clean(prev) != filepath.Clean(a.Source) {
				return nil, it.flag, fmt.Errorf("the template files %s and %s are two different files that both make the attack %s (an attack is named after its file); rename one", prev, a.Source, name)
			}
			return nil, it.flag, fmt.Errorf("attack %s is given twice", name)
		}
		from[name] = it.text
		if a != nil {
			from[name] = a.Source
		}
		out = append(out, a)
	}
	if len(out) == 0 {
		return []*bench.Attack{nil}, "", nil
	}
	return out, "", nil
}

// loadAttackFile reads an attack template file (bench.ParseAttack); the
// attack is named after the file (bench.AttackFileName) and errors name
// the file.
func loadAttackFile(path string) (*bench.Attack, error) {
	if path == "" {
		return nil, errors.New("file: names no file (want file:PATH)")
	}
	b, err := readInput(path, bench.MaxAttackTemplateBytes)
	if err != nil {
		return nil, fmt.Errorf("attack template file: %w", err)
	}
	a, err := bench.ParseAttack(bench.AttackFileName(path), path, string(b))
	if err != nil {
		if strings.HasPrefix(err.Error(), "attack name ") {
			return nil, fmt.Errorf("attack template file %s: %w (a file's attack is named after the file: rename it)", path, err)
		}
		return nil, fmt.Errorf("attack template file %s: %w", path, err)
	}
	return a, nil
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

// buildActors makes the actors of the --actor specs (actors.Build); with
// checkOnly, only to check them (actors.BuildOptions.CheckOnly).
func (f *runFlags) buildActors(params actors.Params, checkOnly bool) ([]actors.Actor, error) {
	acts, err := actors.Build(f.spec.ActorSpecs, actors.BuildOptions{Params: params, RPS: f.spec.RPS, NoCache: *f.noCache,
		CacheDir: *f.cacheDir, DefaultCacheDir: defaultCacheDir, OnCacheWriteError: f.cacheFailures.add, CheckOnly: checkOnly})
	var dupErr *actors.DuplicateSpecError
	var cacheErr *actors.CacheDirError
	var specErr *actors.SpecError
	switch {
	case errors.As(err, &dupErr):
		if dupErr.Name != "" {
			return nil, valueErr("actor", dupErr.Spec, "--"+dupErr.Error(), dupErr.Error())
		}
		return nil, valueErr("actor", dupErr.Spec, fmt.Sprintf("--actor %s is given twice", dupErr.Spec), fmt.Sprintf("%s is given twice", dupErr.Spec))
	case errors.As(err, &cacheErr):
		return nil, usagef("--actor: %v; give --cache DIR or --no-cache", err)
	case errors.As(err, &specErr):
		return nil, valueErr("actor", specErr.Spec, fmt.Sprintf("--actor: %v", err), err.Error())
	case err != nil:
		return nil, usagef("--actor: %v", err)
	}
	return acts, nil
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
func (f *runFlags) selectConfigs() ([]*bench.Config, error) {
	configs, err := loadConfigs(f.spec.ConfigsDir)
	if err != nil {
		return nil, flagCausef("configs", "%v", err)
	}
	if len(f.spec.OnlyConfigs) == 0 {
		return configs, nil
	}
	var names []string
	for _, c := range configs {
		names = append(names, c.Name)
	}
	for _, n := range f.spec.OnlyConfigs {
		if !slices.Contains(names, n) {
			// The tables print labels (PatchOptic, View Only); a label
			// given here is named with its configuration's name.
			hint := ""
			for _, c := range configs {
				if strings.EqualFold(c.Label, n) || strings.EqualFold(c.Name, n) {
					hint = fmt.Sprintf("; %q is the label of %s: give --config %s", n, c.Name, c.Name)
				}
			}
			return nil, flagCausef("config", "no configuration %q (names: %s)%s", n, strings.Join(names, ", "), hint)
		}
	}
	var keep []*bench.Config
	for _, c := range configs {
		if slices.Contains(f.spec.OnlyConfigs, c.Name) {
			keep = append(keep, c)
		}
	}
	return keep, nil
}

// selectCases loads the cases and keeps those of --case and --domain;
// every role of theirs must have an actor in each role map, and case ids
// must be unique.
func (f *runFlags) selectCases(stderr io.Writer, acts []actors.Actor) ([]*bench.Case, error) {
	cases, err := loadAllCases(f.spec.CasesDir)
	if err != nil {
		return nil, flagCausef("cases", "%v", err)
	}
	ds, domains, wanted := bench.DomainsOf(cases), f.spec.OnlyDomains, f.spec.OnlyCases
	for _, d := range domains {
		if !slices.Contains(ds, d) {
			return nil, flagCausef("domain", "unknown domain %q (the case set's domains: %s)", d, strings.Join(ds, ", "))
		}
	}
	var chosen []*bench.Case
	for _, c := range cases {
		if (len(wanted) == 0 || slices.Contains(wanted, c.ID)) && (len(domains) == 0 || slices.Contains(domains, c.Domain)) {
			chosen = append(chosen, c)
		}
	}
	for _, id := range wanted {
		if !slices.ContainsFunc(cases, func(c *bench.Case) bool { return c.ID == id }) {
			return nil, flagCausef("case", "no case %q in the case set (patchbench cases lists them)", id)
		}
	}
	if len(chosen) == 0 {
		return nil, &usageErr{msg: fmt.Sprintf("no case matches --case %q --domain %q", strings.Join(f.spec.OnlyCases, ","), strings.Join(f.spec.OnlyDomains, ",")), flag: "domain",
			why: fmt.Sprintf("no case of the domains %q has an id of %q", strings.Join(f.spec.OnlyDomains, ","), strings.Join(f.spec.OnlyCases, ","))}
	}
	chosen, err = f.subset(chosen)
	if err != nil {
		return nil, err
	}
	if f.spec.Sample != 0 {
		// The draw is in the manifest too; say it where the user looks.
		ids := make([]string, len(chosen))
		for i, c := range chosen {
			ids[i] = c.ID
		}
		sample, seed, drew := "--sample", "--sample-seed", "drew"
		if f.inPlanFile("sample") {
			sample, seed = "cases.sample", "cases.sample_seed"
		}
		if f.cmd != "run" {
			drew = "draws" // plan checks; the run draws
		}
		fmt.Fprintf(stderr, "patchbench %s: %s %d (%s %d) %s %s\n", f.cmd, sample, f.spec.Sample, seed, f.spec.SampleSeed, drew, strings.Join(ids, ", "))
	}
	var roles []string
	for _, c := range chosen {
		for _, st := range c.Steps {
			if !slices.Contains(roles, st.Role) {
				roles = append(roles, st.Role)
			}
		}
	}
	for _, a := range acts {
		if m, ok := actors.Unnamed(a).(*actors.RoleMap); ok {
			if missing := m.Missing(roles); len(missing) > 0 {
				why := fmt.Sprintf("no actor for the roles %s (add role=spec entries, or a spec alone for every other role)", strings.Join(missing, ", "))
				return nil, valueErr("actor", m.Name(), "--actor "+m.Name()+": "+why, m.Name()+": "+why)
			}
			if unknown := m.Unknown(roles); len(unknown) > 0 {
				all := caseRoles(cases)
				if typo := m.Unknown(all); len(typo) > 0 {
					why := fmt.Sprintf("%s is not a role of any case (the roles: %s)", strings.Join(typo, ", "), strings.Join(all, ", "))
					return nil, valueErr("actor", m.Name(), "--actor "+m.Name()+": "+why, m.Name()+": "+why)
				}
				fmt.Fprintf(stderr, "patchbench %s: --actor %s: no chosen case has the role %s; its actor is not asked\n", f.cmd, m.Name(), strings.Join(unknown, ", "))
			}
		}
	}
	ids := map[string]string{}
	for _, c := range chosen {
		if prev, ok := ids[c.ID]; ok {
			return nil, fmt.Errorf("case id %s is used by %s and %s; run \"patchbench validate\"", c.ID, prev, c.File)
		}
		ids[c.ID] = c.File
	}
	return chosen, nil
}

// subset keeps the cases --limit or --sample choose of those selected
// (in the suite's order); a count over the cases selected is refused,
// saying how many there are.
func (f *runFlags) subset(chosen []*bench.Case) ([]*bench.Case, error) {
	flagName, n := "limit", f.spec.Limit
	if f.spec.Sample != 0 {
		flagName, n = "sample", f.spec.Sample
	}
	switch {
	case n == 0:
		return chosen, nil
	case n > len(chosen):
		return nil, flagCausef(flagName, "%d cases asked for, but only %d are selected", n, len(chosen))
	case flagName == "limit":
		return chosen[:n], nil
	}
	return sampleCases(chosen, n, f.spec.SampleSeed), nil
}

// sampleCases draws n of cases (0 < n <= len(cases)) at random,
// stratified by domain, and returns them in the order of cases. n is
// allotted to the domains in proportion to their case counts by the
// largest remainder (the remainders' ties go to the domain first in
// sorted order); within each domain, the cases are ordered by the
// SHA-256 of the seed and their id, and the first ones kept. The same
// cases, n and seed always draw the same cases (whatever the Go
// version), and a case's rank does not depend on the other cases.
func sampleCases(cases []*bench.Case, n int, seed int64) []*bench.Case {
	byDomain := map[string][]*bench.Case{}
	for _, c := range cases {
		byDomain[c.Domain] = append(byDomain[c.Domain], c)
	}
	domains := bench.DomainsOf(cases)
	quota := map[string]int{}
	type rem struct {
		domain string
		num    int // the remainder's numerator over len(cases)
	}
	var rems []rem
	given := 0
	for _, d := range domains {
		q := n * len(byDomain[d])
		quota[d] = q / len(cases)
		given += quota[d]
		rems = append(rems, rem{d, q % len(cases)})
	}
	slices.SortStableFunc(rems, func(a, b rem) int { return b.num - a.num })
	for i := 0; given < n; i++ {
		quota[rems[i].domain]++
		given++
	}
	keep := map[*bench.Case]bool{}
	for _, d := range domains {
		pool := slices.Clone(byDomain[d])
		rank := func(c *bench.Case) string {
			sum := sha256.Sum256(fmt.Appendf(nil, "%d\x00%s", seed, c.ID))
			return string(sum[:])
		}
		slices.SortStableFunc(pool, func(a, b *bench.Case) int { return strings.Compare(rank(a), rank(b)) })
		for _, c := range pool[:quota[d]] {
			keep[c] = true
		}
	}
	var out []*bench.Case
	for _, c := range cases {
		if keep[c] {
			out = append(out, c)
		}
	}
	return out
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

// manifest is the run's manifest: its settings (docs/run.md, manifest.json),
// the endpoints of the providers its actors use (each registered
// provider's variables with a manifest member), the build, the start
// time and the runs the settings call for.
func (f *runFlags) manifest(params actors.Params, o runner.Options) rundir.Manifest {
	m := rundir.Manifest{
		Module: "github.com/patchbench/patchbench", CaseSet: displayDir(f.spec.CasesDir), CaseDigest: rundir.CaseDigest(o.Cases),
		Cases: len(o.Cases), PromptVersion: o.Prompt.Version, Shard: shardString(*f.shard, o.Shard),
		Started:       time.Now().UTC().Format(time.RFC3339),
		ConfigDetails: o.Configs,
		Spec:          f.spec.Recorded(),
		Plan:          *f.planFile,
		// Show and browse word the runs' injections by them.
		AttackTemplates: f.attackTemplates,
	}
	if f.planSrc != nil {
		m.PlanDigest = f.planSrc.Digest()
	}
	for _, c := range o.Configs {
		m.Configs = append(m.Configs, c.Name)
	}
	for _, c := range o.Cases {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	for _, a := range o.Actors {
		m.Actors = append(m.Actors, a.Name())
		if spec := actors.SpecOf(a); spec != a.Name() {
			if m.ActorSpecs == nil {
				m.ActorSpecs = map[string]string{}
			}
			m.ActorSpecs[a.Name()] = spec
		}
		for _, p := range actors.Providers(a) {
			k, _ := actors.ProviderKind(p)
			for _, v := range k.Env {
				if v.Manifest != "" {
					m.SetEndpoint(v.Manifest, redactURL(v.Get(params)))
				}
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
