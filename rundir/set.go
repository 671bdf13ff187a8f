package rundir

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
)

// Holder is what Combine needs of a directory's runs: which run ids it
// holds. Dir and Index are Holders.
type Holder interface {
	Has(id string) bool
	RunIDs() []string
}

// Combined is several run directories read as one comparison (patchbench
// report, compare and browse given several directories): runs are keyed
// by (case, configuration, actor, round); the configurations are those of
// every directory, in the order they first appear; an actor found in two
// directories that both hold one of its runs (the same actor on two dates,
// say) is named in each with its directory, "actor@dir", so that neither
// run hides the other; shards of one run (whose runs never meet) keep
// their actor's name. As one side of a comparison of two sides
// (patchbench compare) the directories are named otherwise: OneName,
// Repeat.
type Combined struct {
	Paths     []string
	Manifests []*Manifest
	Configs   []*bench.Config
	// Actors are the actors' names in the comparison, in the order they
	// first appear.
	Actors []string
	names  []map[string]string
	// seen holds the actor names already in Actors.
	seen map[string]bool
	// OneActors are the actors' names as a side of patchbench compare
	// reads them (OneName), in the order they first appear.
	OneActors []string
	oneNames  []map[string]string
	// repeat is each directory's Repeat.
	repeat []int
	// actorOf maps every name of both namings to the actor it names.
	actorOf map[string]string
}

// SetSettings are the manifest members that directories read as one
// comparison must share: the case set (its digest and ids), the prompt
// template's version and the pass threshold that defines a semantic pass.
var SetSettings = []string{"case_digest", "case_ids", "prompt_version", "pass_threshold"}

// CheckSettings refuses manifests (of the directories at paths, in the
// same order) whose SetSettings differ from the first's: the error, a
// *SettingsError, names the two directories, the settings that differ and
// how (the cases only in one, the two prompt versions…), as merge names
// the settings of shards that differ. It is nil for fewer than two
// manifests.
func CheckSettings(paths []string, ms []*Manifest) error {
	for i := 1; i < len(ms); i++ {
		if diff := setDifferences(ms[0], ms[i]); len(diff) > 0 {
			return &SettingsError{A: paths[0], B: paths[i], Settings: diff, Detail: describe(ms[0], ms[i], diff)}
		}
	}
	return nil
}

// Kinds of Difference between the two sides of a comparison: what the
// difference changes (and so which of compare's --allow-…-change flags
// allows it).
const (
	ChangeCases     = "case" // the case set: its digest or its ids
	ChangePrompt    = "prompt"
	ChangeThreshold = "threshold"
	ChangeConfig    = "config" // a configuration's view or gates
)

// Difference is one way the two sides of a comparison (patchbench
// compare BASE NEW) differ in what they measure: its Kind (ChangeCases…)
// and the difference in words, A's then B's.
type Difference struct {
	Kind string `json:"kind"`
	Text string `json:"text"`
}

// SideDifferences names the ways side b differs from side a in what they
// measure: the case set (case_digest, case_ids), the prompt template and
// the pass threshold of their first manifests (ReadSet has checked that
// each side agrees with itself), and every configuration both define
// with another view or other gates. The rounds, the actors and which
// configurations each ran may differ: those are not differences.
func SideDifferences(a, b *Combined) []Difference {
	var out []Difference
	ma, mb := a.Manifests[0], b.Manifests[0]
	diff := setDifferences(ma, mb)
	var cases []string
	for _, k := range diff {
		switch k {
		case "case_digest", "case_ids":
			cases = append(cases, k)
		case "prompt_version":
			out = append(out, Difference{ChangePrompt, describe(ma, mb, []string{k})})
		case "pass_threshold":
			out = append(out, Difference{ChangeThreshold, describe(ma, mb, []string{k})})
		}
	}
	if len(cases) > 0 {
		out = append([]Difference{{ChangeCases, describe(ma, mb, cases)}}, out...)
	}
	for _, cb := range b.Configs {
		for _, ca := range a.Configs {
			if ca.Name == cb.Name && !sameConfig(ca, cb) {
				out = append(out, Difference{ChangeConfig, fmt.Sprintf("configuration %s: %s in A; %s in B", ca.Name, settingsText(ca), settingsText(cb))})
			}
		}
	}
	return out
}

