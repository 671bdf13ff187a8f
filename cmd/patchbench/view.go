package main

import (
	"context"
	"fmt"
	"io"

	"github.com/patchbench/patchbench/runtime"
)

const viewExamples = `  # What the actor of a step sees of the state (JSON, keys sorted):
  patchbench view --state state.json --contract step.yaml

  # The same from standard input:
  cat state.json | patchbench view --state - --contract step.yaml

  # What the actor of a suite case's step sees, on the state the reference
  # run reaches before that step:
  patchbench view --case fin-payment-run-approval --step approve-run
`

// runView prints O_s(x): the projection of a state under a contract's
// view, as indented JSON with sorted keys. Hidden array elements are null.
func runView(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("view", "patchbench view (--state FILE --contract FILE | --case ID [--step ID] [--state FILE])", viewExamples, stdout, stderr)
	statePath := fs.String("state", "", "the state, a JSON `file` (- for standard input)")
	contractPath := fs.String("contract", "", "the step contract, a YAML or JSON `file`")
	caseID := fs.String("case", "", "take the contract (and, without --state, the state) from this suite case's `id`")
	stepID := fs.String("step", "", "the case's step `id` (needed when the case has several)")
	casesDir := fs.String("cases", "", "the case set `dir` for --case (default: the embedded suite)")
	sf := addScaleFlags(fs)
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	contract, state, _, err := contractAndState(ctx, fs, *caseID, *stepID, *casesDir, *contractPath, *statePath, sf)
	if err != nil {
		return fs.exit(err)
	}
	out, err := runtime.EncodeIndent(contract.View(state), "  ")
	if err != nil {
		return failf(stderr, "view", "%v", err)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}
