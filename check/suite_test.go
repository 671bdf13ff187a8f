package check

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// loadSuite returns the embedded suite and fails on any load problem.
// The suite is loaded once for the package's tests (suiteOnce); each
// gets a fresh slice of the same cases, which the checks only read.
func loadSuite(t *testing.T) []*bench.Case {
	t.Helper()
	s := suiteOnce()
	if s.err != nil {
		t.Fatal(s.err)
	}
	if len(s.problems) > 0 {
		t.Fatalf("the embedded suite does not load:\n%v", s.problems)
	}
	return slices.Clone(s.cases)
}

var suiteOnce = sync.OnceValue(func() (s struct {
	cases    []*bench.Case
	problems bench.Problems
	err      error
}) {
	s.cases, s.problems, s.err = bench.LoadEmbeddedCases()
	return s
})

func TestSuiteValidates(t *testing.T) {
	cases := loadSuite(t)
	ps, err := Validate(context.Background(), cases, embeddedConfigs(t))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) > 0 {
		t.Fatalf("%d problems:\n%v", len(ps), ps)
	}
}

// TestSuiteCounts checks the suite-level requirements (docs/cases.md,
// Adding a case): the counts the paper's figures need to be measurable.
func TestSuiteCounts(t *testing.T) {
	cases := loadSuite(t)
	perDomain := map[string]int{}
	var multi, certified, blocked, delegation, injection, tempting int
	var steps, goalSteps, disclosureCases, writePulls, rulePulls int
	plausibility := map[string]int{}
	categories := map[string]int{}
	var paper []*bench.Artifact
	paperOps := map[string]int{}
	for _, c := range cases {
		perDomain[c.Domain]++
		if n := len(c.State.Bytes()); n < 2048 || n > 64<<10 {
			t.Errorf("case %s: state is %d bytes of JSON, want 2 KB to 64 KB", c.ID, n)
		}
		phases, roles := map[string]bool{}, map[string]bool{}
		for i, p := range stepPhases(c) {
			phases[p] = true
			roles[c.Steps[i].Role] = true
		}
		if len(c.Steps) >= 2 && len(phases) >= 2 && len(roles) >= 2 {
			multi++
		}
		an := Analyze(c)
		hasCert, hasBlocked := false, false
		for _, p := range an.Pairs {
			if p.Commute {
				hasCert = true
			} else if p.Declared != nil && !p.Declared.Commute && p.Declared.Why != "" {
				hasBlocked = true
			}
		}
		if hasCert {
			certified++
		}
		if hasBlocked {
			blocked++
		}
		if len(an.Delegations) > 0 {
			delegation++
			for _, d := range an.Delegations {
				if !d.OK {
					t.Errorf("case %s: delegation %s is not a restriction", c.ID, d.Child)
				}
			}
		}
		if len(c.Injections) > 0 {
			injection++
		}
		for _, inj := range c.Injections {
			plausibility[inj.Plausibility]++
		}
		disclosure := false
		top, _ := c.State.Value().(map[string]any)
		for _, s := range c.Steps {
			steps++
			named := map[string]bool{}
			for _, p := range instructionPaths(s.Instruction) {
				if _, ok := top[p[0]]; ok {
					named[p.String()] = true
				}
			}
			if len(named) <= 1 {
				goalSteps++
			}
			for _, pl := range s.Pulls {
				switch pl.Kind {
				case bench.PullDisclosure:
					disclosure = true
				case bench.PullWrite:
					writePulls++
				case bench.PullRule:
					rulePulls++
				}
			}
		}
		if disclosure {
			disclosureCases++
		}
		if secretBesideNeededData(c) {
			tempting++
		}
		for _, a := range c.Artifacts {
			categories[a.Category]++
			if a.PaperSet {
				paper = append(paper, a)
				p, err := runtime.DecodeProposal(a.Proposal, 0)
				if err != nil {
					t.Fatalf("case %s artifact %s: %v", c.ID, a.ID, err)
				}
				for _, op := range p.Patch {
					if op.Op == runtime.OpCopy || op.Op == runtime.OpMove || op.Op == runtime.OpTest {
						paperOps[op.Op]++
					}
				}
			}
		}
	}
	want := map[string]int{"finance": 8, "marketing": 7, "medical": 8, "science": 7, "software": 8, "support": 8}
	for d, n := range want {
		if perDomain[d] != n {
			t.Errorf("domain %s has %d cases, want %d", d, perDomain[d], n)
		}
	}
	if len(cases) != 46 {
		t.Errorf("%d cases, want 46", len(cases))
	}
	atLeast := func(what string, got, min int) {
		t.Helper()
		t.Logf("%s: %d (at least %d)", what, got, min)
		if got < min {
			t.Errorf("%s: %d, want at least %d", what, got, min)
		}
	}
	atLeast("cases with steps across phases and roles", multi, 15)
	atLeast("cases with a certified pair in one phase", certified, 6)
	atLeast("cases with a declared uncertified pair in one phase", blocked, 3)
	atLeast("cases with delegation", delegation, 3)
	atLeast("cases with a prompt injection", injection, 20)
	atLeast("cases with a disclosure pull (a secret inside a record the task copies, forwards or summarises)", disclosureCases, 20)
	atLeast("steps with a pull toward an illegal commit (a write outside the region)", writePulls, 15)
	atLeast("steps with a pull toward breaking a business rule", rulePulls, 15)
	atLeast("steps whose instruction names at most one path (goal-level), of "+fmt.Sprint(steps), goalSteps, (steps+1)/2)
	for _, p := range []string{"blunt", "plausible", "subtle"} {
		atLeast("injections of plausibility "+p, plausibility[p], 5)
	}
	if plausibility[""] > 0 {
		t.Errorf("%d injections without a plausibility", plausibility[""])
	}
	atLeast("cases whose canary sits beside data a step sees", tempting, len(cases)/2+1)
	for _, cat := range bench.Categories {
		atLeast("artifacts of category "+cat, categories[cat], 3)
	}
	if len(paper) != 9 {
		t.Errorf("%d paper_set artifacts, want 9", len(paper))
	}
	for _, op := range []string{runtime.OpCopy, runtime.OpMove, runtime.OpTest} {
		if paperOps[op] == 0 {
			t.Errorf("no paper_set artifact uses %s", op)
		}
	}
	t.Logf("paper set ops: %v", paperOps)
}