// Combine checks that the directories at paths, with their manifests and
// runs (each directory's Holder, in the same order), can be read as one
// comparison, and names their actors in it. It refuses directories whose
// SetSettings differ (CheckSettings) and a configuration name that two
// directories define differently (another view or other gates), each with
// a *SettingsError, and shards of one run's settings that are of series
// of different sizes (0/3 with 0/2), as merge does (CodeSettingsDiffer):
// their runs would count twice.
func Combine(paths []string, ms []*Manifest, runs []Holder) (*Combined, error) {
	if len(paths) != len(ms) || len(ms) != len(runs) {
		return nil, fmt.Errorf("combine: %d paths, %d manifests and %d run sets", len(paths), len(ms), len(runs))
	}
	if err := CheckSettings(paths, ms); err != nil {
		return nil, err
	}
	if err := checkShardSeries(paths, ms); err != nil {
		return nil, err
	}
	c := &Combined{Paths: paths, Manifests: ms, names: make([]map[string]string, len(paths)), seen: map[string]bool{}, actorOf: map[string]string{}}
	defined := map[string]int{}
	for i, m := range ms {
		for _, cfg := range m.Configurations() {
			j, ok := defined[cfg.Name]
			if !ok {
				defined[cfg.Name] = i
				c.Configs = append(c.Configs, cfg)
				continue
			}
			if other := configOf(ms[j], cfg.Name); !sameConfig(other, cfg) {
				return nil, &SettingsError{A: paths[j], B: paths[i], Config: cfg.Name, Detail: settingsText(other) + " against " + settingsText(cfg)}
			}
		}
	}
	// An actor is named with its directory when another directory holds
	// one of the same runs.
	clash := map[string]bool{}
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			for _, a := range ms[i].Actors {
				if slices.Contains(ms[j].Actors, a) && overlap(runs[i], runs[j], a) {
					clash[a] = true
				}
			}
		}
	}
	labels := DirLabels(paths)
	c.nameRepeats(ms, runs, labels)
	for i, m := range ms {
		c.names[i] = map[string]string{}
		for _, a := range m.Actors {
			name := a
			if clash[a] {
				name = a + "@" + labels[i]
			}
			c.names[i][a] = name
			c.actorOf[name] = a
			if !c.seen[name] {
				c.seen[name] = true
				c.Actors = append(c.Actors, name)
			}
		}
	}
	return c, nil
}

// nameRepeats sets the naming of the directories as one side of a
// comparison of two sides (OneName, Repeat). Directories of the same
// settings (Manifest.Key without the shard) are rounds, or shards, of one
// run: the same actor in them is one actor, and a directory that holds
// runs another of its settings holds too is a repeat of them (numbered
// from 0 in the order of paths, each directory in the first repeat none
// of whose directories holds one of its runs), so that neither run hides
// the other. An actor whose runs a directory of other settings holds too
// is named "actor@dir" in each settings' directories, dir the first of
// them: the two are not one actor, but the same actor measured otherwise.
func (c *Combined) nameRepeats(ms []*Manifest, runs []Holder, labels []string) {
	keys := make([]string, len(ms))
	for i, m := range ms {
		k := *m
		k.Shard = ""
		keys[i] = k.Key()
	}
	// held[settings][run id] are the repeats that hold the run: one pass
	// over the runs, however many directories there are.
	c.repeat = make([]int, len(ms))
	held := map[string]map[string][]int{}
	for i := range ms {
		if held[keys[i]] == nil {
			held[keys[i]] = map[string][]int{}
		}
		ids := runs[i].RunIDs()
		taken := map[int]bool{}
		for _, id := range ids {
			for _, k := range held[keys[i]][id] {
				taken[k] = true
			}
		}
		k := 0
		for taken[k] {
			k++
		}
		c.repeat[i] = k
		for _, id := range ids {
			held[keys[i]][id] = append(held[keys[i]][id], k)
		}
	}
	// group[i] is the first directory of directory i's settings, whose
	// label names them all when another's directory holds their runs.
	group := make([]int, len(ms))
	for i := range ms {
		group[i] = slices.Index(keys, keys[i])
	}
	clash := map[int]map[string]bool{}
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if keys[i] == keys[j] {
				continue
			}
			for _, a := range ms[i].Actors {
				if slices.Contains(ms[j].Actors, a) && overlap(runs[i], runs[j], a) {
					for _, g := range []int{group[i], group[j]} {
						if clash[g] == nil {
							clash[g] = map[string]bool{}
						}
						clash[g][a] = true
					}
				}
			}
		}
	}
	c.oneNames = make([]map[string]string, len(ms))
	seen := map[string]bool{}
	for i, m := range ms {
		c.oneNames[i] = map[string]string{}
		for _, a := range m.Actors {
			name := a
			if clash[group[i]][a] {
				name = a + "@" + labels[group[i]]
			}
			c.oneNames[i][a] = name
			c.actorOf[name] = a
			if !seen[name] {
				seen[name] = true
				c.OneActors = append(c.OneActors, name)
			}
		}
	}
}

