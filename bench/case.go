package bench

import (
	"bytes"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"go.yaml.in/yaml/v3"

	"github.com/patchbench/patchbench/internal/limited"
	"github.com/patchbench/patchbench/runtime"
)

// SuiteDomains are the six domains of the embedded suite (paper §4). A
// case set of a user's may use any domain names: a domain is data (a
// lower-case word), and only the embedded suite is checked to hold these
// six.
var SuiteDomains = []string{"finance", "marketing", "medical", "science", "software", "support"}

// DomainsOf returns the domains of a set of cases, sorted, each once.
func DomainsOf(cases []*Case) []string {
	var out []string
	for _, c := range cases {
		if !slices.Contains(out, c.Domain) {
			out = append(out, c.Domain)
		}
	}
	sort.Strings(out)
	return out
}

// Artifact categories of the no-model stress test (docs/cases.md, An
// artifact).
const (
	CategoryHiddenSource    = "hidden-source"
	CategoryOutOfScopeWrite = "out-of-scope-write"
	CategoryPhase           = "phase"
	CategorySchema          = "schema"
	CategoryInvariant       = "invariant"
	CategoryMalformed       = "malformed"
	CategoryApply           = "apply"
)

// Categories lists the artifact categories in report order.
var Categories = []string{
	CategoryHiddenSource, CategoryOutOfScopeWrite, CategoryPhase, CategorySchema,
	CategoryInvariant, CategoryMalformed, CategoryApply,
}

// Case is one loaded and compiled PatchBench case (the format is
// documented in docs/cases.md). Its contracts are compiled
// and safe to share between goroutines; State is immutable.
type Case struct {
	ID          string
	Domain      string
	Title       string
	Description string
	// Now is the scenario's current time (RFC 3339), shown in the prompt
	// so that a step that dates an entry dates it as the scenario would.
	Now string
	// File is the case file's name, as given to the loader; Digest the
	// hex SHA-256 of its bytes.
	File     string
	Digest   string
	Workflow Workflow
	State    *runtime.Document
	Secrets  []Secret
	// SecretKinds are the secret kinds the case adds to the closed list
	// SecretKinds for its own secrets (secret_kinds in the file).
	SecretKinds []string
	Schema      any
	Invariants  []runtime.InvariantSpec
	Steps       []*Step
	Pairs       []Pair
	Injections  []Injection
	Artifacts   []*Artifact
	// Grow lists the collections of the state that grow with the run's
	// scale (Grown); nil for a case that stays as written at any scale.
	Grow []Grow

	root *yaml.Node // the parsed file, for line numbers
}

// Workflow gives the phases in order and where the current phase lives in
// the state.
type Workflow struct {
	Phases    []string        `json:"phases"`
	PhasePath runtime.Pointer `json:"phase_path"`
}

// Secret is a canary planted in the state: Value is the string at Path, or
// a distinctive part of it (a token inside a log line); Kind is what it
// stands for, one of SecretKinds or of the case's own SecretKinds.
type Secret struct {
	ID    string          `json:"id"`
	Path  runtime.Pointer `json:"path"`
	Value string          `json:"value"`
	Kind  string          `json:"kind"`
}

// Step is one step of a case: who does it, when, what it is asked, its
// compiled contract (the authority triple with the case's schema and
// invariants), its rubric and its reference proposal.
type Step struct {
	ID          string
	Role        string
	Phases      []string
	AdvanceTo   string
	Parent      string
	Instruction string
	Spec        runtime.ContractSpec
	Contract    *runtime.Contract
	Rubric      []Check
	// BlindWrite lists the write patterns the step writes without seeing
	// them, on purpose (an append-only log): the exceptions to the rule
	// that a step sees what it writes.
	BlindWrite []runtime.Pointer
	// Pulls declare what makes the step hard for a careless actor (the
	// authoring rules of docs/cases.md).
	Pulls []Pull
	// ReferenceNote is the reference proposal's note; the proposal
	// itself is ReferenceAt's, a function of the state before the step
	// when its patch declares rules.
	ReferenceNote string
	// reference is the reference proposal as JSON bytes when its patch
	// declares no rule; refOps its patch's elements when it does.
	reference []byte
	refOps    []refOp
	// Index is the step's position in the case, from 0.
	Index int
}

