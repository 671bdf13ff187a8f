package runtime

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// gateSpec is gateContract's spec, built afresh (its own maps), with mod
// applied.
func gateSpec(t testing.TB, mod func(*ContractSpec)) ContractSpec {
	t.Helper()
	var spec ContractSpec
	gateContract(t, func(s *ContractSpec) {
		if mod != nil {
			mod(s)
		}
		spec = *s
	})
	return spec
}

var compilerPatches = []string{
	`[{"op":"replace","path":"/report/total","value":3}]`,
	`[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`,
	`[{"op":"replace","path":"/report/total","value":-1}]`,
	`[{"op":"replace","path":"/report/summary","value":"9 starts with a digit"}]`,
	`[{"op":"replace","path":"/accounts/0/id","value":"acc-9"}]`,
	`[{"op":"remove","path":"/accounts"}]`,
	`not json`,
}

// decisions verifies every compilerPatches patch on gateState with c.
func decisions(t testing.TB, c *Contract) []string {
	t.Helper()
	var out []string
	for _, p := range compilerPatches {
		d, err := c.Verify(context.Background(), mustDoc(t, gateState), []byte(p), VerifyOptions{Gates: DefaultGates, Phase: "review"})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprint(d.Committed, d.Gates))
	}
	return out
}

func TestCompilerSharesEqualSchemasAndRules(t *testing.T) {
	var cc Compiler
	narrow := func(s *ContractSpec) { s.Write = []string{"/report/total"} }
	a, err := cc.Compile(gateSpec(t, nil))
	if err != nil {
		t.Fatal(err)
	}
	b, err := cc.Compile(gateSpec(t, narrow)) // equal schema and rules, decoded again
	if err != nil {
		t.Fatal(err)
	}
	if a.schema == nil || a.schema != b.schema || a.incremental != b.incremental {
		t.Fatal("two contracts with equal schemas compiled by one Compiler do not share the compiled schema")
	}
	for i := range a.invariants {
		if a.invariants[i].prg != b.invariants[i].prg {
			t.Fatalf("invariant %d compiled twice", i)
		}
	}
	if a.outputs[0].schema != b.outputs[0].schema {
		t.Fatal("equal output schemas compiled twice")
	}
	if a.write.String() == b.write.String() {
		t.Fatal("the contracts' own regions must stay their own")
	}

	// A different schema, rule or cost limit is compiled anew.
	other, err := cc.Compile(gateSpec(t, func(s *ContractSpec) {
		s.Schema.(map[string]any)["minProperties"] = 1
		s.Invariants[1].Rule = `post.report.total >= 1`
		s.Limits.MaxInvariantCost = 5000
	}))
	if err != nil {
		t.Fatal(err)
	}
	if other.schema == a.schema {
		t.Fatal("a different schema was given the shared one")
	}
	if other.invariants[0].prg == a.invariants[0].prg {
		t.Fatal("a rule with another cost limit was given the shared program")
	}
	if other.invariants[1].prg == a.invariants[1].prg {
		t.Fatal("a different rule was given the shared program")
	}

	// Shared or not, the decisions are Compile's.
	for _, tc := range []struct {
		name   string
		mod    func(*ContractSpec)
		shared *Contract
	}{{"first", nil, a}, {"narrow", narrow, b}} {
		fresh, err := Compile(gateSpec(t, tc.mod))
		if err != nil {
			t.Fatal(err)
		}
		got, want := decisions(t, tc.shared), decisions(t, fresh)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: decisions with the shared compilation\n%s\nwant\n%s", tc.name, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}

func TestCompilerErrorsNameTheirOwnField(t *testing.T) {
	var cc Compiler
	bad := `{"type": 5}`
	for _, tc := range []struct {
		mod   func(*ContractSpec)
		field string
	}{
		{func(s *ContractSpec) { s.Schema = mustJSON(t, bad) }, "schema"},
		{func(s *ContractSpec) { s.OutputSchema = map[string]any{"/report/total": mustJSON(t, bad)} }, `output_schema["/report/total"]`},
		{func(s *ContractSpec) { s.Invariants = []InvariantSpec{{Name: "x", Rule: "post.("}} }, "invariants[0].rule"},
		{func(s *ContractSpec) {
			s.Invariants = []InvariantSpec{{Name: "y", Rule: "true"}, {Name: "x", Rule: "post.("}}
		}, "invariants[1].rule"},
	} {
		spec := ContractSpec{View: ViewSpec{Include: []string{""}}}
		tc.mod(&spec)
		_, err := cc.Compile(spec)
		ce, ok := err.(*ContractError)
		if !ok || ce.Field != tc.field || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("error %v; want a ContractError on %s", err, tc.field)
		}
	}
	// The same documents, valid elsewhere, still compile.
	if _, err := cc.Compile(gateSpec(t, nil)); err != nil {
		t.Fatal(err)
	}
}

func TestCompilerConcurrent(t *testing.T) {
	want := strings.Join(decisions(t, gateContract(t, nil)), "\n")
	var cc Compiler
	const n = 8
	got := make([]*Contract, n)
	var wg sync.WaitGroup
	for g := range n {
		wg.Go(func() {
			c, err := cc.Compile(gateSpec(t, nil))
			if err != nil {
				t.Error(err)
				return
			}
			got[g] = c
			if d := strings.Join(decisions(t, c), "\n"); d != want {
				t.Errorf("goroutine %d: decisions\n%s\nwant\n%s", g, d, want)
			}
		})
	}
	wg.Wait()
	for _, c := range got[1:] {
		if c == nil || got[0] == nil || c.schema != got[0].schema {
			t.Fatal("contracts compiled at once by one Compiler do not share one schema")
		}
	}
}