// OneName is the name of actor a of directory dir when the directories
// are one side of a comparison (patchbench compare): the actor itself,
// unless a directory of other settings holds one of the same runs
// ("actor@dir", dir the first directory of dir's settings). Directories of the same settings that hold the same
// runs are told apart by Repeat instead.
func (c *Combined) OneName(dir int, a string) string {
	if n, ok := c.oneNames[dir][a]; ok {
		return n
	}
	return a
}

// Repeat is the repeat of directory dir among the directories of its
// settings, as one side of a comparison reads them: 0 for the first
// directory to hold a run, 1 for the next that holds the same runs
// again… Two sides pair a run of the k-th repeat of one with the same
// run of the k-th repeat of the other.
func (c *Combined) Repeat(dir int) int { return c.repeat[dir] }

// ActorOf is the actor a name of the comparison names (Name or OneName:
// "follower" for "follower@day2"), or name itself when it is none of
// them.
func (c *Combined) ActorOf(name string) string {
	if a, ok := c.actorOf[name]; ok {
		return a
	}
	return name
}

// Name is the name in the comparison of actor a of directory dir.
func (c *Combined) Name(dir int, a string) string {
	if n, ok := c.names[dir][a]; ok {
		return n
	}
	return a
}

// overlap reports whether a and b both hold a run of actor.
func overlap(a, b Holder, actor string) bool {
	for _, id := range a.RunIDs() {
		if p := strings.Split(id, "/"); len(p) == 4 && p[2] == actor && b.Has(id) {
			return true
		}
	}
	return false
}

// DirLabels are short names for run directories, in the order of paths:
// their base names, or their cleaned paths where two base names are the
// same (how Combine names an actor's directory, "actor@label").
func DirLabels(paths []string) []string {
	out := make([]string, len(paths))
	count := map[string]int{}
	for i, p := range paths {
		out[i] = filepath.Base(filepath.Clean(p))
		count[out[i]]++
	}
	for i, p := range paths {
		if count[out[i]] > 1 {
			out[i] = filepath.Clean(p)
		}
	}
	return out
}

// setDifferences names the SetSettings in which m differs from first.
func setDifferences(first, m *Manifest) []string {
	a, b := settingsOf(first), settingsOf(m)
	var out []string
	for _, k := range SetSettings {
		if a[k] != b[k] {
			out = append(out, k)
		}
	}
	return out
}

func settingsOf(m *Manifest) map[string]string {
	ids := slices.Clone(m.CaseIDs)
	sort.Strings(ids)
	b, _ := json.Marshal(ids)
	return map[string]string{
		"case_digest": m.CaseDigest, "case_ids": string(b), "prompt_version": m.PromptVersion,
		"pass_threshold": fmt.Sprint(m.PassThreshold),
	}
}

// describe says how the settings differ, in words.
func describe(a, b *Manifest, diff []string) string {
	var parts []string
	for _, k := range diff {
		switch k {
		case "case_digest":
			parts = append(parts, fmt.Sprintf("case set %s (%d cases) against %s (%d cases), or the same cases edited", a.CaseSet, len(a.CaseIDs), b.CaseSet, len(b.CaseIDs)))
		case "case_ids":
			var only []string
			for _, id := range a.CaseIDs {
				if !slices.Contains(b.CaseIDs, id) {
					only = append(only, id)
				}
			}
			var onlyB []string
			for _, id := range b.CaseIDs {
				if !slices.Contains(a.CaseIDs, id) {
					onlyB = append(onlyB, id)
				}
			}
			parts = append(parts, fmt.Sprintf("cases only in the first: %s; only in the second: %s", listOrNone(only), listOrNone(onlyB)))
		case "prompt_version":
			parts = append(parts, fmt.Sprintf("prompt template %s against %s", a.PromptVersion, b.PromptVersion))
		case "pass_threshold":
			parts = append(parts, fmt.Sprintf("pass threshold %v against %v", a.PassThreshold, b.PassThreshold))
		}
	}
	return strings.Join(parts, "; ")
}

