package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"github.com/patchbench/patchbench/runtime"
)

// refOp is one element of a reference patch: a literal operation (raw),
// or a rule that generates operations from the state before the step.
type refOp struct {
	raw  json.RawMessage
	rule *runtime.Rule
}

// reference reads a step's reference patch: each element is a literal
// JSON Patch operation, or {rule: EXPR}, a CEL expression compiled now
// (a problem names the case, the step and the element's index when it
// does not compile). A patch without rules is encoded once, as the
// proposal's bytes.
func (l *loader) reference(at string, s *Step, patch json.RawMessage) {
	var elems []json.RawMessage
	if err := json.Unmarshal(patch, &elems); err != nil {
		l.add(ProblemProposal, at+"/reference/patch", "step %s: reference: %v", s.ID, err)
		return
	}
	hasRule := false
	ops := make([]refOp, len(elems))
	for k, e := range elems {
		ops[k].raw = e
		var probe map[string]json.RawMessage
		if json.Unmarshal(e, &probe) != nil {
			continue
		}
		src, ok := probe["rule"]
		if !ok {
			continue
		}
		hasRule = true
		var expr string
		if len(probe) != 1 || json.Unmarshal(src, &expr) != nil || expr == "" {
			l.add(ProblemReferenceRule, fmt.Sprintf("%s/reference/patch/%d", at, k), "step %s: reference patch[%d]: a rule element is {rule: EXPR}, one non-empty string and nothing else", s.ID, k)
			continue
		}
		r, err := runtime.CompileRule(expr)
		if err != nil {
			l.add(ProblemReferenceRule, fmt.Sprintf("%s/reference/patch/%d/rule", at, k), "step %s: reference patch[%d]: rule does not compile: %v", s.ID, k, err)
			continue
		}
		ops[k].rule = r
	}
	if hasRule {
		s.refOps = ops
		return
	}
	ref, err := json.Marshal(map[string]any{"patch": patch, "note": s.ReferenceNote})
	if err != nil {
		l.add(ProblemProposal, at+"/reference", "step %s: reference: %v", s.ID, err)
	}
	s.reference = ref
}

// HasReferenceRules reports whether the step's reference patch declares
// rules, so that its reference proposal depends on the state before the
// step.
func (s *Step) HasReferenceRules() bool { return s.refOps != nil }

// ReferenceAt is the step's reference proposal, {"patch": [...], "note":
// "..."} as JSON bytes ready for Contract.Verify, on the state before the
// step (the full state, not a view). A patch without rules is its literal
// bytes, whatever before is (it may then be nil). Each rule element
// {rule: EXPR} is evaluated with pre bound to before and must give a list
// of JSON Patch operations (objects with an op string), spliced in its
// place among the literal operations. The error names the step and the
// element: the rule could not be evaluated, or gave something else.
func (s *Step) ReferenceAt(before *runtime.Document) ([]byte, error) {
	if s.refOps == nil {
		return s.reference, nil
	}
	if before == nil {
		return nil, fmt.Errorf("step %s: the reference patch declares rules, and no state was given to evaluate them on", s.ID)
	}
	pre := before.Value()
	var patch []any
	for k, op := range s.refOps {
		if op.rule == nil {
			patch = append(patch, op.raw)
			continue
		}
		gen, err := generatedOps(op.rule, pre)
		if err != nil {
			return nil, fmt.Errorf("step %s: reference patch[%d]: rule: %w", s.ID, k, err)
		}
		patch = append(patch, gen...)
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(map[string]any{"patch": patch, "note": s.ReferenceNote}); err != nil {
		return nil, fmt.Errorf("step %s: reference: %w", s.ID, err)
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// generatedOps evaluates a reference rule on pre: a list of operations.
func generatedOps(r *runtime.Rule, pre any) ([]any, error) {
	v, err := r.Eval(context.Background(), pre, nil)
	if err != nil {
		return nil, err
	}
	list, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("it gave %s, not a list of JSON Patch operations", runtime.ATypeName(v))
	}
	for i, e := range list {
		m, ok := e.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("element %d is %s, not a JSON Patch operation (an object with an op)", i, runtime.ATypeName(e))
		}
		if _, ok := m["op"].(string); !ok {
			return nil, fmt.Errorf("element %d has no op string; a JSON Patch operation names its op", i)
		}
	}
	return list, nil
}
