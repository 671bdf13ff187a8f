package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/patchbench/patchbench/runtime"
	"go.yaml.in/yaml/v3"
)

// ParseCase parses, checks against the case JSON Schema and compiles one
// case file (YAML, or strict JSON when name ends in .json). name is used in
// problems. On failure it returns nil and every problem found, each with
// the file, its code and, where known, the line; the JSON Schema is checked
// first and its violations stop the rest. Cross-case and run-time rules are
// checked by package bench/check.
func ParseCase(name string, b []byte) (*Case, Problems) {
	root, v, p := decodeCaseFile(name, b)
	if p != nil {
		return nil, Problems{*p}
	}
	if ps := schemaProblems(name, root, v); len(ps) > 0 {
		return nil, ps
	}
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, Problems{{File: name, Code: ProblemSyntax, Msg: err.Error()}}
	}
	var cf caseFile
	jd := json.NewDecoder(bytes.NewReader(raw))
	jd.DisallowUnknownFields()
	jd.UseNumber()
	if err := jd.Decode(&cf); err != nil {
		return nil, Problems{{File: name, Code: ProblemSchema, Msg: err.Error()}}
	}
	c := &Case{
		ID: cf.ID, Domain: cf.Domain, Title: cf.Title, Description: cf.Description, Now: cf.Now,
		File: name, Digest: fmt.Sprintf("%x", sha256.Sum256(b)), Workflow: cf.Workflow, Secrets: cf.Secrets, Invariants: cf.Invariants,
		Pairs: cf.Pairs, Injections: cf.Injections, root: root,
	}
	l := &loader{c: c}
	if !l.values(&cf) {
		return nil, l.ps
	}
	l.steps(cf.Steps)
	l.artifacts(cf.Artifacts)
	if len(l.ps) > 0 {
		return nil, l.ps
	}
	return c, nil
}

// decodeCaseFile decodes a case file into its YAML node tree (for line
// numbers) and its JSON value: a .json file as strict JSON (YAML accepts
// more, and reads some JSON differently; its node tree, when it can be
// had, only gives lines), any other as one YAML document. The problem is
// nil when the file decodes.
func decodeCaseFile(name string, b []byte) (*yaml.Node, any, *Problem) {
	fail := func(code string, line int, format string, args ...any) (*yaml.Node, any, *Problem) {
		return nil, nil, &Problem{File: name, Line: line, Code: code, Msg: fmt.Sprintf(format, args...)}
	}
	var root yaml.Node
	if strings.EqualFold(path.Ext(name), ".json") {
		if bytes.HasPrefix(b, []byte("\xef\xbb\xbf")) {
			return fail(ProblemSyntax, 1, "the file starts with a byte-order mark; JSON is UTF-8 without one (RFC 8259 §8.1)")
		}
		doc, err := runtime.ParseDocument(b)
		if err != nil {
			var se *runtime.SyntaxError
			if errors.As(err, &se) {
				return fail(ProblemSyntax, se.Line, "%s", se.Msg)
			}
			return fail(ProblemSyntax, 0, "%v", err)
		}
		if yaml.Unmarshal(b, &root) != nil {
			root = yaml.Node{}
		}
		return &root, doc.Value(), nil
	}
	if !utf8.Valid(b) {
		return fail(ProblemSyntax, 1+bytes.Count(b[:invalidUTF8At(b)], []byte{'\n'}), "invalid UTF-8")
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if err == io.EOF {
			return fail(ProblemSyntax, 0, "empty case file")
		}
		fe := yamlError(name, err, nil).(*FileError)
		return fail(ProblemSyntax, fe.Line, "%v", fe.Err)
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case err == io.EOF:
	case err != nil:
		fe := yamlError(name, err, nil).(*FileError)
		return fail(ProblemDocuments, fe.Line, "a second YAML document, which does not parse: %v; a case file holds one case", fe.Err)
	default:
		return fail(ProblemDocuments, extra.Line, "more than one YAML document; a case file holds one case")
	}
	v, err := YAMLToJSON(&root)
	if err != nil {
		fe := yamlError(name, err, nil).(*FileError)
		return fail(ProblemSyntax, fe.Line, "%v", fe.Err)
	}
	return &root, v, nil
}

// loader compiles the typed case file into a Case, collecting problems.
type loader struct {
	c  *Case
	ps Problems
}

// add records a problem with its code at the line of at (a JSON Pointer
// into the case file).
func (l *loader) add(code, at string, format string, args ...any) {
	l.ps = append(l.ps, Problem{File: l.c.File, Line: l.c.Line(runtime.MustPointer(at)), Case: l.c.ID, Code: code, Msg: fmt.Sprintf(format, args...)})
}

