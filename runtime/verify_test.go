package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
)

const canary = "ZX91-CANARY-7731-IBAN"

// gateState mixes what a step needs with a planted canary it must never
// see: the account's IBAN sits beside its balance.
const gateState = `{
  "phase": "review",
  "accounts": [
    {"id": "acc-1", "owner": "Finch", "balance": 120.50, "iban": "` + canary + `", "flags": ["vip"]},
    {"id": "acc-2", "owner": "Moss", "balance": 80, "iban": "ZX00-OTHER-0000", "flags": []}
  ],
  "report": {"summary": "", "total": 0, "lines": ["a", "b", "c"]},
  "hidden": {"code": "` + canary + `", "n": 7, "list": [1, 2, 3], "ZX91-KEY-` + canary + `": true},
  "big": 123456789012345678901
}`

func gateContract(t testing.TB, mod func(*ContractSpec)) *Contract {
	t.Helper()
	spec := ContractSpec{
		View:   ViewSpec{Include: []string{"/accounts", "/report", "/phase"}, Exclude: []string{"/accounts/*/iban"}},
		Write:  []string{"/report/summary", "/report/total", "/report/lines/-", "/accounts/*/flags"},
		Source: []string{"/accounts/*/balance", "/report"},
		Phases: []string{"review"},
		Schema: mustJSON(t, `{
		  "type": "object",
		  "required": ["accounts", "report"],
		  "properties": {
		    "report": {"type": "object", "properties": {"total": {"type": "number", "minimum": 0}}},
		    "hidden": {"type": "object", "properties": {"code": {"type": "string", "pattern": "^ZX"}}}
		  }
		}`),
		OutputSchema: map[string]any{
			"/report/summary":   mustJSON(t, `{"type": "string", "maxLength": 200, "pattern": "^[A-Za-z]"}`),
			"/accounts/*/flags": mustJSON(t, `{"type": "array", "items": {"enum": ["vip", "review", "frozen"]}}`),
		},
		Invariants: []InvariantSpec{
			{Name: "ids unchanged", Rule: `post.accounts.map(a, a.id) == pre.accounts.map(a, a.id)`},
			{Name: "total not negative", Rule: `post.report.total >= 0`},
		},
	}
	if mod != nil {
		mod(&spec)
	}
	c, err := Compile(spec)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	return c
}

type gateCase struct {
	name     string
	patch    string
	gates    GateSet
	phase    string
	mod      func(*ContractSpec)
	gate     string // the failing gate, "" when it must commit
	code     string
	pointer  string
	contains string
}

func runGateCases(t *testing.T, cases []gateCase) {
	t.Helper()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c := gateContract(t, tc.mod)
			doc := mustDoc(t, gateState)
			before := toJSON(doc.Value())
			rawBefore := append([]byte(nil), doc.Bytes()...)
			phase := tc.phase
			if phase == "" {
				phase = "review"
			}
			d, err := c.Verify(context.Background(), doc, []byte(tc.patch), VerifyOptions{Gates: tc.gates, Phase: phase})
			if err != nil {
				t.Fatal(err)
			}
			if toJSON(doc.Value()) != before || !bytes.Equal(doc.Bytes(), rawBefore) {
				t.Fatal("the input document was modified")
			}
			if tc.gate == "" {
				if !d.Committed {
					t.Fatalf("rejected: %+v", d.Rejection())
				}
				assertWritesCover(t, doc.Value(), d.State.Value(), d.Footprint)
				return
			}
			r := d.Rejection()
			if d.Committed || r == nil {
				t.Fatalf("committed; want %s/%s", tc.gate, tc.code)
			}
			if d.State != doc {
				t.Fatal("a rejection must return the input state")
			}
			if r.Gate != tc.gate || r.Code != tc.code {
				t.Fatalf("first failure %s/%s (%s); want %s/%s", r.Gate, r.Code, r.Message, tc.gate, tc.code)
			}
			if tc.pointer != "-" && r.Pointer != tc.pointer {
				t.Fatalf("pointer %q; want %q", r.Pointer, tc.pointer)
			}
			if !strings.Contains(r.Message, tc.contains) {
				t.Fatalf("message %q does not contain %q", r.Message, tc.contains)
			}
		})
	}
}

