package check

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// TestInvariantOracleReproduced shows the fault the warning is about:
// under PatchOptic, propose-trades of
// fin-portfolio-rebalance cannot see /compliance_review/approved, yet the
// invariants gate passes a proposal that empties the trades when it is
// false and rejects it (invariant_violated, shown to the actor beside the
// output schema's rejection) when it is true: one bit of hidden data per
// proposal.
func TestInvariantOracleReproduced(t *testing.T) {
	c := suiteCase(t, "fin-portfolio-rebalance")
	s := c.Step("propose-trades")
	if s.Contract.ViewRegion().Visible(runtime.MustPointer("/compliance_review/approved")) {
		t.Fatal("the step sees /compliance_review/approved; the case changed")
	}
	probe := []byte(`{"patch": [{"op": "replace", "path": "/proposal/trades", "value": []}], "note": "probe"}`)
	codes := map[bool]string{}
	for _, approved := range []bool{false, true} {
		var v map[string]any
		if err := json.Unmarshal(c.State.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		v["compliance_review"].(map[string]any)["approved"] = approved
		b, _ := json.Marshal(v)
		doc, err := runtime.ParseDocument(b)
		if err != nil {
			t.Fatal(err)
		}
		d, err := s.Contract.Verify(context.Background(), doc, probe, runtime.VerifyOptions{Gates: bench.AllGates, Phase: "proposal"})
		if err != nil {
			t.Fatal(err)
		}
		// The schema and invariants gates run together, and the actor
		// is shown every failed gate's code.
		for _, g := range d.Gates {
			if g.Gate == runtime.GateInvariants {
				codes[approved] = "passed"
				if !g.Passed {
					codes[approved] = g.Code
				}
			}
		}
	}
	if codes[false] != "passed" || codes[true] != runtime.CodeInvariantViolated {
		t.Fatalf("the invariants gate's result on the probe does not follow the hidden value: %v", codes)
	}
}

func suiteCase(t *testing.T, id string) *bench.Case {
	t.Helper()
	for _, c := range loadSuite(t) {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

// TestHiddenInvariantReadsSuite checks the warnings on the embedded suite:
// the two known oracles (an approval flag of fin-portfolio-rebalance and the
// sign-off of fin-quarter-close-recon) are flagged, rules whose hidden part
// no patch of the step can change are not, and warnings never count as
// problems.
func TestHiddenInvariantReadsSuite(t *testing.T) {
	cases := loadSuite(t)
	ws, err := Warnings(context.Background(), cases, embeddedConfigs(t))
	if err != nil {
		t.Fatal(err)
	}
	type key struct{ c, step, inv string }
	got := map[key]string{}
	for _, w := range ws {
		if w.Code == bench.WarningInvariantFalseBefore {
			continue // TestInvariantsFalseBefore
		}
		if !w.Warning || w.Code != bench.WarningInvariantReadsHidden || w.Line == 0 {
			t.Errorf("not a located warning with its code: %+v", w)
		}
		if !strings.Contains(w.String(), "warning (invariant-reads-hidden): ") {
			t.Errorf("printed as %q", w.String())
		}
		var inv, step string
		for _, i := range suiteCaseOf(cases, w.Case).Invariants {
			if strings.Contains(w.Msg, "invariant "+strconvQuote(i.Name)) {
				inv = i.Name
			}
		}
		for _, s := range suiteCaseOf(cases, w.Case).Steps {
			if strings.Contains(w.Msg, "hidden from step "+s.ID+",") {
				step = s.ID
			}
		}
		got[key{w.Case, step, inv}] = w.Msg
	}
	t.Logf("%d warnings on the embedded suite", len(ws))
	for _, k := range []struct {
		key
		reads string
	}{
		{key{"fin-portfolio-rebalance", "propose-trades", "an approval needs at least one trade"}, "/compliance_review/approved"},
		{key{"fin-quarter-close-recon", "rec-ar", "sign-off needs both reconciliations reconciled"}, "/signoff/approved"},
		{key{"fin-quarter-close-recon", "rec-cash", "sign-off needs both reconciliations reconciled"}, "/signoff/approved"},
	} {
		msg, ok := got[k.key]
		if !ok {
			t.Errorf("no warning for %v", k.key)
			continue
		}
		if !strings.Contains(msg, k.reads) || !strings.Contains(msg, "in PatchOptic") {
			t.Errorf("%v: %s", k.key, msg)
		}
	}
	for _, k := range []key{
		// The signoff step sees everything the rule reads.
		{"fin-quarter-close-recon", "signoff", "sign-off needs both reconciliations reconciled"},
		// The ledger balances are hidden from rec-ar but no patch of
		// it writes them.
		{"fin-quarter-close-recon", "rec-ar", "general-ledger balances are not edited during the close"},
		// A ramp of one flag reads only that flag (the map is split
		// by member).
		{"sw-flag-rollout", "ramp-checkout", "a ramp moves a flag by at most 25 points"},
		// The hidden GPU half of a conjunction the CPU step cannot
		// change.
		{"sci-hpc-allocation", "allocate-cpu", "no project is granted more than it requested"},
		{"sci-hpc-allocation", "allocate-cpu", "service accounts are never touched"},
	} {
		if msg, ok := got[k]; ok {
			t.Errorf("unexpected warning for %v: %s", k, msg)
		}
	}
	ps, err := Validate(context.Background(), cases, embeddedConfigs(t))
	if err != nil || len(ps) > 0 {
		t.Fatalf("warnings must not be problems: %v %v", err, ps)
	}
}

func suiteCaseOf(cases []*bench.Case, id string) *bench.Case {
	for _, c := range cases {
		if c.ID == id {
			return c
		}
	}
	return &bench.Case{}
}

func strconvQuote(s string) string { b, _ := json.Marshal(s); return string(b) }

// TestOracleReads checks the analysis on single rules: which hidden
// locations a conjunct that the step can make fail reads.
func TestOracleReads(t *testing.T) {
	state := map[string]any{
		"review":  map[string]any{"approved": false, "by": ""},
		"work":    map[string]any{"items": []any{"a"}, "done": false},
		"flags":   map[string]any{"a": map[string]any{"pct": 1}, "b": map[string]any{"pct": 2}},
		"results": []any{map[string]any{"restricted": true, "status": "held"}, map[string]any{"restricted": false, "status": "held"}},
		"log":     []any{},
	}
	cases := []struct {
		name, rule       string
		include, exclude []string
		write            []string
		want             []string
	}{
		{name: "the issue's shape: hidden approval beside a written list",
			rule: "!post.review.approved || size(post.work.items) > 0", include: []string{"/work"}, write: []string{"/work/items"},
			want: []string{"/review/approved"}},
		{name: "nothing hidden", rule: "!post.review.approved || size(post.work.items) > 0", include: []string{"/work", "/review"}, write: []string{"/work/items"}},
		{name: "hidden but not writable", rule: "post.review == pre.review", include: []string{"/work"}, write: []string{"/work/items"}},
		{name: "a conjunction splits", rule: "post.review == pre.review && size(post.work.items) > 0", include: []string{"/work"}, write: []string{"/work/items"}},
		{name: "an excluded member", rule: "post.review.by != post.work.done", include: []string{"/work", "/review"}, exclude: []string{"/review/by"}, write: []string{"/work/done"},
			want: []string{"/review/by"}},
		{name: "a hidden value written blind", rule: "post.review.by == pre.review.by", include: []string{"/work"}, write: []string{"/review/by"},
			want: []string{"/review/by"}},
		{name: "all() over a map splits by member", rule: "post.flags.all(f, post.flags[f].pct - pre.flags[f].pct <= 25)",
			include: []string{"/flags/a"}, write: []string{"/flags/a/pct"}},
		{name: "exists() does not split", rule: "post.flags.exists(f, post.flags[f].pct > 1)",
			include: []string{"/flags/a"}, write: []string{"/flags/a/pct"}, want: []string{"/flags/*/pct", "the size of /flags"}},
		{name: "all() over an array splits by element", rule: "post.results.all(r, !r.restricted || r.status != 'released')",
			include: []string{"/results/1"}, write: []string{"/results/1/status"}},
		{name: "an element written blind", rule: "post.results.all(r, !r.restricted || r.status != 'released')",
			include: []string{"/results/1"}, write: []string{"/results/*/status"}, want: []string{"/results/0/restricted", "/results/0/status"}},
		{name: "an array's size shows through its positions", rule: "size(post.results) == size(pre.results) || post.work.done",
			include: []string{"/results/1", "/work"}, write: []string{"/work/done"}},
		{name: "an append-only log read blind", rule: "size(post.log) >= size(pre.log)", include: []string{"/work"}, write: []string{"/log/-"},
			want: []string{"the size of /log"}},
		{name: "has() of a hidden member", rule: "!has(post.review.by) || post.work.done", include: []string{"/work"}, write: []string{"/work/done"},
			want: []string{"whether /review/by exists"}},
		{name: "a computed index", rule: "post.results[post.work.items.size()].status == 'x' || post.work.done", include: []string{"/work"}, write: []string{"/work/done"},
			want: []string{"/results/*/status"}},
		{name: "phase is no location", rule: "phase != 'x' || post.work.done", include: []string{"/work"}, write: []string{"/work/done"}},
		{name: "the whole state", rule: "post == pre || post.work.done", include: []string{"/work"}, write: []string{"/work/done"},
			want: []string{"the whole state"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			conj, err := runtime.InvariantConjunctReads(tc.rule, state)
			if err != nil {
				t.Fatal(err)
			}
			view := runtime.ViewRegion{Include: runtime.MustRegion(tc.include...), Exclude: runtime.MustRegion(tc.exclude...)}
			got := oracleReads(conj, view, runtime.MustRegion(tc.write...), state)
			slices.Sort(got)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}
	if _, err := runtime.InvariantConjunctReads("post.(", state); err == nil {
		t.Error("a rule that does not parse gave no error")
	}
}

// TestHiddenInvariantReadsConfigs checks that the warning follows the
// configurations: none without a projected one that enforces invariants,
// and, where no scope or ACL gate bounds the writes, a step may write
// anywhere.
func TestHiddenInvariantReadsConfigs(t *testing.T) {
	c := suiteCase(t, "fin-quarter-close-recon")
	cfg := func(name, view string, gates ...string) *bench.Config {
		gs, err := runtime.GatesFromList(gates)
		if err != nil {
			t.Fatal(err)
		}
		return &bench.Config{Name: name, Label: name, View: view, Gates: gates, GateSet: gs}
	}
	count := func(configs ...*bench.Config) int {
		ws, err := HiddenInvariantReads(context.Background(), c, configs)
		if err != nil {
			t.Fatal(err)
		}
		return len(ws)
	}
	if n := count(cfg("full", bench.ViewFull, "scope", "invariants"), cfg("view", bench.ViewProjected)); n != 0 {
		t.Errorf("%d warnings without a projected configuration that enforces invariants", n)
	}
	scoped := count(cfg("po", bench.ViewProjected, "scope", "phase", "schema", "invariants"))
	unscoped := count(cfg("open", bench.ViewProjected, "invariants"))
	if scoped == 0 || unscoped <= scoped {
		t.Errorf("warnings: %d with the scope gate, %d without; want more without", scoped, unscoped)
	}
}
