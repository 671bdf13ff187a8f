package rundir

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
)

// LeftOut is what reading directories over their common cases
// (NarrowToCommon) left out of one of them: its path, the cases it holds
// that another directory does not, and how many of its recorded runs are
// of those cases.
type LeftOut struct {
	Path  string
	Cases []string
	Runs  int
}

// String says it in words: "DIR: 2 cases left out (a, b), 6 runs"
// ("1 case", "1 run").
func (l LeftOut) String() string {
	count := func(n int, one string) string {
		if n == 1 {
			return "1 " + one
		}
		return fmt.Sprintf("%d %ss", n, one)
	}
	return fmt.Sprintf("%s: %s left out (%s), %s", l.Path, count(len(l.Cases), "case"), listOrNone(l.Cases), count(l.Runs, "run"))
}

// CommonCases is the case ids every manifest of ms holds, in the first
// manifest's order.
func CommonCases(ms []*Manifest) []string {
	var out []string
	for _, id := range ms[0].CaseIDs {
		if !slices.ContainsFunc(ms[1:], func(m *Manifest) bool { return !slices.Contains(m.CaseIDs, id) }) {
			out = append(out, id)
		}
	}
	return out
}

// NarrowToCommon makes the manifests ms of the directories at paths, and
// their indexes ixs (same order), into those of the cases all of them
// hold, so that CheckSettings and Combine read them as one comparison:
// each index drops the runs of the other cases (Index.Keep), and each
// manifest, replaced by a narrowed copy, names only the common cases
// (case_ids, cases), its expected runs scaled to them (unknown when they
// do not divide evenly), and a case digest shared by every directory.
// The manifests record one digest over each directory's whole case set,
// not one per case, so a shared case edited between the directories
// cannot be told apart; directories with the same case ids must still
// have the same digest. Directories that all hold the same case ids are
// left as they are. It returns what it left out of each directory that
// lost something; the error is a *SettingsError when no case is shared
// or two directories of the same case ids differ in their digest.
func NarrowToCommon(paths []string, ms []*Manifest, ixs []*Index) ([]LeftOut, error) {
	if len(ms) < 2 {
		return nil, nil
	}
	if !slices.ContainsFunc(ms[1:], func(m *Manifest) bool { return !slices.Equal(sortedIDs(ms[0]), sortedIDs(m)) }) {
		return nil, nil
	}
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if slices.Equal(sortedIDs(ms[i]), sortedIDs(ms[j])) && ms[i].CaseDigest != ms[j].CaseDigest {
				return nil, &SettingsError{A: paths[i], B: paths[j], Settings: []string{"case_digest"}, Detail: describe(ms[i], ms[j], []string{"case_digest"})}
			}
		}
	}
	common := CommonCases(ms)
	if len(common) == 0 {
		return nil, noCommonCase(paths, ms)
	}
	sum := sha256.Sum256([]byte("common\x00" + strings.Join(common, "\x00")))
	digest := "common-" + hex.EncodeToString(sum[:])
	var out []LeftOut
	for i, m := range ms {
		n := *m
		n.CaseDigest = digest
		lost := LeftOut{Path: paths[i]}
		for _, id := range m.CaseIDs {
			if !slices.Contains(common, id) {
				lost.Cases = append(lost.Cases, id)
			}
		}
		if len(lost.Cases) > 0 {
			n.CaseIDs = slices.Clone(common)
			n.Cases = len(common)
			if len(m.CaseIDs) > 0 && m.ExpectedRuns%len(m.CaseIDs) == 0 {
				n.ExpectedRuns = m.ExpectedRuns / len(m.CaseIDs) * len(common)
			} else {
				n.ExpectedRuns, n.ExpectedRunsUnknown = 0, true
			}
			keep := map[string]bool{}
			for _, id := range common {
				keep[id] = true
			}
			lost.Runs = ixs[i].Keep(func(r *Record) bool { return keep[r.Case] })
			out = append(out, lost)
		}
		ms[i] = &n
	}
	return out, nil
}