func listOrNone(xs []string) string {
	if len(xs) == 0 {
		return "none"
	}
	if len(xs) > 5 {
		return strings.Join(xs[:5], ", ") + fmt.Sprintf(" and %d more", len(xs)-5)
	}
	return strings.Join(xs, ", ")
}

func configOf(m *Manifest, name string) *bench.Config {
	for _, c := range m.Configurations() {
		if c.Name == name {
			return c
		}
	}
	return nil
}

// sameConfig reports whether two configurations of one name agree on
// what they measure: the view and the gates (labels may differ).
func sameConfig(a, b *bench.Config) bool {
	if a == nil || b == nil {
		return a == b
	}
	if len(a.Gates) == 0 && len(b.Gates) == 0 && a.View == "" && b.View == "" {
		return true // manifests without details: names only
	}
	ga, gb := slices.Clone(a.Gates), slices.Clone(b.Gates)
	sort.Strings(ga)
	sort.Strings(gb)
	return a.View == b.View && slices.Equal(ga, gb)
}

// settingsText is what two directories must agree on of a configuration,
// as compare and merge name it when they differ: "view projected, gates
// scope,phase" ("none" for no configuration or no gate). browse's
// configText describes a configuration for a reader instead.
func settingsText(c *bench.Config) string {
	if c == nil {
		return "none"
	}
	g := "none"
	if len(c.Gates) > 0 {
		g = strings.Join(c.Gates, ",")
	}
	return fmt.Sprintf("view %s, gates %s", c.View, g)
}

// RunIDs lists the run ids the directory holds.
func (d *Dir) RunIDs() []string { return d.index.RunIDs() }

// Has reports whether the index holds run id.
func (ix *Index) Has(id string) bool {
	_, ok := ix.byID[id]
	return ok
}

// RunIDs lists the run ids the index holds, in the order of runs.jsonl.
func (ix *Index) RunIDs() []string {
	out := make([]string, len(ix.entries))
	for i, e := range ix.entries {
		out[i] = e.Head.RunID
	}
	return out
}

// Set is several run directories read as one comparison (Combine), with
// their records' heads streamed by EachHead.
type Set struct {
	*Combined
	Dirs []*Dir
}

// ReadSet reads each directory (Read) and combines them (Combine). A
// directory given twice is refused (CheckDistinct), and so is no
// directory.
func ReadSet(paths []string) (*Set, error) {
	if len(paths) == 0 {
		return nil, fmt.Errorf("no run directory given")
	}
	s := &Set{}
	var ms []*Manifest
	var hs []Holder
	if err := CheckDistinct(paths); err != nil {
		return nil, err
	}
	for _, p := range paths {
		d, err := Read(p)
		if err != nil {
			return nil, err
		}
		s.Dirs = append(s.Dirs, d)
		ms = append(ms, d.Manifest)
		hs = append(hs, d)
	}
	c, err := Combine(paths, ms, hs)
	if err != nil {
		return nil, err
	}
	s.Combined = c
	return s, nil
}

// CheckDistinct refuses a list of run directories that names one twice,
// under any of its names (absolute, relative, through a symlink: paths are
// compared resolved), with an error of code given_twice: its runs would
// count twice.
func CheckDistinct(paths []string) error {
	given := map[string]string{}
	for _, p := range paths {
		abs, err := filepath.Abs(p)
		if err != nil {
			return err
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real
		}
		if first, ok := given[abs]; ok {
			return errorf(CodeGivenTwice, "%s is given twice (as %s and %s)", abs, first, p)
		}
		given[abs] = p
	}
	return nil
}

