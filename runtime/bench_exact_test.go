package runtime

import (
	"context"
	"fmt"
	"strings"
	"testing"
)

// BenchmarkInvariantNumbers is the cost of presenting numbers to CEL: a
// rule that compares two lists of 1000 amounts (money, 2 decimals, the
// suite's kind of number) element by element, so every number is read.
// Compare before and after a change with benchstat.
func BenchmarkInvariantNumbers(b *testing.B) {
	var parts []string
	for i := range 1000 {
		parts = append(parts, fmt.Sprintf("%d.%02d", 1000+i*7, i%100))
	}
	state := `{"items":[` + strings.Join(parts, ",") + `],"note":""}`
	c := MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{"/note"},
		Invariants: []InvariantSpec{{Name: "items kept", Rule: `post.items == pre.items`}}})
	doc, err := ParseDocument([]byte(state))
	if err != nil {
		b.Fatal(err)
	}
	patch := []byte(`[{"op":"replace","path":"/note","value":"x"}]`)
	b.ReportAllocs()
	for b.Loop() {
		d, err := c.Verify(context.Background(), doc, patch, VerifyOptions{Gates: GateSet{Invariants: true}})
		if err != nil || !d.Committed {
			b.Fatal(err, d.Rejection())
		}
	}
}