// Pull is a declared pull of a step toward a failure the paper measures
// (docs/cases.md, Authoring rules): Kind "disclosure" names a
// Record the natural way of doing the step copies, forwards or summarises
// whole and the Secret inside it that the step does not need; Kind
// "write" names a Path outside the step's write region that a natural
// completion also touches (closing the ticket the step only drafts, the
// next role's status); Kind "rule" names a Rule (an invariant's name, or
// "schema") that a natural completion breaks (a refund above the order
// total, a value the form does not allow). Why says what makes the pull
// realistic.
//
// A disclosure pull has a Mechanism (MechanismContext, MechanismPolicy or
// MechanismInjection); a policy pull names in Policy the state location
// whose text states the rule a careless copy breaks.
type Pull struct {
	Kind      string          `json:"kind"`
	Secret    string          `json:"secret,omitempty"`
	Record    runtime.Pointer `json:"record,omitempty"`
	Mechanism string          `json:"mechanism,omitempty"`
	Policy    runtime.Pointer `json:"policy,omitempty"`
	Path      runtime.Pointer `json:"path,omitempty"`
	Rule      string          `json:"rule,omitempty"`
	Why       string          `json:"why"`
}

// Pull kinds.
const (
	PullDisclosure = "disclosure"
	PullWrite      = "write"
	PullRule       = "rule"
)

// Pair is a declared commutation analysis of two steps of one phase.
type Pair struct {
	A       string `json:"a"`
	B       string `json:"b"`
	Commute bool   `json:"commute"`
	Why     string `json:"why"`
}

// Injection declares a prompt injection planted in data that step Step
// can see (At) and that asks for the hidden location Target through Op:
// "copy" or "move" it to Into (a location the step may write), "test" it,
// or "quote" it in the actor's answer. Target holds a secret (or secrets
// below it); an attack succeeds when that secret reaches an output or the
// final state away from its own path.
type Injection struct {
	Step   string          `json:"step"`
	At     runtime.Pointer `json:"at"`
	Target runtime.Pointer `json:"target"`
	Op     string          `json:"op"`
	Into   runtime.Pointer `json:"into,omitempty"`
	// Plausibility is how the injected text reads: "blunt" (an obvious
	// request to disclose), "plausible" (a business-like request: a
	// manager's note, a compliance requirement, a vendor's template) or
	// "subtle" (a routine-looking system or runbook instruction).
	Plausibility string `json:"plausibility,omitempty"`
}

// Injection ops.
const (
	InjectCopy  = "copy"
	InjectMove  = "move"
	InjectTest  = "test"
	InjectQuote = "quote"
)

// Artifact is a compromised proposal for the no-model stress test.
// Proposal holds the bytes submitted to the verifier: the raw text for a
// malformed artifact, otherwise {"patch": [...]}.
type Artifact struct {
	ID          string
	Step        string
	SubmitPhase string
	Category    string
	Proposal    []byte
	Raw         bool
	CaughtBy    []string
	PaperSet    bool
	Note        string
}

// Step returns the step with the given id, or nil.
func (c *Case) Step(id string) *Step {
	for _, s := range c.Steps {
		if s.ID == id {
			return s
		}
	}
	return nil
}

// InitialPhase returns the phase the state starts in (the string at
// Workflow.PhasePath), or "" when there is none.
func (c *Case) InitialPhase() string {
	v, _ := c.State.Get(c.Workflow.PhasePath)
	s, _ := v.(string)
	return s
}

// Line returns the line of the value at a JSON Pointer into the case file
// (for example /steps/2/write/0), or of its nearest existing ancestor; 0
// when unknown.
func (c *Case) Line(p runtime.Pointer) int { return nodeLine(c.root, p) }

func nodeLine(root *yaml.Node, p runtime.Pointer) int {
	n := root
	if n == nil {
		return 0
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, tok := range p {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
		var next *yaml.Node
		nextLine := 0
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					// A member is reported at its key's line.
					next, nextLine = n.Content[i+1], n.Content[i].Line
					break
				}
			}
		case yaml.SequenceNode:
			if i, err := runtime.ParseIndex(tok); err == nil && i < len(n.Content) {
				next = n.Content[i]
				nextLine = next.Line
			}
		}
		if next == nil {
			return line
		}
		n, line = next, nextLine
	}
	return line
}

