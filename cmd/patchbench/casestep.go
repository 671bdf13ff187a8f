package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

// caseStep is a step of a case, with the state and phase the reference
// run reaches before it: what "--case ID --step ID" stands for in view and
// verify.
type caseStep struct {
	step  *bench.Step
	state *runtime.Document
	phase string
}

// scaleFlags are --scale and --scale-seed of view and verify: the case's
// state grown to a size (bench.Case.Grown).
type scaleFlags struct {
	text *string
	seed *int64
}

// addScaleFlags defines --scale and --scale-seed on fs.
func addScaleFlags(fs *flagSet) scaleFlags {
	return scaleFlags{
		text: fs.String("scale", "", "with --case, the case's state grown to this `size` (1MB, 10MB, ...; default 1x, the state as written)"),
		seed: fs.Int64("scale-seed", bench.DefaultScaleSeed, "with --scale, the `seed` the grown state is generated from, at least 1"),
	}
}

// scale is the scale the flags name (1x when none).
func (f scaleFlags) scale() (bench.Scale, error) {
	if *f.seed < 1 {
		return bench.Scale{}, flagCausef("scale-seed", "must be at least 1, not %d", *f.seed)
	}
	if *f.text == "" {
		return bench.Scale{}, nil
	}
	s, err := bench.ParseScale(*f.text)
	if err != nil {
		return s, flagCausef("scale", "%v", err)
	}
	return s, nil
}

// loadCaseStep finds a case's step in a case set (the embedded suite when
// dir is empty), grows its state to scale (with seed), and runs the
// case's reference proposals up to it. With no step id, a case of one
// step is taken.
func loadCaseStep(ctx context.Context, dir, caseID, stepID string, scale bench.Scale, seed uint64) (*caseStep, error) {
	cases, problems, err := loadCases(dir)
	if err != nil {
		return nil, err
	}
	var c *bench.Case
	for _, x := range cases {
		if x.ID == caseID {
			c = x
		}
	}
	if c == nil {
		if len(problems) > 0 {
			return nil, fmt.Errorf("no case %q loaded from %s; problems:\n%v", caseID, displayDir(dir), problems)
		}
		return nil, fmt.Errorf("no case %q in %s (patchbench cases lists them)", caseID, displayDir(dir))
	}
	var ids []string
	for _, s := range c.Steps {
		ids = append(ids, s.ID)
	}
	if stepID == "" {
		if len(c.Steps) != 1 {
			return nil, fmt.Errorf("case %s has %d steps; choose one with --step (%s)", c.ID, len(c.Steps), strings.Join(ids, ", "))
		}
		stepID = c.Steps[0].ID
	}
	if c.Step(stepID) == nil {
		return nil, fmt.Errorf("case %s has no step %q (steps: %s)", c.ID, stepID, strings.Join(ids, ", "))
	}
	if c, err = c.Grown(scale, seed); err != nil {
		return nil, err
	}
	run, err := bench.RunReference(ctx, c)
	if err != nil {
		return nil, err
	}
	rs := run.At(stepID)
	if rs == nil {
		return nil, fmt.Errorf("case %s: the reference run stops before step %s (patchbench validate says why)", c.ID, stepID)
	}
	return &caseStep{step: rs.Step, state: rs.Before, phase: rs.Phase}, nil
}

// contractAndState resolves the step contract and the state of view and
// verify: from --contract and --state files, or from a suite case's step
// (--case, --step), where --state, when given, replaces the state the
// reference run reaches. It returns the phase of the case's step ("" for
// files).
func contractAndState(ctx context.Context, fs *flagSet, caseID, stepID, casesDir, contractPath, statePath string, sf scaleFlags) (*runtime.Contract, *runtime.Document, string, error) {
	scale, err := sf.scale()
	if err != nil {
		return nil, nil, "", err
	}
	if caseID == "" {
		if stepID != "" {
			return nil, nil, "", usagef("--step needs --case")
		}
		if !scale.IsBase() {
			return nil, nil, "", usagef("--scale needs --case")
		}
		if err := fs.required("state", "contract"); err != nil {
			return nil, nil, "", usagef("%v (or --case ID)", err)
		}
		contract, err := loadContract(contractPath)
		if err != nil {
			return nil, nil, "", err
		}
		state, err := loadState(statePath, contract.Limits().MaxDocumentBytes)
		if err != nil {
			return nil, nil, "", err
		}
		return contract, state, "", nil
	}
	if contractPath != "" {
		return nil, nil, "", usagef("--contract and --case are alternatives")
	}
	cs, err := loadCaseStep(ctx, casesDir, caseID, stepID, scale, uint64(*sf.seed))
	if err != nil {
		return nil, nil, "", err
	}
	state := cs.state
	if statePath != "" {
		if state, err = loadState(statePath, cs.step.Contract.Limits().MaxDocumentBytes); err != nil {
			return nil, nil, "", err
		}
	}
	return cs.step.Contract, state, cs.phase, nil
}
