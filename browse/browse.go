package browse

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// EmbeddedSuite is how a manifest's case_set names the suite embedded in
// the binary (patchbench run without --cases).
const EmbeddedSuite = "the embedded suite"

// Options choose how Open reads the run directories.
type Options struct {
	// CasesDir is the case set directory of the runs, for directories
	// whose manifest's case set cannot be loaded from here; "" loads each
	// manifest's own (the embedded suite, or the directory it names).
	CasesDir string
	// Baseline is the configuration the overview's paired tests compare
	// the others against; "" takes patchoptic when present, else none
	// (the tests are then skipped, and the overview says so).
	Baseline string
	// Common reads directories of different case sets over the cases
	// every one of them holds (rundir.NarrowToCommon); Browser.LeftOut
	// says what it left out. Without it they are refused.
	Common bool
	// Warn, when set, is told what Open worked around: a case set that
	// does not load (its runs' pages are then shown from the records
	// alone), a case set that is not the one the run used. The case sets
	// load in the background once Open has returned, so Warn may be
	// called after it, from another goroutine.
	Warn func(msg string)
}

// Browser is one or more run directories opened for browsing as one comparison
// (rundir.Combine). It holds each directory's index (a run's head and
// where its line is), the case sets and the summary, never a whole
// record: a run page reads its record from disk. It is safe for
// concurrent use.
type Browser struct {
	dirs    []*dirData
	leftOut []rundir.LeftOut
	comb    *rundir.Combined
	configs []*bench.Config
	actors  []string
	runs    []*runEntry
	byID    map[string]*runEntry
	// byCell holds the runs of each case × configuration × actor, in
	// round order.
	byCell   map[cellKey][]*runEntry
	caseIDs  []string // the comparison's cases, by domain then id
	domains  []string
	titles   map[string]string // case id → title, where the case is known
	domainOf map[string]string
	// kinds are the secret kinds the kind filter offers: the closed list,
	// then those the runs' leaks add, in the order met.
	kinds []string
	// scales are the runs' scales ("1x", "1MB", ...), smallest first.
	scales   []string
	rounds   int
	report   report.Report
	baseline string
	expected int
	// casesLoaded is closed once the case sets are loaded (loadCases,
	// in the background): the dirs' cases, titles and warnings are
	// then set.
	casesLoaded chan struct{}
	warnings    []string
	// runCases keeps the last cases grown to a run's scale or worded by
	// its attack (runCase).
	runCases runCases
}

// dirData is one run directory of a Browser.
type dirData struct {
	path     string
	label    string
	manifest *rundir.Manifest
	index    *rundir.Index
	// expected is the runs the directory was to hold of the comparison's
	// cases, and caseIDs those cases (the manifest's, or the common
	// cases: Options.Common).
	expected int
	caseIDs  []string
	// cases are the directory's cases by id, nil when its case set does
	// not load; casesFrom says where they were loaded from.
	cases     map[string]*bench.Case
	casesFrom string
}

// cellKey is a cell of the overview's grid.
type cellKey struct{ kase, config, actor string }

// runEntry is one run of the comparison: its id there (the actor named
// as the comparison names it), what the overview shows of it, and where
// its record is.
type runEntry struct {
	ID     string
	Case   string
	Domain string
	Config string
	Actor  string
	Round  int
	// Scale is the run's scale as the tables print it ("1x" for a run
	// at 1x or of a case that does not grow).
	Scale   string
	Status  string
	Outcome Outcome
	Flags   Flags
	Leaks   int
	// Kinds and Mechanisms are the kinds of the secrets the run leaked
	// and the mechanisms of the pulls its leaks answered, sorted, each
	// once (report.Unrecorded for a leak recorded without them).
	Kinds      []string
	Mechanisms []string
	Illegal    int
	Content    float64
	Tokens     int
	dir        int
	idx        int
}

// LeftOut is what Options.Common left out of each directory that lost
// cases (none without it).
func (b *Browser) LeftOut() []rundir.LeftOut { return b.leftOut }