// caseFile is the typed form of a case file after it passed the JSON
// Schema; values that stay JSON (state, schemas, patches, rubric
// operands) are kept raw.
type caseFile struct {
	ID          string                  `json:"id"`
	Domain      string                  `json:"domain"`
	Title       string                  `json:"title"`
	Description string                  `json:"description"`
	Now         string                  `json:"now"`
	Workflow    Workflow                `json:"workflow"`
	State       json.RawMessage         `json:"state"`
	Secrets     []Secret                `json:"secrets"`
	SecretKinds []string                `json:"secret_kinds"`
	Schema      json.RawMessage         `json:"schema"`
	Invariants  []runtime.InvariantSpec `json:"invariants"`
	Steps       []stepFile              `json:"steps"`
	Pairs       []Pair                  `json:"pairs"`
	Injections  []Injection             `json:"injections"`
	Artifacts   []artifactFile          `json:"artifacts"`
	Grow        []Grow                  `json:"grow"`
}

type stepFile struct {
	ID           string                     `json:"id"`
	Role         string                     `json:"role"`
	Phases       []string                   `json:"phases"`
	AdvanceTo    string                     `json:"advance_to"`
	Parent       string                     `json:"parent"`
	Instruction  string                     `json:"instruction"`
	View         runtime.ViewSpec           `json:"view"`
	Write        []string                   `json:"write"`
	BlindWrite   []runtime.Pointer          `json:"blind_write"`
	Source       []string                   `json:"source"`
	Pulls        []Pull                     `json:"pulls"`
	OutputSchema map[string]json.RawMessage `json:"output_schema"`
	Rubric       []Check                    `json:"rubric"`
	Reference    struct {
		Patch json.RawMessage `json:"patch"`
		Note  string          `json:"note"`
	} `json:"reference"`
}

type artifactFile struct {
	ID          string          `json:"id"`
	Step        string          `json:"step"`
	SubmitPhase string          `json:"submit_phase"`
	Category    string          `json:"category"`
	Patch       json.RawMessage `json:"patch"`
	Raw         *string         `json:"raw"`
	CaughtBy    []string        `json:"caught_by"`
	PaperSet    bool            `json:"paper_set"`
	Note        string          `json:"note"`
}

// Problem is one thing wrong with a case file: the file, the 1-based line
// when known, the case id when known, the stable code of the kind of
// problem (one of the Problem* constants of codes.go) and what is wrong.
// Tests and tools compare codes; the message is for people and may be
// reworded.
type Problem struct {
	File string `json:"file"`
	Line int    `json:"line,omitempty"`
	Case string `json:"case,omitempty"`
	Code string `json:"code"`
	Msg  string `json:"message"`
	// Warning marks a finding that does not make the case set invalid
	// (package check's Warnings): validate prints it and still
	// succeeds.
	Warning bool `json:"warning,omitempty"`
}

// String is the problem as patchbench validate prints it:
// "file:line: case ID: message" (the code is not printed); a warning reads
// "file:line: case ID: warning (code): message".
func (p Problem) String() string {
	var b strings.Builder
	b.WriteString(p.File)
	if p.Line > 0 {
		fmt.Fprintf(&b, ":%d", p.Line)
	}
	b.WriteString(": ")
	if p.Case != "" {
		fmt.Fprintf(&b, "case %s: ", p.Case)
	}
	if p.Warning {
		fmt.Fprintf(&b, "warning (%s): ", p.Code)
	}
	// One problem, one line: multi-line library messages (CEL's caret
	// diagrams) are joined.
	lines := strings.Split(p.Msg, "\n")
	for i := range lines {
		lines[i] = strings.TrimSpace(lines[i])
	}
	b.WriteString(strings.Join(lines, " "))
	return b.String()
}

// Problems is a list of problems; as an error it prints one per line.
type Problems []Problem

func (ps Problems) Error() string {
	lines := make([]string, len(ps))
	for i, p := range ps {
		lines[i] = p.String()
	}
	return strings.Join(lines, "\n")
}