// noCommonCase is the *SettingsError of directories (paths, with their
// manifests ms) no case of which is in all of them: it names the first
// two that share no case, or, when every two share one, all of them with
// the number of cases each holds.
func noCommonCase(paths []string, ms []*Manifest) error {
	for i := range ms {
		for j := i + 1; j < len(ms); j++ {
			if len(CommonCases([]*Manifest{ms[i], ms[j]})) == 0 {
				return &SettingsError{A: paths[i], B: paths[j], Settings: []string{"case_ids"},
					Detail: "no case is in every directory: these two share none; " + describe(ms[i], ms[j], []string{"case_ids"})}
			}
		}
	}
	held := make([]string, len(ms))
	for i, m := range ms {
		held[i] = fmt.Sprintf("%s holds %d", paths[i], len(m.CaseIDs))
	}
	last := len(paths) - 1
	return &SettingsError{A: strings.Join(paths[:last], ", "), B: paths[last], Settings: []string{"case_ids"},
		Detail: "no case is in every directory, though every two share one; " + strings.Join(held, ", ")}
}

func sortedIDs(m *Manifest) []string {
	ids := slices.Clone(m.CaseIDs)
	slices.Sort(ids)
	return ids
}

// Keep keeps the runs whose head keep accepts, in their order, and
// returns how many it dropped.
func (ix *Index) Keep(keep func(*Record) bool) int {
	kept := ix.entries[:0]
	for _, e := range ix.entries {
		if keep(e.Head) {
			kept = append(kept, e)
		}
	}
	dropped := len(ix.entries) - len(kept)
	clear(ix.entries[len(kept):])
	ix.entries = kept
	ix.byID = make(map[string]int, len(kept))
	for i, e := range kept {
		ix.byID[e.Head.RunID] = i
	}
	return dropped
}

// ReadSetCommon is ReadSet over the cases every directory holds
// (NarrowToCommon): it returns the set and what was left out of each
// directory.
func ReadSetCommon(paths []string) (*Set, []LeftOut, error) {
	sets, lost, err := ReadSetsCommon([][]string{paths})
	if err != nil {
		return nil, nil, err
	}
	return sets[0], lost, nil
}

// ReadSetsCommon reads each group of directories as one set (ReadSet),
// every group over the cases all the directories of all the groups hold
// (NarrowToCommon over them together), so that the sets, the two sides
// of a comparison, hold the same cases. It returns the sets, in the
// order of groups, and what was left out of each directory (once for a
// directory in several groups). A group of no directory is refused.
func ReadSetsCommon(groups [][]string) ([]*Set, []LeftOut, error) {
	for _, g := range groups {
		if len(g) == 0 {
			return nil, nil, fmt.Errorf("no run directory given")
		}
	}
	var paths []string
	var ms []*Manifest
	var ixs []*Index
	sets := make([]*Set, len(groups))
	for gi, g := range groups {
		if err := CheckDistinct(g); err != nil {
			return nil, nil, err
		}
		sets[gi] = &Set{}
		for _, p := range g {
			d, err := Read(p)
			if err != nil {
				return nil, nil, err
			}
			sets[gi].Dirs = append(sets[gi].Dirs, d)
			paths = append(paths, p)
			ms = append(ms, d.Manifest)
			ixs = append(ixs, d.index)
		}
	}
	lost, err := NarrowToCommon(paths, ms, ixs)
	if err != nil {
		return nil, nil, err
	}
	i := 0
	for gi, g := range groups {
		s := sets[gi]
		hs := make([]Holder, len(s.Dirs))
		for j, d := range s.Dirs {
			d.Manifest = ms[i]
			hs[j] = d
			i++
		}
		c, err := Combine(g, ms[i-len(g):i], hs)
		if err != nil {
			return nil, nil, err
		}
		s.Combined = c
	}
	var once []LeftOut
	for _, l := range lost {
		if !slices.ContainsFunc(once, func(o LeftOut) bool { return o.Path == l.Path }) {
			once = append(once, l)
		}
	}
	return sets, once, nil
}