// Open opens the run directories at paths as one comparison: it reads
// each manifest, indexes each runs.jsonl (rundir.BuildIndex, checking
// every line against the manifest), refuses directories that cannot be
// compared (rundir.Combine names the difference) and builds the summary
// from the runs' heads; then it returns, and the case sets load in the
// background (a run page waits for them; the overview needs none).
// Records are read again from disk when a run page is asked for.
func Open(paths []string, o Options) (*Browser, error) {
	if len(paths) == 0 {
		return nil, errors.New("no run directory given")
	}
	b := &Browser{byID: map[string]*runEntry{}, byCell: map[cellKey][]*runEntry{}, titles: map[string]string{}, domainOf: map[string]string{},
		kinds: slices.Clone(bench.SecretKinds)}
	var ms []*rundir.Manifest
	for _, p := range paths {
		m, err := rundir.ReadManifest(p)
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil, fmt.Errorf("%s is not a run directory: %w", p, err)
			}
			return nil, err
		}
		from := o.CasesDir
		if from == "" {
			from = m.CaseSet
		}
		if from == "" {
			from = EmbeddedSuite
		}
		b.dirs = append(b.dirs, &dirData{path: p, manifest: m, casesFrom: from, expected: m.ExpectedRuns, caseIDs: m.CaseIDs})
		ms = append(ms, m)
		b.rounds = max(b.rounds, m.Rounds)
	}
	var holders []rundir.Holder
	for _, d := range b.dirs {
		ix, err := rundir.BuildIndex(d.path, d.manifest)
		if err != nil {
			return nil, err
		}
		d.index = ix
		holders = append(holders, ix)
	}
	if o.Common {
		// The narrowed manifests go to Combine and the counts; the
		// directories keep their own, which their case sets are
		// checked against.
		ixs := make([]*rundir.Index, len(b.dirs))
		for i, d := range b.dirs {
			ixs[i] = d.index
		}
		lost, err := rundir.NarrowToCommon(paths, ms, ixs)
		if err != nil {
			return nil, err
		}
		b.leftOut = lost
		for i, d := range b.dirs {
			d.expected, d.caseIDs = ms[i].ExpectedRuns, ms[i].CaseIDs
		}
	}
	for _, d := range b.dirs {
		b.expected += d.expected
	}
	comb, err := rundir.Combine(paths, ms, holders)
	if err != nil {
		return nil, err
	}
	b.comb, b.configs, b.actors = comb, comb.Configs, comb.Actors
	labels := rundir.DirLabels(paths)
	for i, d := range b.dirs {
		d.label = labels[i]
	}
	switch {
	case o.Baseline != "" && configByName(b.configs, o.Baseline) == nil:
		var names []string
		for _, c := range b.configs {
			names = append(names, c.Name)
		}
		return nil, fmt.Errorf("baseline: no configuration %q in %s (names: %s)", o.Baseline, strings.Join(paths, ", "), strings.Join(names, ", "))
	case o.Baseline != "":
		b.baseline = o.Baseline
	case configByName(b.configs, "patchoptic") != nil:
		b.baseline = "patchoptic"
	}
	b.collect()
	for _, d := range b.dirs {
		d.index.Trim() // what the pages need of the heads is in b.runs
	}
	// The overview needs no case: the case sets load in the background,
	// and a run page waits for them.
	b.casesLoaded = make(chan struct{})
	go func() {
		defer close(b.casesLoaded)
		b.loadCases(o)
		for _, w := range b.warnings {
			if o.Warn != nil {
				o.Warn(w)
			}
		}
	}()
	return b, nil
}