// EachHead calls fn with the head of the last record of each run of each
// directory (Dir.EachHead), the directories in order and each in the
// order of its runs.jsonl: what a summary or a comparison counts, read
// from the directories' indexes. fn gets the directory's index and a copy
// of each head, its Actor renamed as the comparison names it
// (Combined.Name; RunID keeps the directory's own name, as show and the
// browser find it). Since Combine renames an actor whose runs two
// directories both hold, no two heads it passes share a key (case,
// configuration, actor, round). An error from fn stops it.
func (s *Set) EachHead(fn func(dir int, r *Record) error) error {
	for i, d := range s.Dirs {
		err := d.EachHead(func(r *Record) error {
			h := *r
			h.Actor = s.Name(i, r.Actor)
			return fn(i, &h)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// UnknownExpected lists the directories (their paths) whose manifest
// does not know how many runs they were to hold (ExpectedRunsUnknown: a
// manifest rebuilt by repair); ExpectedRuns counts none for them.
func (c *Combined) UnknownExpected() []string {
	var out []string
	for i, m := range c.Manifests {
		if m.ExpectedRunsUnknown {
			out = append(out, c.Paths[i])
		}
	}
	return out
}

// EachSideHead is EachHead for one side of a comparison of two sides
// (patchbench compare): fn gets a copy of each head with its actor named
// as OneName names it, and its directory's Repeat.
func (s *Set) EachSideHead(fn func(dir, repeat int, r *Record) error) error {
	for i, d := range s.Dirs {
		err := d.EachHead(func(r *Record) error {
			h := *r
			h.Actor = s.OneName(i, r.Actor)
			return fn(i, s.Repeat(i), &h)
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// MissingShards lists, for each directory merged without some shards of
// its series (Manifest.MissingShards), "DIR (without 1/3, 2/3)".
func (c *Combined) MissingShards() []string {
	var out []string
	for i, m := range c.Manifests {
		if m.MissingShards != "" {
			out = append(out, fmt.Sprintf("%s (without %s)", c.Paths[i], m.MissingShards))
		}
	}
	return out
}

// settingsKey is a manifest's Key without its shard: the same for every
// shard of one run.
func settingsKey(m *Manifest) string {
	k := *m
	k.Shard = ""
	return k.Key()
}

// checkShardSeries refuses, among the directories at paths (manifests
// ms), shards of one run's settings that are of series of different
// sizes (checkSizes); unsharded directories and shards of other settings
// are left alone.
func checkShardSeries(paths []string, ms []*Manifest) error {
	groups := map[string][]shardOf{}
	var order []string
	for i, m := range ms {
		if m.Shard == "" {
			continue
		}
		k := settingsKey(m)
		if groups[k] == nil {
			order = append(order, k)
		}
		groups[k] = append(groups[k], shardOf{paths[i], m.Shard})
	}
	for _, k := range order {
		if err := checkSizes(groups[k]); err != nil {
			return err
		}
	}
	return nil
}

// ShardsNotGiven lists, for each series of shards (run --shard i/n)
// among the directories of which some shard was not given, its
// directories and the shards missing: "s3-0, s3-1 (shards of a series of
// 3, without 2/3)". Their runs are neither read nor counted as expected,
// so a report over them is not complete. Merged directories say their
// own missing shards (MissingShards).
func (c *Combined) ShardsNotGiven() []string {
	type series struct {
		dirs  []string
		given map[string]bool
		n     int
	}
	groups := map[string]*series{}
	var order []string
	for i, m := range c.Manifests {
		if m.Shard == "" {
			continue
		}
		k := settingsKey(m)
		g := groups[k]
		if g == nil {
			g = &series{given: map[string]bool{}, n: seriesSize(m.Shard)}
			groups[k] = g
			order = append(order, k)
		}
		g.dirs = append(g.dirs, c.Paths[i])
		g.given[m.Shard] = true
	}
	var out []string
	for _, k := range order {
		g := groups[k]
		if missing := missingShards(g.given); missing != "" {
			out = append(out, fmt.Sprintf("%s (shards of a series of %d, without %s)", strings.Join(g.dirs, ", "), g.n, missing))
		}
	}
	return out
}

// ExpectedRuns is the number of runs the directories' settings call for.
func (s *Set) ExpectedRuns() int {
	n := 0
	for _, m := range s.Manifests {
		n += m.ExpectedRuns
	}
	return n
}
