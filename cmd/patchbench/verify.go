package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/runtime"
)

const verifyExamples = `  # Check a proposal with PatchOptic's gates (scope, phase, schema, invariants):
  patchbench verify --state state.json --contract step.yaml --patch proposal.json --phase review

  # Only parse and apply, as the Unconstrained configuration does:
  patchbench verify --state state.json --contract step.yaml --patch proposal.json --gates none

  # Machine-readable decision, with the state after it:
  patchbench verify --state state.json --contract step.yaml --patch proposal.json --format json

  # A proposal for a suite case's step, on the state and in the phase the
  # reference run reaches before it:
  patchbench verify --case sup-address-change --patch proposal.json

  # The proposal from standard input; exit status 0 committed, 1 rejected:
  echo '[{"op":"replace","path":"/status","value":"done"}]' | \
    patchbench verify --state state.json --contract step.yaml --patch - --gates scope
`

// verifyOutput is the JSON form of a decision.
type verifyOutput struct {
	Committed bool                 `json:"committed"`
	Decisions []runtime.GateResult `json:"decisions"`
	State     *runtime.Document    `json:"state"`
}

// runVerify checks one proposal against one step contract and state. Exit
// 0 committed, 1 rejected (a malformed proposal is a rejection), 2 bad
// usage or input.
func runVerify(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("verify", "patchbench verify (--state FILE --contract FILE | --case ID [--step ID]) --patch FILE [--phase NAME] [--gates LIST] [--format text|json] [--out FILE] [--explain]", verifyExamples, stdout, stderr)
	statePath := fs.String("state", "", "the state, a JSON `file` (- for standard input)")
	contractPath := fs.String("contract", "", "the step contract, a YAML or JSON `file`")
	patchPath := fs.String("patch", "", "the proposal `file`: a JSON Patch array or {\"patch\": [...], \"note\": \"...\"} (- for standard input)")
	phase := fs.String("phase", "", "the workflow's current `phase`, checked against the contract's phases")
	gates := fs.String("gates", runtime.DefaultGates.String(), "comma `list` of scope,acl,phase,schema,invariants, or none (parse and apply always run)")
	format := fs.String("format", "text", "output `format`: text or json")
	outPath := fs.String("out", "", "write the state after a commit to this `file` (compact JSON; nothing is written on a rejection)")
	caseID := fs.String("case", "", "take the contract, the state and the phase from this suite case's `id` (--state and --phase override)")
	stepID := fs.String("step", "", "the case's step `id` (needed when the case has several)")
	casesDir := fs.String("cases", "", "the case set `dir` for --case (default: the embedded suite)")
	sf := addScaleFlags(fs)
	explain := fs.Bool("explain", false, "also print, on standard error, the schema library's and CEL's own error text for the policy author (it may quote hidden values: never show it to an actor)")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	if err := fs.required("patch"); err != nil {
		return fs.usageError("%v", err)
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format %q: want text or json", *format)
	}
	if *statePath == "-" && *patchPath == "-" {
		return fs.usageError("--state and --patch cannot both be standard input")
	}
	gs, err := runtime.ParseGates(*gates)
	if err != nil {
		return fs.usageError("--gates: %v", err)
	}
	contract, state, casePhase, err := contractAndState(ctx, fs, *caseID, *stepID, *casesDir, *contractPath, *statePath, sf)
	if err != nil {
		return fs.exit(err)
	}
	if *phase == "" {
		*phase = casePhase
	}
	if gs.Phase && len(contract.Phases()) > 0 && *phase == "" {
		return failf(stderr, "verify", "--phase is required: %s lets the step commit only in %q", *contractPath, contract.Phases())
	}
	proposal, err := readInput(*patchPath, contract.Limits().MaxProposalBytes)
	if err != nil {
		return failf(stderr, "verify", "%v", err)
	}
	d, err := contract.Verify(ctx, state, proposal, runtime.VerifyOptions{Gates: gs, Phase: *phase})
	if err != nil {
		return failf(stderr, "verify", "%v", err)
	}
	if d.Committed && *outPath != "" {
		if err := os.WriteFile(*outPath, append(d.State.Bytes(), '\n'), 0o644); err != nil {
			return failf(stderr, "verify", "%v", err)
		}
	}
	if *format == "json" {
		enc := json.NewEncoder(stdout)
		enc.SetEscapeHTML(false)
		enc.SetIndent("", "  ")
		if err := enc.Encode(verifyOutput{Committed: d.Committed, Decisions: d.Gates, State: d.State}); err != nil {
			return failf(stderr, "verify", "%v", err)
		}
	} else {
		printDecision(stdout, d)
	}
	if *explain {
		for _, g := range d.Gates {
			if g.Detail != "" {
				fmt.Fprintf(stderr, "detail (%s, %s): %s\n", g.Gate, g.Code, g.Detail)
			}
		}
	}
	if !d.Committed {
		return exitNegative
	}
	return exitOK
}

// printDecision prints the verdict and a table of the gates that ran.
func printDecision(w io.Writer, d *runtime.Decision) {
	if d.Committed {
		fmt.Fprintln(w, "committed")
	} else {
		fmt.Fprintln(w, "rejected")
	}
	rows := make([][]string, 0, len(d.Gates))
	for _, g := range d.Gates {
		result, ptr := "pass", g.Pointer
		if !g.Passed {
			result = "FAIL"
			if ptr == "" {
				ptr = "-"
			}
		}
		rows = append(rows, []string{g.Gate, result, g.Code, ptr, g.Message})
	}
	report.WriteColumns(w, []string{"GATE", "RESULT", "CODE", "POINTER", "MESSAGE"}, rows)
}