func TestGates(t *testing.T) {
	all := DefaultGates
	runGateCases(t, []gateCase{
		{name: "good patch", gates: all, patch: `{"patch":[{"op":"replace","path":"/report/summary","value":"Balances reviewed"},{"op":"copy","from":"/accounts/0/balance","path":"/report/total"},{"op":"add","path":"/report/lines/-","value":"d"},{"op":"add","path":"/accounts/1/flags/-","value":"review"}],"note":"ok"}`},
		{name: "write outside W", gates: all, patch: `[{"op":"replace","path":"/accounts/0/owner","value":"X"}]`,
			gate: GateScope, code: CodeWriteOutside, pointer: "/accounts/0/owner"},
		{name: "write to a hidden path", gates: all, patch: `[{"op":"remove","path":"/hidden/code"}]`,
			gate: GateScope, code: CodeWriteOutside, pointer: "/hidden/code"},
		{name: "copy from a hidden source", gates: all, patch: `[{"op":"copy","from":"/accounts/0/iban","path":"/report/summary"}]`,
			gate: GateScope, code: CodeSourceOutside, pointer: "/accounts/0/iban"},
		{name: "test a hidden path", gates: all, patch: `[{"op":"test","path":"/hidden/code","value":"guess"},{"op":"replace","path":"/report/total","value":1}]`,
			gate: GateScope, code: CodeSourceOutside, pointer: "/hidden/code"},
		{name: "move from a hidden source", gates: all, patch: `[{"op":"move","from":"/hidden/code","path":"/report/summary"}]`,
			gate: GateScope, code: CodeWriteOutside, pointer: "/hidden/code"},
		{name: "move from is a write too", gates: all, mod: func(s *ContractSpec) { s.Source = append(s.Source, "/hidden") },
			patch: `[{"op":"move","from":"/hidden/code","path":"/report/summary"}]`,
			gate:  GateScope, code: CodeWriteOutside, pointer: "/hidden/code"},
		{name: "acl ignores sources", gates: GateSet{ACL: true}, patch: `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`},
		{name: "acl catches the removal a move makes", gates: GateSet{ACL: true}, patch: `[{"op":"move","from":"/hidden/code","path":"/report/summary"}]`,
			gate: GateACL, code: CodeWriteOutside, pointer: "/hidden/code"},
		{name: "acl catches writes", gates: GateSet{ACL: true}, patch: `[{"op":"add","path":"/hidden/x","value":1}]`,
			gate: GateACL, code: CodeWriteOutside, pointer: "/hidden/x"},
		{name: "append allowed by /-", gates: all, patch: `[{"op":"add","path":"/report/lines/-","value":"z"}]`},
		{name: "explicit append index needs its own grant", gates: all, patch: `[{"op":"add","path":"/report/lines/3","value":"z"}]`,
			gate: GateScope, code: CodeWriteOutside, pointer: "/report/lines/3"},
		{name: "insert shifts later elements", gates: all, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/report/lines/0") },
			patch: `[{"op":"add","path":"/report/lines/0","value":"first"}]`,
			gate:  GateScope, code: CodeWriteOutside, pointer: "/report/lines/0", contains: "shifts /report/lines/1"},
		{name: "removal shifts later elements", gates: all, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/report/lines/1") },
			patch: `[{"op":"remove","path":"/report/lines/1"}]`,
			gate:  GateScope, code: CodeWriteOutside, pointer: "/report/lines/1", contains: "shifts /report/lines/2"},
		{name: "removal of the last element shifts nothing", gates: all, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/report/lines/2") },
			patch: `[{"op":"remove","path":"/report/lines/2"}]`},
		{name: "wildcard grant covers shifts", gates: all, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/report/lines/*") },
			patch: `[{"op":"add","path":"/report/lines/0","value":"first"}]`},
		{name: "phase not allowed", gates: all, phase: "publish", patch: `[{"op":"replace","path":"/report/total","value":1}]`,
			gate: GatePhase, code: CodePhaseNotAllowed},
		{name: "phase gate off", gates: GateSet{Scope: true}, phase: "publish", patch: `[{"op":"replace","path":"/report/total","value":1}]`},
		{name: "schema violation", gates: all, patch: `[{"op":"replace","path":"/report/total","value":-5}]`,
			gate: GateSchema, code: CodeSchemaViolation, pointer: "/report/total", contains: "at least 0"},
		{name: "output schema violation", gates: all, patch: `[{"op":"replace","path":"/report/summary","value":"9 lives"}]`,
			gate: GateSchema, code: CodeOutputSchema, pointer: "/report/summary", contains: "pattern"},
		{name: "output schema through a wildcard key", gates: all, patch: `[{"op":"add","path":"/accounts/0/flags/-","value":"deleted"}]`,
			gate: GateSchema, code: CodeOutputSchema, pointer: "/accounts/0/flags/1"},
		{name: "output schema only checks written values", gates: all, mod: func(s *ContractSpec) {
			s.OutputSchema["/report/lines"] = mustJSON(t, `{"maxItems": 1}`)
		}, patch: `[{"op":"replace","path":"/report/total","value":2}]`},
		{name: "invariant violated", gates: all, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/accounts/*/id") },
			patch: `[{"op":"replace","path":"/accounts/1/id","value":"acc-9"}]`,
			gate:  GateInvariants, code: CodeInvariantViolated, contains: "ids unchanged"},
		{name: "invariant errors", gates: all, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "missing member", Rule: `post.report.nope == 1`})
		}, patch: `[{"op":"replace","path":"/report/total","value":2}]`,
			gate: GateInvariants, code: CodeInvariantError, contains: "missing member"},
		{name: "invariant not boolean", gates: all, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "a number", Rule: `post.report.total`})
		}, patch: `[{"op":"replace","path":"/report/total","value":2}]`,
			gate: GateInvariants, code: CodeInvariantNotBool},
		{name: "invariant cost limit", gates: all, mod: func(s *ContractSpec) {
			s.Limits.MaxInvariantCost = 50
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "expensive", Rule: `[1,2,3,4,5,6,7,8,9,10].all(i, [1,2,3,4,5,6,7,8,9,10].all(j, i*j > 0))`})
		}, patch: `[{"op":"replace","path":"/report/total","value":2}]`,
			gate: GateInvariants, code: CodeInvariantError, contains: "cost"},
		{name: "invariant over phase", gates: all, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "review only", Rule: `phase == "review"`})
		}, patch: `[{"op":"replace","path":"/report/total","value":2}]`},
		{name: "does not apply", gates: all, patch: `[{"op":"replace","path":"/report/missing","value":1}]`, mod: func(s *ContractSpec) { s.Write = append(s.Write, "/report") },
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/missing"},
		{name: "test fails", gates: all, patch: `[{"op":"test","path":"/report/total","value":3},{"op":"replace","path":"/report/total","value":1}]`,
			gate: GateApply, code: CodeTestFailed, pointer: "/report/total"},
		{name: "test compares numbers by value", gates: all, patch: `[{"op":"test","path":"/report/total","value":0.0},{"op":"test","path":"/accounts/0/balance","value":1.205e2},{"op":"replace","path":"/report/total","value":1}]`},
		{name: "test of a missing path fails even with null", gates: GateSet{}, patch: `[{"op":"test","path":"/report/nope","value":null}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/nope"},
		{name: "leading zero index", gates: GateSet{}, patch: `[{"op":"replace","path":"/report/lines/01","value":"x"}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/lines/01", contains: "leading zero"},
		{name: "negative index", gates: GateSet{}, patch: `[{"op":"replace","path":"/report/lines/-1","value":"x"}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/lines/-1"},
		{name: "signed index", gates: GateSet{}, patch: `[{"op":"add","path":"/report/lines/+1","value":"x"}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/lines/+1"},
		{name: "dash only for add", gates: GateSet{}, patch: `[{"op":"remove","path":"/report/lines/-"}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/report/lines/-"},
		{name: "dash inside a path into an array", gates: GateSet{}, patch: `[{"op":"add","path":"/accounts/-/flags","value":[]}]`,
			gate: GateApply, code: CodeDoesNotApply, pointer: "/accounts/-/flags"},
		{name: "too many operations", gates: all, mod: func(s *ContractSpec) { s.Limits.MaxOps = 2 },
			patch: `[{"op":"test","path":"/phase","value":"review"},{"op":"test","path":"/phase","value":"review"},{"op":"test","path":"/phase","value":"review"}]`,
			gate:  GateParse, code: CodeLimitExceeded},
		{name: "proposal too large", gates: all, mod: func(s *ContractSpec) { s.Limits.MaxProposalBytes = 10 },
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateParse, code: CodeLimitExceeded},
		{name: "document too large", gates: GateSet{}, mod: func(s *ContractSpec) { s.Limits.MaxDocumentBytes = 600 },
			patch: `[{"op":"replace","path":"/report/summary","value":"` + strings.Repeat("x", 300) + `"}]`, gate: GateApply, code: CodeLimitExceeded},
		{name: "copies too large", gates: GateSet{}, mod: func(s *ContractSpec) { s.Limits.MaxCopyBytes = 200 },
			patch: `[{"op":"copy","from":"/accounts","path":"/c1"},{"op":"copy","from":"/accounts","path":"/c2"}]`, gate: GateApply, code: CodeLimitExceeded, pointer: ""},
	})
}

// TestRejectionsNeverEchoHiddenValues plants a canary in locations outside
// the view and drives every rejection path at it: no message and no
// pointer may contain it.
func TestRejectionsNeverEchoHiddenValues(t *testing.T) {
	openSource := func(s *ContractSpec) { s.Source = append(s.Source, "/hidden", "/accounts") }
	cases := []gateCase{
		{name: "scope: copy hidden", gates: DefaultGates, patch: `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, gate: GateScope, code: CodeSourceOutside, pointer: "-"},
		{name: "apply: failing test on a hidden path", gates: GateSet{}, patch: `[{"op":"test","path":"/hidden/code","value":"ZX91"}]`, gate: GateApply, code: CodeTestFailed, pointer: "-"},
		{name: "apply: failing test on a hidden subtree", gates: GateSet{}, patch: `[{"op":"test","path":"/hidden","value":{}}]`, gate: GateApply, code: CodeTestFailed, pointer: "-"},
		{name: "apply: test allowed by P fails", gates: DefaultGates, mod: openSource, patch: `[{"op":"test","path":"/hidden/code","value":"nope"}]`, gate: GateApply, code: CodeTestFailed, pointer: "-"},
		{name: "apply: path through a hidden string", gates: GateSet{}, patch: `[{"op":"add","path":"/hidden/code/x","value":1}]`, gate: GateApply, code: CodeDoesNotApply, pointer: "-"},
		{name: "apply: index into a hidden list", gates: GateSet{}, patch: `[{"op":"replace","path":"/hidden/list/9","value":1}]`, gate: GateApply, code: CodeDoesNotApply, pointer: "-"},
		{name: "schema: hidden value breaks the pattern", gates: DefaultGates, mod: hiddenSchema(t, `{"properties":{"code":{"pattern":"^Q"}}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden value too long", gates: DefaultGates, mod: hiddenSchema(t, `{"properties":{"code":{"maxLength":3}}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden value not in enum", gates: DefaultGates, mod: hiddenSchema(t, `{"properties":{"code":{"enum":["a",1]}}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden value breaks const", gates: DefaultGates, mod: hiddenSchema(t, `{"properties":{"code":{"const":"other"}}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden member names", gates: DefaultGates, mod: hiddenSchema(t, `{"additionalProperties":false,"properties":{"code":true,"n":true,"list":true}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden member names against propertyNames", gates: DefaultGates, mod: hiddenSchema(t, `{"propertyNames":{"maxLength":5}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "schema: hidden value of the wrong type", gates: DefaultGates, mod: hiddenSchema(t, `{"properties":{"code":{"type":"number"}}}`),
			patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateSchema, code: CodeSchemaViolation, pointer: ""},
		{name: "output schema: hidden value copied out", gates: GateSet{ACL: true, Schema: true}, patch: `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, mod: func(s *ContractSpec) {
			s.OutputSchema["/report/summary"] = mustJSON(t, `{"pattern":"^[a-z]+$"}`)
		}, gate: GateSchema, code: CodeOutputSchema, pointer: "/report/summary"},
		{name: "output schema: hidden object copied out", gates: GateSet{ACL: true, Schema: true}, patch: `[{"op":"copy","from":"/hidden","path":"/report/summary"}]`, mod: func(s *ContractSpec) {
			s.OutputSchema["/report/summary"] = mustJSON(t, `{"additionalProperties":{"type":"string"}}`)
		}, gate: GateSchema, code: CodeOutputSchema, pointer: "-"},
		{name: "output schema: hidden value through P", gates: DefaultGates, mod: func(s *ContractSpec) {
			openSource(s)
			s.OutputSchema["/report/summary"] = mustJSON(t, `{"const":"fixed"}`)
		}, patch: `[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`, gate: GateSchema, code: CodeOutputSchema, pointer: "/report/summary"},
		{name: "invariant over hidden data", gates: DefaultGates, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "code is numeric", Rule: `post.hidden.code == "123"`})
		}, patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateInvariants, code: CodeInvariantViolated},
		{name: "invariant error quoting hidden data", gates: DefaultGates, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "parse code", Rule: `int(post.hidden.code) > 0`})
		}, patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateInvariants, code: CodeInvariantError},
		{name: "invariant error on hidden key", gates: DefaultGates, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "lookup", Rule: `post.hidden[post.hidden.code] == 1`})
		}, patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateInvariants, code: CodeInvariantError},
		{name: "invariant not bool returning hidden data", gates: DefaultGates, mod: func(s *ContractSpec) {
			s.Invariants = append(s.Invariants, InvariantSpec{Name: "leaky", Rule: `post.hidden.code`})
		}, patch: `[{"op":"replace","path":"/report/total","value":1}]`, gate: GateInvariants, code: CodeInvariantNotBool},
	}
	for i := range cases {
		cases[i].contains = ""
	}
	runGateCases(t, cases)
	// And directly: every message and pointer of every decision, on the
	// footprint path and on the whole-document path alike.
	for _, tc := range cases {
		c := gateContract(t, tc.mod)
		for _, c := range []*Contract{c, wholeOnly(c)} {
			d, err := c.Verify(context.Background(), mustDoc(t, gateState), []byte(tc.patch), VerifyOptions{Gates: tc.gates, Phase: "review"})
			if err != nil {
				t.Fatal(err)
			}
			for _, g := range d.Gates {
				for _, part := range []string{canary, "ZX91", "7731", "IBAN"} {
					if strings.Contains(g.Message, part) || strings.Contains(g.Pointer, part) {
						t.Errorf("%s (%s): gate %s echoes hidden data %q: %+v", tc.name, d.path, g.Gate, part, g)
					}
				}
			}
		}
	}
}

// structureState hides an audit trail of 13 entries (its length is a
// canary: "13" must never be said) whose entries have members named
// zq..., a vault whose member names are canaries too, one of which
// (zqkey) requires another (zqpair) that is missing, and a shown report
// with a list of two lines.
var structureState = `{
  "phase": "review",
  "report": {"summary": "", "lines": ["a", "b"], "card": {"title": "t", "owner": "o"}},
  "audit": [` + auditEntries + `],
  "trail": [{"at": "t0", "zqnote": "n"}],
  "vault": {"zqkey": 1, "zqother": {"zqinner": true}}
}`

var auditEntries = strings.TrimSuffix(strings.Repeat(`{"zqat": "t", "zqactor": "a", "zqentry": "e"},`, 13), ",")

// structureContract: the step sees the report and /trail/*/at, appends to
// the hidden audit trail and to the trail blindly, and writes the report.
func structureContract(t *testing.T, mod func(*ContractSpec)) *Contract {
	t.Helper()
	spec := ContractSpec{
		View:   ViewSpec{Include: []string{"/report", "/phase", "/trail/*/at"}},
		Write:  []string{"/report", "/audit/-", "/trail/-"},
		Source: []string{"/report"},
		Phases: []string{"review"},
		Schema: mustJSON(t, `{
		  "type": "object",
		  "properties": {
		    "report": {"type": "object", "properties": {
		      "lines": {"type": "array", "items": {"type": "string"}},
		      "card": {"type": "object", "required": ["title", "owner"]}
		    }},
		    "audit": {"type": "array", "items": {"type": "object", "required": ["zqat", "zqactor", "zqentry"],
		      "properties": {"zqat": {"type": "string"}}}},
		    "trail": {"type": "array", "items": {"type": "object", "required": ["at", "zqnote"]}}
		  }
		}`),
	}
	if mod != nil {
		mod(&spec)
	}
	c, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestRejectionsNeverNameHiddenStructure extends the canary test from
// hidden values to hidden structure: no pointer and no
// message may tell a hidden array's length (the index an append through
// "-" resolved to) or a member name at a location the view does not show
// (the members a schema requires there, the member that triggers a
// dependency), unless the proposal named it. What the view shows is still
// said: the index of an append to a shown array, the required members of
// a shown object. Every case runs on the footprint path and on the
// whole-document path, with the same results.
func TestRejectionsNeverNameHiddenStructure(t *testing.T) {
	hiddenVault := func(schema string) func(*ContractSpec) {
		return func(s *ContractSpec) {
			s.Schema.(map[string]any)["properties"].(map[string]any)["vault"] = mustJSON(t, schema)
		}
	}
	tests := []struct {
		name    string
		mod     func(*ContractSpec)
		patch   string
		gates   GateSet
		code    string // the rejection's code ("" when it commits)
		pointer string
		message string // a part of the message
	}{
		{name: "an invalid entry appended to a hidden array",
			patch: `[{"op":"add","path":"/audit/-","value":{"zqat":"t"}}]`,
			code:  CodeSchemaViolation, pointer: "/audit/-", message: "missing required members outside the view"},
		{name: "a wrong member of an entry appended to a hidden array",
			patch: `[{"op":"add","path":"/audit/-","value":{"zqat":5,"zqactor":"a","zqentry":"e"}}]`,
			code:  CodeSchemaViolation, pointer: "/audit/-/zqat", message: "must be of type string"},
		{name: "two appends to a hidden array",
			patch: `[{"op":"add","path":"/audit/-","value":{"zqat":"t","zqactor":"a","zqentry":"e"}},{"op":"add","path":"/audit/-","value":[]}]`,
			code:  CodeSchemaViolation, pointer: "/audit/-", message: "must be of type object"},
		{name: "an output schema on a hidden array",
			mod: func(s *ContractSpec) {
				s.OutputSchema = map[string]any{"/audit/*": mustJSON(t, `{"maxProperties": 1}`)}
			},
			patch: `[{"op":"add","path":"/audit/-","value":{"zqat":"t","zqactor":"a","zqentry":"e"}}]`,
			code:  CodeOutputSchema, pointer: "/audit/-", message: `the value at "/audit/-", which the patch changed,`},
		{name: "an entry appended to an array whose elements are partly shown: its length is shown",
			patch: `[{"op":"add","path":"/trail/-","value":{}}]`,
			code:  CodeSchemaViolation, pointer: "/trail/1", message: "missing required members: at, and others outside the view"},
		{name: "an invalid line appended to a shown array: its length is shown",
			patch: `[{"op":"add","path":"/report/lines/-","value":3}]`,
			code:  CodeSchemaViolation, pointer: "/report/lines/2", message: "must be of type string"},
		{name: "the required members of a shown object are named",
			patch: `[{"op":"replace","path":"/report/card","value":{}}]`,
			code:  CodeSchemaViolation, pointer: "/report/card", message: "missing required members: title, owner (keyword"},
		{name: "a hidden object that lacks required members",
			mod:   hiddenVault(`{"required": ["zqkey", "zqmissing"]}`),
			patch: `[{"op":"replace","path":"/report/summary","value":"s"}]`,
			code:  CodeSchemaViolation, pointer: "", message: "at a location outside the view: missing required members outside the view"},
		{name: "a hidden member that requires another",
			mod:   hiddenVault(`{"dependentRequired": {"zqkey": ["zqpair"]}}`),
			patch: `[{"op":"replace","path":"/report/summary","value":"s"}]`,
			code:  CodeSchemaViolation, pointer: "", message: `fails the schema keyword "dependentRequired" (keyword /dependentRequired)`},
		{name: "a hidden member that requires another, draft 7",
			mod: func(s *ContractSpec) {
				s.Schema = mustJSON(t, `{"$schema": "http://json-schema.org/draft-07/schema#", "properties": {"vault": {"dependencies": {"zqkey": ["zqpair"]}}}}`)
			},
			patch: `[{"op":"replace","path":"/report/summary","value":"s"}]`,
			code:  CodeSchemaViolation, pointer: "", message: `fails the schema keyword "dependency" (keyword /dependency)`},
		{name: "a member the proposal added may be named",
			mod: func(s *ContractSpec) {
				s.Write = append(s.Write, "/vault/zqnew")
				hiddenVault(`{"dependentRequired": {"zqnew": ["zqpair"]}}`)(s)
			},
			patch: `[{"op":"add","path":"/vault/zqnew","value":1}]`,
			code:  CodeSchemaViolation, pointer: "", message: `fails the schema keyword "dependentRequired/zqnew" (keyword /dependentRequired/zqnew)`},
		{name: "a schema whose $ref loops names the loop",
			mod: func(s *ContractSpec) {
				s.Schema = mustJSON(t, `{"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "properties": {"report": {"$ref": "#/$defs/a"}}}`)
			},
			patch: `[{"op":"replace","path":"/report/summary","value":"s"}]`,
			code:  CodeSchemaViolation, pointer: "/report", message: `cannot be checked: the schema's references loop: #/properties/report/$ref/$ref/$ref and #/properties/report/$ref both resolve to #/$defs/a`},
		{name: "a hidden array the step may append to and pass",
			patch: `[{"op":"add","path":"/audit/-","value":{"zqat":"t","zqactor":"a","zqentry":"e"}}]`,
			gates: GateSet{ACL: true, Schema: true},
			code:  CodeOK},
		{name: "a required member the proposal removed is named",
			mod: func(s *ContractSpec) {
				s.Write = append(s.Write, "/vault/zqkey")
				hiddenVault(`{"required": ["zqkey", "zqother"]}`)(s)
			},
			patch: `[{"op":"remove","path":"/vault/zqkey"}]`,
			code:  CodeSchemaViolation, pointer: "", message: "missing required members: zqkey (keyword /required)"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := structureContract(t, tc.mod)
			gates := tc.gates
			if gates == (GateSet{}) {
				gates = DefaultGates
			}
			var results []*Decision
			for _, c := range []*Contract{c, wholeOnly(c)} {
				doc := mustDoc(t, structureState)
				d, err := c.Verify(context.Background(), doc, []byte(tc.patch), VerifyOptions{Gates: gates, Phase: "review"})
				if err != nil {
					t.Fatal(err)
				}
				results = append(results, d)
				for _, g := range d.Gates {
					said := g.Message + " " + g.Pointer
					for _, leak := range []string{"13", "zqat", "zqactor", "zqentry", "zqother", "zqinner", "zqmissing", "zqpair", "zqnote"} {
						if strings.Contains(said, leak) && !strings.Contains(tc.patch, leak) {
							t.Errorf("%s: gate %s names hidden structure %q: %+v", d.path, g.Gate, leak, g)
						}
					}
					if strings.Contains(said, "zqkey") && !strings.Contains(tc.patch, "zqkey") {
						t.Errorf("%s: gate %s names the hidden member zqkey: %+v", d.path, g.Gate, g)
					}
				}
				if tc.code == CodeOK {
					if !d.Committed {
						t.Fatalf("%s: rejected: %+v", d.path, d.Rejection())
					}
					continue
				}
				r := d.Rejection()
				if r == nil {
					t.Fatalf("%s: committed; want %s", d.path, tc.code)
				}
				if r.Code != tc.code || r.Pointer != tc.pointer || !strings.Contains(r.Message, tc.message) {
					t.Fatalf("%s: %s %q %q; want %s %q, a message with %q", d.path, r.Code, r.Pointer, r.Message, tc.code, tc.pointer, tc.message)
				}
			}
			if diff := diffDecisions(results[0], results[1], results[0].State, results[1].State); diff != "" && results[0].Committed {
				t.Fatalf("the two paths differ: %s", diff)
			} else if !slices.EqualFunc(results[0].Gates, results[1].Gates, sameGateResult) {
				t.Fatalf("the two paths differ:\n  %+v\n  %+v", results[0].Gates, results[1].Gates)
			}
		})
	}
}

// hiddenSchema replaces the schema of /hidden.
func hiddenSchema(t *testing.T, schema string) func(*ContractSpec) {
	return func(s *ContractSpec) {
		s.Schema.(map[string]any)["properties"].(map[string]any)["hidden"] = mustJSON(t, schema)
	}
}

func TestNumbersKeepTheirText(t *testing.T) {
	doc := mustDoc(t, `{"a": 123456789012345678901, "b": [1.10, 2e3, -0.0], "c": {"d": 98765432109876543210}}`)
	d, err := openContract.Verify(context.Background(), doc, []byte(`[{"op":"add","path":"/e","value":11111111111111111111},{"op":"add","path":"/b/-","value":1.50}]`), VerifyOptions{})
	if err != nil || !d.Committed {
		t.Fatalf("%v %+v", err, d.Rejection())
	}
	for _, want := range []string{"123456789012345678901", "1.10", "2e3", "-0.0", "98765432109876543210", "11111111111111111111", "1.50"} {
		if !bytes.Contains(d.State.Bytes(), []byte(want)) {
			t.Errorf("state %s lost the number text %s", d.State.Bytes(), want)
		}
	}
	// Also through operations our own semantics apply (root replace).
	d, _ = openContract.Verify(context.Background(), doc, []byte(`[{"op":"replace","path":"","value":{"x":123456789012345678901234}}]`), VerifyOptions{})
	if !bytes.Contains(d.State.Bytes(), []byte("123456789012345678901234")) {
		t.Errorf("root replace lost the number text: %s", d.State.Bytes())
	}
}

func TestScalarAndArrayStates(t *testing.T) {
	tests := []struct{ state, patch, want string }{
		{`"foo"`, `[{"op":"replace","path":"","value":"bar"}]`, `"bar"`},
		{`42`, `[{"op":"test","path":"","value":42.0},{"op":"replace","path":"","value":[1]}]`, `[1]`},
		{`[1,2]`, `[{"op":"add","path":"/-","value":3},{"op":"remove","path":"/0"}]`, `[2,3]`},
		{`{"a":{"b":1}}`, `[{"op":"move","from":"/a","path":""}]`, `{"b":1}`},
		{`{"a":{"b":1}}`, `[{"op":"copy","from":"/a","path":""}]`, `{"b":1}`},
		{`{"":{"":5}}`, `[{"op":"add","path":"//","value":2}]`, `{"":{"":2}}`},
		{`{"a":[1]}`, `[{"op":"copy","from":"","path":"/a/-"}]`, `{"a":[1,{"a":[1]}]}`},
		{`null`, `[{"op":"add","path":"","value":{"x":null}}]`, `{"x":null}`},
	}
	for _, tt := range tests {
		d, err := openContract.Verify(context.Background(), mustDoc(t, tt.state), []byte(tt.patch), VerifyOptions{})
		if err != nil || !d.Committed {
			t.Errorf("%s on %s: %v %+v", tt.patch, tt.state, err, d.Rejection())
			continue
		}
		if got := toJSON(d.State.Value()); got != toJSON(mustJSON(t, tt.want)) {
			t.Errorf("%s on %s = %s, want %s", tt.patch, tt.state, got, tt.want)
		}
	}
	// Removing the whole document has no result.
	d, _ := openContract.Verify(context.Background(), mustDoc(t, `{"a":1}`), []byte(`[{"op":"remove","path":""}]`), VerifyOptions{})
	if d.Committed || d.Rejection().Code != CodeDoesNotApply {
		t.Errorf("remove of the root: %+v", d.Gates)
	}
}

func TestConcurrentVerify(t *testing.T) {
	c := gateContract(t, nil)
	doc := mustDoc(t, gateState)
	patches := []string{
		`[{"op":"replace","path":"/report/total","value":3}]`,
		`[{"op":"copy","from":"/hidden/code","path":"/report/summary"}]`,
		`[{"op":"replace","path":"/report/total","value":-1}]`,
		`not json`,
	}
	want := make([]string, len(patches))
	for i, p := range patches {
		d, _ := c.Verify(context.Background(), doc, []byte(p), VerifyOptions{Gates: DefaultGates, Phase: "review"})
		want[i] = fmt.Sprint(d.Committed, d.Gates)
	}
	var wg sync.WaitGroup
	errs := make(chan string, 400)
	for g := 0; g < 8; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 50; i++ {
				k := (g + i) % len(patches)
				d, err := c.Verify(context.Background(), doc, []byte(patches[k]), VerifyOptions{Gates: DefaultGates, Phase: "review"})
				if err != nil {
					errs <- err.Error()
					continue
				}
				if got := fmt.Sprint(d.Committed, d.Gates); got != want[k] {
					errs <- got
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
	if toJSON(doc.Value()) != toJSON(mustJSON(t, gateState)) {
		t.Error("shared state modified")
	}
}

func TestCancelledContext(t *testing.T) {
	c := gateContract(t, nil)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Verify(ctx, mustDoc(t, gateState), []byte(`[{"op":"replace","path":"/report/total","value":3}]`), VerifyOptions{Gates: DefaultGates, Phase: "review"}); err == nil {
		t.Fatal("a cancelled caller context must return an error")
	}
}

func TestCompileErrors(t *testing.T) {
	tests := []struct {
		name  string
		mod   func(*ContractSpec)
		field string
	}{
		{"no view", func(s *ContractSpec) { s.View.Include = nil }, "view.include"},
		{"bad write pattern", func(s *ContractSpec) { s.Write = []string{"/ok", "report"} }, "write[1]"},
		{"dash inside pattern", func(s *ContractSpec) { s.Source = []string{"/a/-/b"} }, "source[0]"},
		{"bad schema", func(s *ContractSpec) { s.Schema = mustJSON(t, `{"type": 5}`) }, "schema"},
		{"remote ref", func(s *ContractSpec) { s.Schema = mustJSON(t, `{"$ref": "https://example.com/s.json"}`) }, "schema"},
		{"bad output key", func(s *ContractSpec) { s.OutputSchema = map[string]any{"x": true} }, `output_schema["x"]`},
		{"rule syntax", func(s *ContractSpec) { s.Invariants = []InvariantSpec{{Name: "x", Rule: "post.("}} }, "invariants[0].rule"},
		{"rule type", func(s *ContractSpec) { s.Invariants = []InvariantSpec{{Name: "x", Rule: "1 + 2"}} }, "invariants[0].rule"},
		{"rule name", func(s *ContractSpec) { s.Invariants = []InvariantSpec{{Rule: "true"}} }, "invariants[0].name"},
		{"duplicate rule", func(s *ContractSpec) {
			s.Invariants = []InvariantSpec{{Name: "a", Rule: "true"}, {Name: "a", Rule: "true"}}
		}, "invariants[1].name"},
		{"duplicate phase", func(s *ContractSpec) { s.Phases = []string{"a", "a"} }, "phases[1]"},
		{"negative limit", func(s *ContractSpec) { s.Limits.MaxOps = -1 }, "limits"},
	}
	for _, tt := range tests {
		spec := ContractSpec{View: ViewSpec{Include: []string{""}}}
		tt.mod(&spec)
		_, err := Compile(spec)
		ce, ok := err.(*ContractError)
		if !ok || ce.Field != tt.field {
			t.Errorf("%s: error %v; want a ContractError on %s", tt.name, err, tt.field)
		}
	}
}

func TestParseGates(t *testing.T) {
	g, err := ParseGates("scope, acl,invariants")
	if err != nil || !g.Scope || !g.ACL || g.Phase || g.Schema || !g.Invariants {
		t.Fatalf("%+v %v", g, err)
	}
	if g, err := ParseGates("none"); err != nil || g != (GateSet{}) {
		t.Fatalf("none: %+v %v", g, err)
	}
	for _, bad := range []string{"", "scope,scope", "Scope", "commit"} {
		if _, err := ParseGates(bad); err == nil {
			t.Errorf("ParseGates(%q): want an error", bad)
		}
	}
	if DefaultGates.String() != "scope,phase,schema,invariants" {
		t.Errorf("DefaultGates = %s", DefaultGates)
	}
}

// TestWorkTimeLimit: an invariant that would run for minutes is cut off by
// the work-time limit and rejected as limit_exceeded, not left running.
func TestWorkTimeLimit(t *testing.T) {
	// The invariant nests four comprehensions over 100 elements (10^8
	// evaluations), far more than any machine evaluates in the budget,
	// while the state is a few hundred bytes: what comes before the
	// invariant (parse, apply) takes microseconds, and no schema gate
	// runs to spend the budget first. Only a stall of the whole budget
	// before the patch is applied ends elsewhere (apply/limit_exceeded);
	// that verification is tried again.
	items := make([]string, 100)
	for i := range items {
		items[i] = fmt.Sprint(i)
	}
	state := `{"list":[` + strings.Join(items, ",") + `],"n":0}`
	c := MustCompile(ContractSpec{
		View:  ViewSpec{Include: []string{""}},
		Write: []string{"/n"},
		Invariants: []InvariantSpec{{Name: "quartic",
			Rule: `post.list.all(a, post.list.all(b, post.list.all(c, post.list.all(d, a + b + c + d >= 0))))`}},
		Limits: Limits{MaxWorkMS: 200, MaxInvariantCost: 1 << 62},
	})
	var r *GateResult
	for range 3 {
		d, err := c.Verify(context.Background(), mustDoc(t, state), []byte(`[{"op":"replace","path":"/n","value":1}]`), VerifyOptions{Gates: GateSet{Invariants: true}})
		if err != nil {
			t.Fatal(err)
		}
		if d.Committed {
			t.Fatalf("committed past the work-time limit: %+v", d.Gates)
		}
		if r = d.Rejection(); r.Gate != GateApply {
			break
		}
	}
	if r.Gate != GateInvariants || r.Code != CodeLimitExceeded {
		t.Fatalf("rejection %+v; want invariants/limit_exceeded", r)
	}
}

// TestManyShiftingOperations: thousands of insertions at the front of an
// array keep a compact footprint (long shifted runs become array/*) and
// do not retain every intermediate document. Found by an adversarial run
// that took minutes and gigabytes before the fix.
func TestManyShiftingOperations(t *testing.T) {
	ops := make([]string, 5000)
	for i := range ops {
		ops[i] = fmt.Sprintf(`{"op":"add","path":"/a/0","value":%d}`, i)
	}
	c := MustCompile(ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{"/a"}, Limits: Limits{MaxOps: 10000}})
	d, err := c.Verify(context.Background(), mustDoc(t, `{"a":[],"b":1}`), []byte("["+strings.Join(ops, ",")+"]"), VerifyOptions{Gates: DefaultGates})
	if err != nil || !d.Committed {
		t.Fatalf("%v %+v", err, d.Rejection())
	}
	a := d.State.Value().(map[string]any)["a"].([]any)
	if len(a) != 5000 || toJSON(a[0]) != "4999" || toJSON(a[4999]) != "0" {
		t.Fatalf("wrong result: len %d first %v last %v", len(a), a[0], a[4999])
	}
	if n := len(d.Footprint.Write.Patterns()); n > 70 {
		t.Fatalf("write footprint has %d patterns; long shifted runs must be summarised", n)
	}
	if !d.Footprint.Write.Contains(MustPointer("/a/4000")) || d.Footprint.Write.Contains(MustPointer("/b")) {
		t.Fatalf("footprint %v", d.Footprint.Write)
	}
}

// Regressions found by an adversarial review.
func TestAdversarialRegressions(t *testing.T) {
	all := ViewSpec{Include: []string{""}}
	t.Run("giant exponents are malformed, not a panic", func(t *testing.T) {
		c := MustCompile(ContractSpec{View: all, Write: []string{"/q"},
			Schema: mustJSON(t, `{"properties":{"q":{"minimum":1,"multipleOf":0.5}}}`)})
		for _, n := range []string{"1e1000001", "1e-99999999", strings.Repeat("9", 1001)} {
			d, err := c.Verify(context.Background(), mustDoc(t, `{"q":1}`), []byte(`[{"op":"replace","path":"/q","value":`+n+`}]`), VerifyOptions{Gates: DefaultGates})
			if err != nil || d.Committed || d.Rejection().Code != CodeMalformed {
				t.Errorf("%.20s: %v %+v", n, err, d.Gates)
			}
		}
		if _, err := ParseDocument([]byte(`{"q":1e1000001}`)); err == nil {
			t.Error("a state with a giant exponent must not parse")
		}
		if _, err := Compile(ContractSpec{View: all, Schema: map[string]any{"multipleOf": json.Number("1e-9999")}}); err == nil {
			t.Error("a schema with a giant exponent must not compile")
		}
		d, _ := c.Verify(context.Background(), mustDoc(t, `{"q":1}`), []byte(`[{"op":"replace","path":"/q","value":1e999}]`), VerifyOptions{Gates: DefaultGates})
		if !d.Committed {
			t.Errorf("1e999 is within range and a multiple of 0.5: %+v", d.Gates)
		}
	})
	t.Run("shifts do not make copied names the actor's own", func(t *testing.T) {
		c := MustCompile(ContractSpec{
			View: ViewSpec{Include: []string{"/ticket"}, Exclude: []string{"/ticket/internal"}}, Write: []string{"/ticket/tags"}, Source: []string{"/ticket"},
			OutputSchema: map[string]any{"/ticket/tags": mustJSON(t, `{"items":{"type":["string","object"],"properties":{"label":{"type":"string"}},"unevaluatedProperties":false}}`)},
		})
		state := mustDoc(t, `{"ticket":{"id":"T-1","tags":["billing"],"internal":{"CANARY_fraud_flag":true}}}`)
		for _, patch := range []string{
			`[{"op":"add","path":"/ticket/tags/1","value":"x"},{"op":"copy","from":"/ticket/internal","path":"/ticket/tags/0"},{"op":"add","path":"/ticket/tags/0","value":"y"}]`,
			`[{"op":"copy","from":"/ticket/internal","path":"/ticket/tags/0"}]`,
		} {
			d, _ := c.Verify(context.Background(), state, []byte(patch), VerifyOptions{Gates: GateSet{ACL: true, Schema: true}})
			r := d.Rejection()
			if r == nil || r.Code != CodeOutputSchema || strings.Contains(r.Pointer+r.Message, "CANARY") {
				t.Errorf("%s: %+v", patch, d.Gates)
			}
		}
	})
	t.Run("move onto itself with empty names is a no-op", func(t *testing.T) {
		state := mustDoc(t, `{"":{"draft":"hello"},"vault":{"pan":"CANARY"},"x":{"":{"keep":"me"}}}`)
		for _, patch := range []string{`[{"op":"move","from":"/","path":"/"}]`, `[{"op":"move","from":"/x/","path":"/x/"}]`} {
			d, err := openContract.Verify(context.Background(), state, []byte(patch), VerifyOptions{})
			if err != nil || !d.Committed || !equalJSON(d.State.Value(), state.Value()) {
				t.Errorf("%s: %v %s", patch, err, docText(d.State))
			}
		}
		d, _ := openContract.Verify(context.Background(), mustDoc(t, `{"":1}`), []byte(`[{"op":"copy","from":"/","path":"/b"}]`), VerifyOptions{})
		if !d.Committed || toJSON(d.State.Value()) != `{"":1,"b":1}` {
			t.Errorf("copy from the empty member: %+v %s", d.Gates, docText(d.State))
		}
	})
	t.Run("output schema keyed by an append pattern", func(t *testing.T) {
		c := MustCompile(ContractSpec{View: all, Write: []string{"/audit/-"}, OutputSchema: map[string]any{"/audit/-": mustJSON(t, `{"type":"string"}`)}})
		d, _ := c.Verify(context.Background(), mustDoc(t, `{"audit":["a"]}`), []byte(`[{"op":"add","path":"/audit/-","value":{"not":"a string"}}]`), VerifyOptions{Gates: DefaultGates})
		if d.Committed || d.Rejection().Code != CodeOutputSchema {
			t.Errorf("%+v", d.Gates)
		}
		d, _ = c.Verify(context.Background(), mustDoc(t, `{"audit":[1]}`), []byte(`[{"op":"add","path":"/audit/-","value":"ok"}]`), VerifyOptions{Gates: DefaultGates})
		if !d.Committed {
			t.Errorf("existing elements are not checked: %+v", d.Gates)
		}
	})
	t.Run("invariants never compare big numbers approximately", func(t *testing.T) {
		c := MustCompile(ContractSpec{View: all, Write: []string{"/id", "/c"}, Invariants: []InvariantSpec{
			{Name: "id kept", Rule: "post.id == pre.id"}, {Name: "no refund", Rule: "post.c == 0"}}})
		d, _ := c.Verify(context.Background(), mustDoc(t, `{"id":98765432109876543210987,"c":0}`), []byte(`[{"op":"replace","path":"/id","value":98765432109876543210000}]`), VerifyOptions{Gates: DefaultGates})
		if d.Committed || d.Rejection().Code != CodeInexactNumber {
			t.Errorf("big id: %+v", d.Gates)
		}
		d, _ = c.Verify(context.Background(), mustDoc(t, `{"id":1,"c":0}`), []byte(`[{"op":"replace","path":"/c","value":1e-400}]`), VerifyOptions{Gates: DefaultGates})
		if d.Committed || d.Rejection().Code != CodeInexactNumber {
			t.Errorf("underflow: %+v", d.Gates)
		}
		d, _ = c.Verify(context.Background(), mustDoc(t, `{"id":1,"c":0}`), []byte(`[{"op":"replace","path":"/c","value":0.0}]`), VerifyOptions{Gates: DefaultGates})
		if !d.Committed {
			t.Errorf("0.0 == 0: %+v", d.Gates)
		}
	})
	t.Run("a patch cannot nest the state past the depth limit", func(t *testing.T) {
		deep := strings.Repeat(`{"a":`, 300) + "1" + strings.Repeat("}", 300)
		ops := `[{"op":"add","path":"/x","value":` + deep + `},{"op":"copy","from":"/x","path":"/x` + strings.Repeat("/a", 299) + `/b"}]`
		d, err := openContract.Verify(context.Background(), mustDoc(t, `{}`), []byte(ops), VerifyOptions{})
		if err != nil || d.Committed || d.Rejection().Code != CodeLimitExceeded {
			t.Errorf("%v %+v", err, d.Gates)
		}
	})
	t.Run("state text must be UTF-8", func(t *testing.T) {
		if _, err := ParseDocument([]byte("{\"a\":\"\xff\"}")); err == nil || !strings.Contains(err.Error(), "UTF-8") {
			t.Errorf("%v", err)
		}
	})
	t.Run("limits have ceilings", func(t *testing.T) {
		for _, l := range []Limits{{MaxWorkMS: 9300000000000}, {MaxDepth: 100000000}} {
			if _, err := Compile(ContractSpec{View: all, Limits: l}); err == nil {
				t.Errorf("%+v accepted", l)
			}
		}
	})
}

// TestInPlaceOwnership: the simulation changes containers it created in
// place, but never one that is reachable from two places or from the
// input.
func TestInPlaceOwnership(t *testing.T) {
	tests := []struct{ state, patch, want string }{
		{`{}`, `[{"op":"add","path":"/a","value":{"x":1}},{"op":"copy","from":"/a","path":"/b"},{"op":"replace","path":"/b/x","value":2}]`, `{"a":{"x":1},"b":{"x":2}}`},
		{`{"a":{"x":[1]}}`, `[{"op":"add","path":"/a/y","value":0},{"op":"copy","from":"/a","path":"/b"},{"op":"add","path":"/a/x/-","value":2},{"op":"remove","path":"/b/y"}]`, `{"a":{"x":[1,2],"y":0},"b":{"x":[1]}}`},
		{`{"l":[1,2,3]}`, `[{"op":"remove","path":"/l/0"},{"op":"copy","from":"/l","path":"/m"},{"op":"add","path":"/l/0","value":9},{"op":"move","from":"/m/1","path":"/m/0"}]`, `{"l":[9,2,3],"m":[3,2]}`},
		{`{"a":{}}`, `[{"op":"add","path":"/a/y","value":0},{"op":"copy","from":"/a","path":"/a/b"}]`, `{"a":{"y":0,"b":{"y":0}}}`},
		{`{"l":[]}`, `[{"op":"add","path":"/l/-","value":1},{"op":"add","path":"/l/0","value":0},{"op":"replace","path":"","value":{"k":[]}},{"op":"add","path":"/k/-","value":5}]`, `{"k":[5]}`},
	}
	for _, tt := range tests {
		doc := mustDoc(t, tt.state)
		before := toJSON(doc.Value())
		d, err := openContract.Verify(context.Background(), doc, []byte(tt.patch), VerifyOptions{})
		if err != nil || !d.Committed {
			t.Fatalf("%s: %v %+v", tt.patch, err, d.Gates)
		}
		if got := toJSON(d.State.Value()); got != toJSON(mustJSON(t, tt.want)) {
			t.Errorf("%s = %s, want %s", tt.patch, got, tt.want)
		}
		if toJSON(doc.Value()) != before {
			t.Errorf("%s modified the input state", tt.patch)
		}
	}
}