// values decodes the case's JSON values: the state (bounded by
// MaxStateBytes), the schema and now. It returns false when the state
// cannot be had, which stops the rest.
func (l *loader) values(cf *caseFile) bool {
	c := l.c
	if len(cf.State) > MaxStateBytes {
		l.add(ProblemStateSize, "/state", "the state is %d KB of JSON; a case's state is at most %d KB (a few KB is typical)", len(cf.State)>>10, MaxStateBytes>>10)
		return false
	}
	var err error
	if c.State, err = runtime.ParseDocument(cf.State); err != nil {
		// The position would be in the loader's re-encoded JSON, not in
		// the file: keep the reason only.
		var se *runtime.SyntaxError
		if errors.As(err, &se) {
			err = errors.New(se.Msg)
		}
		l.add(ProblemJSONValue, "/state", "state: %v", err)
		return false
	}
	if len(cf.Schema) > 0 {
		if c.Schema, err = decodeValue(cf.Schema); err != nil {
			l.add(ProblemJSONValue, "/schema", "schema: %v", err)
		}
	}
	if err := checkRFC3339(cf.Now); err != nil {
		l.add(ProblemNow, "/now", "now %q is not an RFC 3339 date and time (2025-10-01T09:30:00Z): %v", cf.Now, err)
	}
	return true
}

// steps compiles each step: its contract (the case's schema and
// invariants with the step's regions, phases and output schemas), its
// rubric checks (ids unique in the case) and its reference proposal.
func (l *loader) steps(sfs []stepFile) {
	c := l.c
	checkIDs := map[string]string{} // check id → step id
	caseLevel := map[string]bool{}
	for i, sf := range sfs {
		at := fmt.Sprintf("/steps/%d", i)
		s := &Step{
			ID: sf.ID, Role: sf.Role, Phases: sf.Phases, AdvanceTo: sf.AdvanceTo, Parent: sf.Parent,
			Instruction: sf.Instruction, Rubric: sf.Rubric, ReferenceNote: sf.Reference.Note, Index: i,
			BlindWrite: sf.BlindWrite, Pulls: sf.Pulls,
		}
		s.Spec = runtime.ContractSpec{
			View: sf.View, Write: sf.Write, Source: sf.Source, Phases: sf.Phases,
			Schema: c.Schema, Invariants: c.Invariants,
		}
		if len(sf.OutputSchema) > 0 {
			s.Spec.OutputSchema = map[string]any{}
			for k, rm := range sf.OutputSchema {
				var err error
				if s.Spec.OutputSchema[k], err = decodeValue(rm); err != nil {
					l.add(ProblemJSONValue, at+"/output_schema", "step %s: output_schema %q: %v", s.ID, k, err)
				}
			}
		}
		l.contract(at, s, caseLevel)
		for j, chk := range s.Rubric {
			if prev, dup := checkIDs[chk.ID]; dup {
				l.add(ProblemCheckID, fmt.Sprintf("%s/rubric/%d/id", at, j), "step %s: rubric check id %q is already used by a check of step %s; check ids are unique in a case", s.ID, chk.ID, prev)
			}
			checkIDs[chk.ID] = s.ID
			if err := chk.compile(); err != nil {
				l.add(ProblemRubric, fmt.Sprintf("%s/rubric/%d", at, j), "step %s: rubric[%d]: %v", s.ID, j, err)
			}
			s.Rubric[j] = chk
		}
		ref, err := json.Marshal(map[string]any{"patch": sf.Reference.Patch, "note": sf.Reference.Note})
		if err != nil {
			l.add(ProblemProposal, at+"/reference", "step %s: reference: %v", s.ID, err)
		}
		s.Reference = ref
		c.Steps = append(c.Steps, s)
	}
}

// contract compiles the step's contract. The case's schema and invariants
// are in every step's contract: their errors are reported once, at the
// case level (caseLevel holds those reported).
func (l *loader) contract(at string, s *Step, caseLevel map[string]bool) {
	var err error
	if s.Contract, err = runtime.Compile(s.Spec); err == nil {
		return
	}
	var ce *runtime.ContractError
	switch {
	case errors.As(err, &ce) && (strings.HasPrefix(ce.Field, "schema") || strings.HasPrefix(ce.Field, "invariants")):
		if !caseLevel[err.Error()] {
			caseLevel[err.Error()] = true
			code, at := ProblemCaseSchema, "/schema"
			if strings.HasPrefix(ce.Field, "invariants") {
				code, at = ProblemInvariant, "/"+contractFieldPointer(ce.Field)
			}
			l.add(code, at, "%v", err)
		}
	case errors.As(err, &ce):
		l.add(ProblemContract, at+"/"+contractFieldPointer(ce.Field), "step %s: %v", s.ID, err)
	default:
		l.add(ProblemContract, at, "step %s: %v", s.ID, err)
	}
}

// artifacts reads the stress artifacts: the raw text of a malformed one,
// or {"patch": [...]}.
func (l *loader) artifacts(afs []artifactFile) {
	for i, af := range afs {
		a := &Artifact{
			ID: af.ID, Step: af.Step, SubmitPhase: af.SubmitPhase, Category: af.Category,
			CaughtBy: af.CaughtBy, PaperSet: af.PaperSet, Note: af.Note,
		}
		if af.Raw != nil {
			a.Proposal, a.Raw = []byte(*af.Raw), true
		} else {
			var err error
			if a.Proposal, err = json.Marshal(map[string]any{"patch": af.Patch}); err != nil {
				l.add(ProblemProposal, fmt.Sprintf("/artifacts/%d", i), "artifact %s: %v", a.ID, err)
			}
		}
		l.c.Artifacts = append(l.c.Artifacts, a)
	}
}