// waitCases waits until the case sets are loaded, or ctx is done.
func (b *Browser) waitCases(ctx context.Context) error {
	select {
	case <-b.casesLoaded:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// casesReady reports whether the case sets are loaded (the overview then
// shows the cases' titles).
func (b *Browser) casesReady() bool {
	select {
	case <-b.casesLoaded:
		return true
	default:
		return false
	}
}

// loadCases loads each directory's case set, once per place, with the
// titles of the cases.
func (b *Browser) loadCases(o Options) {
	loaded := map[string]map[string]*bench.Case{}
	failed := map[string]bool{}
	for _, d := range b.dirs {
		from := d.casesFrom
		if failed[from] {
			continue
		}
		cases, ok := loaded[from]
		if !ok {
			var list []*bench.Case
			var problems bench.Problems
			var err error
			if from == EmbeddedSuite {
				list, problems, err = bench.LoadEmbeddedCases()
			} else {
				list, problems, err = bench.LoadCaseDir(from)
			}
			if err == nil && len(problems) > 0 {
				err = fmt.Errorf("%d problems, the first: %v", len(problems), problems[0])
			}
			if err != nil {
				failed[from] = true
				b.warnings = append(b.warnings, fmt.Sprintf("the case set %s of %s does not load (%v); its runs are shown from their records alone, with their texts withheld until revealed (give the case set with --cases)", from, d.path, err))
				continue
			}
			cases = map[string]*bench.Case{}
			for _, c := range list {
				cases[c.ID] = c
			}
			loaded[from] = cases
		}
		var used []*bench.Case
		missing := 0
		for _, id := range d.manifest.CaseIDs {
			if c := cases[id]; c != nil {
				used = append(used, c)
			} else {
				missing++
			}
		}
		switch {
		case missing > 0:
			b.warnings = append(b.warnings, fmt.Sprintf("%s lacks %s of %s; their runs are shown from their records alone (give the case set with --cases)", from, report.PluralOf(missing, "case", "cases"), d.path))
		case d.manifest.CaseDigest != "" && rundir.CaseDigest(used) != d.manifest.CaseDigest:
			b.warnings = append(b.warnings, fmt.Sprintf("the cases in %s are not those %s was run with (their digest differs): the replayed states and the marked leaks may not match the run", from, d.path))
		}
		d.cases = cases
		for _, id := range d.manifest.CaseIDs {
			if c := cases[id]; c != nil {
				b.titles[id] = c.Title
			}
		}
	}
}

// collect builds the comparison's runs from the directories' indexes, in
// the manner of rundir.Set.Each (a run id two directories hold under one
// name is taken from the first), and the report from their heads.
func (b *Browser) collect() {
	builder := report.NewBuilder(b.configs, b.actors, b.baseline)
	caseSet := map[string]bool{}
	for di, d := range b.dirs {
		for _, id := range d.caseIDs {
			caseSet[id] = true
		}
		for i := 0; i < d.index.Len(); i++ {
			e := d.index.Entry(i)
			h := *e.Head // a copy: the actor is renamed for the comparison
			h.Actor = b.comb.Name(di, h.Actor)
			id := rundir.RunIDOf(h.Case, h.Config, h.Actor, h.Round, h.Scale, h.AttackName)
			if _, dup := b.byID[id]; dup {
				continue
			}
			builder.Add(&h)
			r := &runEntry{ID: id, Case: h.Case, Domain: h.Domain, Config: h.Config, Actor: h.Actor, Round: h.Round, Scale: report.ScaleName(h.Scale), Status: h.Status,
				Leaks: e.NLeaks, Illegal: len(h.IllegalCommits), Content: h.ContentScore, Tokens: h.Tokens.Prompt + h.Tokens.Completion,
				dir: di, idx: i}
			r.Flags = flagsOf(&h)
			r.Kinds, r.Mechanisms = leakKeys(h.Leaks)
			if !slices.Contains(b.scales, r.Scale) {
				b.scales = append(b.scales, r.Scale)
			}
			for _, k := range r.Kinds {
				if !slices.Contains(b.kinds, k) {
					b.kinds = append(b.kinds, k)
				}
			}
			r.Outcome = r.Flags.Primary()
			b.runs = append(b.runs, r)
			b.byID[id] = r
			k := cellKey{h.Case, h.Config, h.Actor}
			b.byCell[k] = append(b.byCell[k], r)
			caseSet[h.Case] = true
			if h.Domain != "" {
				b.domainOf[h.Case] = h.Domain
			}
		}
	}
	for _, rs := range b.byCell {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].Round < rs[j].Round })
	}
	report.SortScales(b.scales)
	b.report = builder.Report()
	b.report.Summary.RunsExpected = b.expected
	b.report.Summary.Complete = builder.Summarizer().Settled() >= b.expected
	for id := range caseSet {
		b.caseIDs = append(b.caseIDs, id)
		if d := b.domainOf[id]; d != "" && !slices.Contains(b.domains, d) {
			b.domains = append(b.domains, d)
		}
	}
	sort.Strings(b.domains)
	sort.Slice(b.caseIDs, func(i, j int) bool {
		a, c := b.caseIDs[i], b.caseIDs[j]
		if da, dc := b.domainOf[a], b.domainOf[c]; da != dc {
			return da < dc
		}
		return a < c
	})
	b.sortRuns()
}

// sortRuns orders the runs by case, configuration (in the comparison's
// order), actor (likewise) and round.
func (b *Browser) sortRuns() {
	cfgAt, actorAt := b.positions()
	sort.SliceStable(b.runs, func(i, j int) bool {
		x, y := b.runs[i], b.runs[j]
		switch {
		case x.Case != y.Case:
			return x.Case < y.Case
		case x.Config != y.Config:
			return cfgAt[x.Config] < cfgAt[y.Config]
		case x.Actor != y.Actor:
			return actorAt[x.Actor] < actorAt[y.Actor]
		}
		return x.Round < y.Round
	})
}

// positions give each configuration's and actor's place in the
// comparison's order, by name.
func (b *Browser) positions() (configs, actors map[string]int) {
	configs, actors = map[string]int{}, map[string]int{}
	for i, c := range b.configs {
		configs[c.Name] = i
	}
	for i, a := range b.actors {
		actors[a] = i
	}
	return configs, actors
}

// Runs is the number of runs in the comparison.
func (b *Browser) Runs() int { return len(b.runs) }

// lookup finds a run by its id in the comparison, or by the same id with
// the configuration written as its label ("PatchOptic", as the tables
// print it) or in another case.
func (b *Browser) lookup(id string) *runEntry {
	if r := b.byID[id]; r != nil {
		return r
	}
	parts := strings.Split(id, "/")
	if len(parts) != 4 {
		return nil
	}
	for _, c := range b.configs {
		if strings.EqualFold(parts[1], c.Label) || strings.EqualFold(parts[1], c.Name) {
			parts[1] = c.Name
			return b.byID[strings.Join(parts, "/")]
		}
	}
	return nil
}

func configByName(cs []*bench.Config, name string) *bench.Config {
	for _, c := range cs {
		if c.Name == name {
			return c
		}
	}
	return nil
}
