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
`

// runView prints O_s(x): the projection of a state under a contract's
// view, as indented JSON with sorted keys. Hidden array elements are null.
func runView(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("view", "patchbench view --state FILE --contract FILE", viewExamples, stdout, stderr)
	statePath := fs.String("state", "", "the state, a JSON `file` (- for standard input)")
	contractPath := fs.String("contract", "", "the step contract, a YAML or JSON `file`")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	if err := fs.required("state", "contract"); err != nil {
		return fs.usageError("%v", err)
	}
	contract, err := loadContract(*contractPath)
	if err != nil {
		return failf(stderr, "view", "%v", err)
	}
	state, err := loadState(*statePath, contract.Limits().MaxDocumentBytes)
	if err != nil {
		return failf(stderr, "view", "%v", err)
	}
	out, err := runtime.EncodeIndent(contract.View(state), "  ")
	if err != nil {
		return failf(stderr, "view", "%v", err)
	}
	fmt.Fprintf(stdout, "%s\n", out)
	return exitOK
}
