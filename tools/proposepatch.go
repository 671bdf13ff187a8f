package tools

import (
	"context"
	"fmt"
	"strings"
)

// ProposePatch is the tool propose_patch: an RFC 6902 JSON Patch and a
// note, which the step's gates decide (Step.Propose) as they decide an
// answer of the json protocol. The result says whether it was committed,
// and if not which gates rejected it and why, and how many proposals are
// left. A commit ends the step.
var ProposePatch = Def{
	Spec: Spec{
		Name: "propose_patch",
		Description: "Propose an RFC 6902 JSON Patch for this step, with a short note for the log. A verifier checks it: " +
			"the result says whether it was committed, and if not, which gates rejected it and why. A commit ends the step.",
		Parameters: []byte(`{"type":"object","properties":{"patch":{"type":"array","items":{"type":"object"},"description":"RFC 6902 operations"},"note":{"type":"string","description":"one or two sentences for the log"}},"required":["patch","note"],"additionalProperties":false}`),
	},
	Usage: "propose_patch(patch, note) proposes an RFC 6902 JSON Patch with a note of one or two sentences for the log",
	Call:  proposePatch,
}

func proposePatch(ctx context.Context, s Step, args string) (Result, error) {
	if !isObject(args) {
		return Result{Text: `the arguments must be a JSON object {"patch": [...], "note": "..."}`, Code: CodeMalformed}, nil
	}
	v, err := s.Propose(ctx, args)
	if err != nil {
		return Result{}, err
	}
	if v.Committed {
		return Result{Text: "committed: the step is done"}, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "rejected (proposal %d of %d):", v.N, v.Of)
	for _, r := range v.Rejections {
		b.WriteString("\n- " + r)
	}
	if left := v.Of - v.N; left <= 0 {
		b.WriteString("\nNo proposal is left; the step is over.")
	} else {
		fmt.Fprintf(&b, "\nPropose a corrected patch (%d left).", left)
	}
	return Result{Text: b.String()}, nil
}
