// Package bench is the PatchBench case and configuration format and its
// loader (docs/cases.md documents the format): a
// Case (its state, secrets, workflow, steps with their compiled
// runtime.Contract, rubric Checks and reference proposals, pairs,
// injections and stress artifacts), parsed from YAML or strict JSON with
// lines for every problem (ParseCase, LoadCaseDir, the embedded
// suite), checked against the case JSON Schema, each Problem with a stable
// code (codes.go); a Config (what an actor sees, which gates run); a step
// contract file (LoadContractFile). A rubric Check says what its test means
// (Holds, Describe); InjectedProposal says what a case's injections ask
// for, as a proposal. RunReference runs a case with its reference
// proposals through the runtime's step engine (runtime.Session), the run
// validate, the stress test and the view and verify commands start from;
// Step.Submit and Step.GatesAlone submit one proposal to one step.
//
// The rules validate checks across a case set and the static analysis are
// in package check (above scoring, whose leak detector it uses); scoring
// judges rubrics and leaks.
package bench