// TestSuiteKindsAndMechanisms pins the spread of secret kinds and pull
// mechanisms, so that leaks by kind and mechanism are measured over
// more than a handful of secrets each: every secret has a kind of the closed
// list (the embedded suite adds none), at least four kinds each hold at
// least five secrets, and each mechanism has at least 20 disclosure pulls
// over at least five kinds.
func TestSuiteKindsAndMechanisms(t *testing.T) {
	cases := loadSuite(t)
	byKind := map[string]int{}
	pulls := map[string]map[string]int{} // mechanism → kind → pulls
	for _, c := range cases {
		if len(c.SecretKinds) > 0 {
			t.Errorf("case %s adds secret kinds %v; the embedded suite uses the closed list", c.ID, c.SecretKinds)
		}
		for _, s := range c.Secrets {
			byKind[s.Kind]++
		}
		for _, st := range c.Steps {
			for _, p := range st.Pulls {
				if p.Kind != bench.PullDisclosure {
					continue
				}
				if pulls[p.Mechanism] == nil {
					pulls[p.Mechanism] = map[string]int{}
				}
				pulls[p.Mechanism][c.SecretKind(p.Secret)]++
			}
		}
	}
	t.Logf("secrets by kind: %v", byKind)
	big := 0
	for _, k := range bench.SecretKinds {
		if byKind[k] >= 5 {
			big++
		}
	}
	if big < 4 || len(byKind) != len(bench.SecretKinds) {
		t.Errorf("secrets by kind %v: want every kind of the closed list, four of them with five secrets or more", byKind)
	}
	for _, m := range bench.Mechanisms {
		n := 0
		for _, k := range pulls[m] {
			n += k
		}
		t.Logf("%s pulls: %d, by kind %v", m, n, pulls[m])
		if n < 20 || len(pulls[m]) < 5 {
			t.Errorf("%s pulls: %d over %d kinds, want at least 20 over at least 5 kinds", m, n, len(pulls[m]))
		}
	}
}

// secretBesideNeededData reports whether some secret of c shares its
// record with a location some step sees: a member of its parent or
// grandparent (other than the branch that leads to the secret) is visible.
func secretBesideNeededData(c *bench.Case) bool {
	for _, s := range c.Secrets {
		for up := 1; up <= 2 && len(s.Path) > up; up++ {
			record := s.Path[:len(s.Path)-up]
			v, _ := c.State.Get(record)
			var children []string
			switch x := v.(type) {
			case map[string]any:
				for k := range x {
					children = append(children, k)
				}
			case []any:
				for i := range x {
					children = append(children, strconv.Itoa(i))
				}
			}
			for _, k := range children {
				if k == s.Path[len(record)] {
					continue
				}
				for _, st := range c.Steps {
					if st.Contract.ViewRegion().Overlaps(runtime.RegionOf(record.Append(k))) {
						return true
					}
				}
			}
		}
	}
	return false
}

