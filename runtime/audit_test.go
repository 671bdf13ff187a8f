package runtime

import (
	"context"
	"slices"
	"testing"
)

// The audit checks the full contract beside the enforcing gates without
// changing what commits: a committed proposal it rejects is an illegal
// commit.
func TestAudit(t *testing.T) {
	ctx := context.Background()
	c := gateContract(t, nil)
	state := mustDoc(t, gateState)
	tests := []struct {
		name      string
		patch     string
		gates     GateSet
		phase     string
		committed bool
		illegal   string // the audit's first failed gate and code, "" for none
	}{
		{"legal, ungated", `[{"op":"replace","path":"/report/total","value":3}]`, GateSet{}, "review", true, ""},
		{"hidden source, ungated", `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, GateSet{}, "review", true, "scope " + CodeSourceOutside},
		{"hidden source, acl", `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, GateSet{ACL: true}, "review", true, "scope " + CodeSourceOutside},
		{"hidden source, scope", `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, GateSet{Scope: true}, "review", false, ""},
		{"wrong phase, schema only", `[{"op":"replace","path":"/report/total","value":3}]`, GateSet{Schema: true}, "done", true, "phase " + CodePhaseNotAllowed},
		{"invariant, ungated", `[{"op":"replace","path":"/report/total","value":-1}]`, GateSet{}, "review", true, "schema " + CodeSchemaViolation},
		{"does not apply", `[{"op":"remove","path":"/nope"}]`, GateSet{}, "review", false, ""},
		{"malformed", `[{"op":"nope"}]`, GateSet{}, "review", false, ""},
		{"full contract", `[{"op":"replace","path":"/report/total","value":3}]`, DefaultGates, "review", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			plain, err := c.Verify(ctx, state, []byte(tt.patch), VerifyOptions{Gates: tt.gates, Phase: tt.phase})
			if err != nil {
				t.Fatal(err)
			}
			d, err := c.Verify(ctx, state, []byte(tt.patch), VerifyOptions{Gates: tt.gates, Phase: tt.phase, Audit: DefaultGates})
			if err != nil {
				t.Fatal(err)
			}
			if plain.Audit != nil {
				t.Errorf("an audit ran without being asked: %+v", plain.Audit)
			}
			if d.Committed != tt.committed || plain.Committed != d.Committed || !slices.Equal(plain.Gates, d.Gates) {
				t.Fatalf("committed %v (without the audit %v), want %v; gates %+v", d.Committed, plain.Committed, tt.committed, d.Gates)
			}
			if len(d.Audit) == 0 || d.Audit[0].Gate != GateParse {
				t.Fatalf("audit %+v", d.Audit)
			}
			got := ""
			if g := d.IllegalCommit(); g != nil {
				got = g.Gate + " " + g.Code
			}
			if got != tt.illegal {
				t.Errorf("illegal commit %q, want %q (audit %+v)", got, tt.illegal, d.Audit)
			}
			if tt.gates == DefaultGates && !slices.Equal(d.Audit, d.Gates) {
				t.Errorf("an audit of the enforced set differs: %+v / %+v", d.Audit, d.Gates)
			}
		})
	}
}
