package rundir

import (
	"strings"
	"testing"
)

// TestLeftOutString: a LeftOut in words, one case and one run singular.
func TestLeftOutString(t *testing.T) {
	for _, c := range []struct {
		l    LeftOut
		want string
	}{
		{LeftOut{Path: "a", Cases: []string{"x", "y"}, Runs: 6}, "a: 2 cases left out (x, y), 6 runs"},
		{LeftOut{Path: "b", Cases: []string{"x"}, Runs: 1}, "b: 1 case left out (x), 1 run"},
		{LeftOut{Path: "c", Cases: []string{"x"}}, "c: 1 case left out (x), 0 runs"},
	} {
		if got := c.l.String(); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestCommonCases: the cases every manifest holds, in the first's order.
func TestCommonCases(t *testing.T) {
	ms := []*Manifest{{CaseIDs: []string{"c", "a", "b"}}, {CaseIDs: []string{"a", "c", "d"}}, {CaseIDs: []string{"c", "a"}}}
	if got := CommonCases(ms); len(got) != 2 || got[0] != "c" || got[1] != "a" {
		t.Errorf("%q, want [c a]", got)
	}
}

// TestNarrowToCommonNamesTheDirectoriesAtFault: directories no case of
// which is in all of them are refused naming the two that share none (not
// the first two), or, when every two share a case, every directory with
// its number of cases.
func TestNarrowToCommonNamesTheDirectoriesAtFault(t *testing.T) {
	m := func(ids ...string) *Manifest { return &Manifest{CaseIDs: ids, CaseDigest: strings.Join(ids, "")} }
	for _, c := range []struct {
		ms   []*Manifest
		want []string
	}{
		{[]*Manifest{m("a"), m("a", "b"), m("b")}, []string{"cA and cB cannot be read", "these two share none"}},
		{[]*Manifest{m("a", "b"), m("b", "c"), m("a", "c")}, []string{"cA, cAB and cB cannot be read", "every two share one", "cA holds 2, cAB holds 2, cB holds 2"}},
	} {
		_, err := NarrowToCommon([]string{"cA", "cAB", "cB"}, c.ms, nil)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%v: want %q", err, w)
			}
		}
	}
}