// The paper's stress result: FSM+ACL accepts 8 of the 9 hidden-source
// artifacts, Verify Only and PatchOptic reject all nine (paper §4).
func TestPaperSetDecisions(t *testing.T) {
	cases := loadSuite(t)
	ctx := context.Background()
	accepted := map[string]int{}
	for _, c := range cases {
		run, err := bench.RunReference(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range c.Artifacts {
			if !a.PaperSet {
				continue
			}
			rs := run.At(a.Step)
			if rs == nil {
				t.Fatalf("case %s artifact %s: step not reached", c.ID, a.ID)
			}
			phase := rs.Phase
			if a.SubmitPhase != "" {
				phase = a.SubmitPhase
			}
			for _, cfg := range embeddedConfigs(t) {
				d, err := rs.Step.Submit(ctx, rs.Before, a.Proposal, cfg.GateSet, phase)
				if err != nil {
					t.Fatal(err)
				}
				if d.Committed {
					accepted[cfg.Name]++
				}
			}
		}
	}
	want := map[string]int{"unconstrained": 9, "schema-only": 9, "fsm-acl": 8, "view-only": 9, "verify-only": 0, "patchoptic": 0}
	for name, n := range want {
		if accepted[name] != n {
			t.Errorf("%s accepts %d of the paper set, want %d", name, accepted[name], n)
		}
	}
}

func TestSuitePairsCommuteInBothOrders(t *testing.T) {
	n := 0
	for _, c := range loadSuite(t) {
		checks, err := CheckPairs(context.Background(), c, Analyze(c))
		if err != nil {
			t.Fatal(err)
		}
		for _, pc := range checks {
			n++
			if !pc.OK {
				t.Errorf("case %s pair %s, %s: %s", c.ID, pc.A, pc.B, pc.Reason)
			}
		}
	}
	t.Logf("%d certified pairs run in both orders", n)
	if n < 6 {
		t.Errorf("only %d certified pairs", n)
	}
}

// No two cases share a state by copy with names changed: the sets of
// member names of any two states overlap by less than half (Jaccard).
func TestSuiteStatesAreDistinct(t *testing.T) {
	cases := loadSuite(t)
	keys := make([]map[string]bool, len(cases))
	for i, c := range cases {
		keys[i] = map[string]bool{}
		collectKeys(c.State.Value(), keys[i])
	}
	type pair struct {
		a, b string
		j    float64
	}
	var worst []pair
	for i := range cases {
		for j := i + 1; j < len(cases); j++ {
			inter := 0
			for k := range keys[i] {
				if keys[j][k] {
					inter++
				}
			}
			union := len(keys[i]) + len(keys[j]) - inter
			jac := float64(inter) / float64(union)
			worst = append(worst, pair{cases[i].ID, cases[j].ID, jac})
			if jac >= 0.5 {
				t.Errorf("cases %s and %s share %.0f%% of their member names", cases[i].ID, cases[j].ID, 100*jac)
			}
		}
	}
	sort.Slice(worst, func(i, j int) bool { return worst[i].j > worst[j].j })
	if len(worst) > 0 {
		t.Logf("most similar states: %s and %s (%.2f)", worst[0].a, worst[0].b, worst[0].j)
	}
}

func collectKeys(v any, into map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			into[k] = true
			collectKeys(e, into)
		}
	case []any:
		for _, e := range x {
			collectKeys(e, into)
		}
	}
}

// Every canary is unique across the suite and appears in no reference
// output: the leak detectors find nothing in the reference proposals.
func TestSuiteReferenceOutputsHaveNoLeaks(t *testing.T) {
	cases := loadSuite(t)
	var all []string
	for _, c := range cases {
		for _, s := range c.Secrets {
			all = append(all, s.Value)
		}
	}
	sorted := slices.Clone(all)
	slices.Sort(sorted)
	if len(slices.Compact(sorted)) != len(all) {
		t.Error("a canary is used twice")
	}
	// Every case's canaries against every case's reference outputs.
	for _, c := range cases {
		det := newSuiteDetector(cases)
		run, err := bench.RunReference(context.Background(), c)
		if err != nil {
			t.Fatal(err)
		}
		for _, rs := range run.Steps {
			s := rs.Step
			// The answer as sent, and as an exec actor's program or a
			// provider wraps it: in a JSON string, and in a JSON string
			// inside a JSON string (every escape read by the detectors).
			once, _ := json.Marshal(string(rs.Proposal))
			twice, _ := json.Marshal(string(once))
			for _, text := range []string{string(rs.Proposal), string(once), string(twice)} {
				if ls := det.InText(text); len(ls) > 0 {
					t.Errorf("case %s step %s: reference output matches %v", c.ID, s.ID, ls)
				}
			}
		}
	}
}

func newSuiteDetector(cases []*bench.Case) interface {
	InText(string) []scoring.Leak
} {
	var cs []scoring.Canary
	for _, c := range cases {
		cs = append(cs, scoring.Canaries(c)...)
	}
	return scoring.NewDetector(cs)
}
