package check

import (
	"context"
	"fmt"
	"slices"

	"github.com/patchbench/patchbench/bench"
)

// DefaultCheckScale is the size a case's grow list is checked at when
// validate is given no scale: large enough to generate records in every
// collection, small enough to cost little.
var DefaultCheckScale = bench.Scale{Bytes: 100_000}

// ValidateGrown checks each case that grows (bench.Case.Grow) at scale s
// with scale seed seed: the grown state can be made, and the grown case
// passes every rule Validate checks of one case (the reference still
// commits every step and leaks no canary, the generated secrets among
// them; the invariants hold on the grown initial state; the rubric holds
// on the reference's final state; every secret, generated ones too, is
// hidden from every step). Problems say the scale in their message.
// Cases without a grow list are not checked again (they do not grow).
func ValidateGrown(ctx context.Context, cases []*bench.Case, configs []*bench.Config, s bench.Scale, seed uint64) (bench.Problems, error) {
	var ps bench.Problems
	for _, c := range cases {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if len(c.Grow) == 0 {
			continue
		}
		if p := growSpec(c); p != nil {
			ps = append(ps, *p)
			continue
		}
		g, err := c.Grown(s, seed)
		if err != nil {
			ps = append(ps, bench.Problem{File: c.File, Line: c.Line(ptr("/grow")), Case: c.ID, Code: bench.ProblemGrow, Msg: err.Error()})
			continue
		}
		cps, err := validateCase(ctx, g, configs)
		if err != nil {
			return nil, err
		}
		for _, p := range cps {
			p.Msg = fmt.Sprintf("at scale %s: %s", s, p.Msg)
			ps = append(ps, p)
		}
	}
	return ps, nil
}

// growSpec checks a case's grow list without growing it: each secret
// member's kind is one of the closed list or the case's own.
func growSpec(c *bench.Case) *bench.Problem {
	for i, g := range c.Grow {
		for _, s := range g.Secrets {
			if !slices.Contains(bench.SecretKinds, s.Kind) && !slices.Contains(c.SecretKinds, s.Kind) {
				return &bench.Problem{File: c.File, Line: c.Line(ptr("/grow/%d", i)), Case: c.ID, Code: bench.ProblemGrow,
					Msg: fmt.Sprintf("grow %d: secret member %s: kind %q is not one of %v nor of the case's secret_kinds", i, s.Member, s.Kind, bench.SecretKinds)}
			}
		}
	}
	return nil
}