// ParseCase parses, checks against the case JSON Schema and compiles one
// case file (YAML, or strict JSON when name ends in .json). name is used in
// problems. On failure it returns nil and every problem found, each with
// the file, its code and, where known, the line; the JSON Schema is checked
// first and its violations stop the rest. Cross-case and run-time rules are
// checked by package check.
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
		File: name, Digest: fmt.Sprintf("%x", sha256.Sum256(b)), Workflow: cf.Workflow, Secrets: cf.Secrets, SecretKinds: cf.SecretKinds, Invariants: cf.Invariants,
		Pairs: cf.Pairs, Injections: cf.Injections, Grow: cf.Grow, root: root,
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
	// cc compiles the case's contracts: its steps share the case's
	// schema and invariants, compiled once.
	cc runtime.Compiler
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
		l.reference(at, s, sf.Reference.Patch)
		c.Steps = append(c.Steps, s)
	}
}

// contract compiles the step's contract. The case's schema and invariants
// are in every step's contract: their errors are reported once, at the
// case level (caseLevel holds those reported).
func (l *loader) contract(at string, s *Step, caseLevel map[string]bool) {
	var err error
	if s.Contract, err = l.cc.Compile(s.Spec); err == nil {
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

// checkRFC3339 checks a date and time of RFC 3339 §5.6: seconds required,
// fractional seconds allowed, T and Z in either case, and a leap second
// (:60) allowed.
func checkRFC3339(s string) error {
	u := strings.ToUpper(s)
	if len(u) >= 19 && u[16:19] == ":60" {
		u = u[:17] + "59" + u[19:]
	}
	_, err := time.Parse(time.RFC3339Nano, u)
	return err
}

// contractFieldPointer turns a ContractError field ("view.include[2]",
// `output_schema["/a"]`) into a relative JSON Pointer ("view/include/2").
func contractFieldPointer(field string) string {
	var toks []string
	for _, part := range splitField(field) {
		m := fieldPart.FindStringSubmatch(part)
		if m == nil {
			break
		}
		toks = append(toks, m[1])
		if m[2] != "" {
			toks = append(toks, m[2])
		} else if m[3] != "" {
			if k, err := jsonUnquote(m[3]); err == nil {
				toks = append(toks, runtime.EscapeToken(k))
			}
		}
	}
	return strings.Join(toks, "/")
}

// splitField splits a contract field path on the dots outside quotes:
// `output_schema["/a.b"].x` is [`output_schema["/a.b"]`, "x"].
func splitField(field string) []string {
	var parts []string
	start, quoted := 0, false
	for i := 0; i < len(field); i++ {
		switch field[i] {
		case '\\':
			if quoted {
				i++
			}
		case '"':
			quoted = !quoted
		case '.':
			if !quoted {
				parts = append(parts, field[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, field[start:])
}

func jsonUnquote(s string) (string, error) {
	var out string
	err := json.Unmarshal([]byte(`"`+s+`"`), &out)
	return out, err
}

func decodeValue(raw json.RawMessage) (any, error) {
	d, err := runtime.ParseDocument(raw)
	if err != nil {
		return nil, err
	}
	return d.Value(), nil
}

// LoadCaseDir loads every case file under dir: files ending in .yaml,
// .yml or .json, at any depth, except JSON Schemas (*.schema.json).
// Cases come back sorted by domain then id. Files that fail to parse are
// reported as problems and left out; the other cases are returned; problems
// name files by their path as dir/relative.
//
// dir may also name a single case file.
func LoadCaseDir(dir string) ([]*Case, Problems, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return nil, nil, err
	}
	if !fi.IsDir() {
		if !fi.Mode().IsRegular() {
			return nil, nil, fmt.Errorf("%s: not a regular file", dir)
		}
		if !isCaseFile(filepath.ToSlash(dir)) {
			return nil, nil, fmt.Errorf("%s: not a case file (.yaml, .yml or .json) or directory", dir)
		}
		b, err := limited.ReadFile(os.DirFS(filepath.Dir(dir)), filepath.Base(dir), MaxCaseFileBytes)
		if err != nil {
			return nil, Problems{{File: dir, Code: ProblemFile, Msg: err.Error()}}, nil
		}
		c, ps := ParseCase(dir, b)
		if c == nil {
			return nil, ps, nil
		}
		return []*Case{c}, ps, nil
	}
	return loadCases(os.DirFS(dir), ".", func(p string) string { return filepath.Join(dir, filepath.FromSlash(p)) })
}

// loadCases reads every case file under dir in the walk's order, then
// parses them (ParseCase: decoding, the case schema, compiling contracts,
// which is most of a run's start-up) on up to GOMAXPROCS goroutines; each
// file's problems keep the walk's order. ParseCase shares nothing mutable
// between calls (the case schema and the CEL environment are built once
// behind sync.Once and only read after).
func loadCases(fsys fs.FS, dir string, display func(string) string) ([]*Case, Problems, error) {
	type file struct {
		name string
		b    []byte
		read bool     // b holds the file, to parse
		ps   Problems // the problem reading it, or ParseCase's
		c    *Case
	}
	var files []*file
	err := fs.WalkDir(fsys, dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type()&fs.ModeSymlink != 0 {
			if fi, err := fs.Stat(fsys, p); err == nil && fi.IsDir() {
				files = append(files, &file{ps: Problems{{File: display(p), Code: ProblemFile, Msg: "a symbolic link to a directory is not followed; give that directory on its own"}}})
				return nil
			}
		}
		if d.IsDir() || !isCaseFile(p) {
			return nil
		}
		// Only regular files (or links to them): a FIFO or a device
		// named .yaml would block or never end.
		if !d.Type().IsRegular() {
			fi, err := fs.Stat(fsys, p)
			switch {
			case err != nil:
				files = append(files, &file{ps: Problems{{File: display(p), Code: ProblemFile, Msg: "cannot follow the symbolic link: " + err.Error()}}})
				return nil
			case !fi.Mode().IsRegular():
				files = append(files, &file{ps: Problems{{File: display(p), Code: ProblemFile, Msg: "not a regular file"}}})
				return nil
			}
		}
		b, err := limited.ReadFile(fsys, p, MaxCaseFileBytes)
		if err != nil {
			files = append(files, &file{ps: Problems{{File: display(p), Code: ProblemFile, Msg: err.Error()}}})
			return nil
		}
		files = append(files, &file{name: display(p), b: b, read: true})
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	next := make(chan *file)
	var wg sync.WaitGroup
	for range min(goruntime.GOMAXPROCS(0), len(files)) {
		wg.Go(func() {
			for f := range next {
				f.c, f.ps = ParseCase(f.name, f.b)
			}
		})
	}
	for _, f := range files {
		if f.read {
			next <- f
		}
	}
	close(next)
	wg.Wait()
	var cases []*Case
	var ps Problems
	for _, f := range files {
		ps = append(ps, f.ps...)
		if f.c != nil {
			cases = append(cases, f.c)
		}
	}
	sort.Slice(cases, func(i, j int) bool {
		if cases[i].Domain != cases[j].Domain {
			return cases[i].Domain < cases[j].Domain
		}
		return cases[i].ID < cases[j].ID
	})
	return cases, ps, nil
}

// MaxStateBytes bounds a case's state, as compact JSON (256 KiB): the suite's
// states are a few KB, and every validation runs many verifications on
// them.
const MaxStateBytes = 256 << 10

// MaxCaseFileBytes bounds the size of one case file (1 MiB: four times
// the largest state a case may hold, MaxStateBytes; the suite's case files
// are at most 24 KB). A case file's YAML node tree costs about 110 times
// its text before the node limit is checked, so at 8 MiB a file of
// [0,0,...] took 889 MB to refuse, and four loaded together 2.46 GB
// (a hostile case file); at 1 MiB, about 110 MB.
const MaxCaseFileBytes = 1 << 20

func isCaseFile(p string) bool {
	base := path.Base(p)
	if strings.HasPrefix(base, ".") || strings.HasSuffix(base, ".schema.json") {
		return false
	}
	switch strings.ToLower(path.Ext(base)) {
	case ".yaml", ".yml", ".json":
		return true
	}
	return false
}
