package bench

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/runtime"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"go.yaml.in/yaml/v3"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// CaseSchemaFile is the path of the case format's JSON Schema inside
// EmbeddedCases.
const CaseSchemaFile = "case.schema.json"

var (
	caseSchemaOnce sync.Once
	caseSchema     *jsonschema.Schema
	caseSchemaDoc  any // the schema as decoded JSON, for known-key lookups
	caseSchemaErr  error
)

// CaseSchema returns the compiled JSON Schema (draft 2020-12) of one case
// file, bench/cases/case.schema.json.
func CaseSchema() (*jsonschema.Schema, error) {
	caseSchemaOnce.Do(func() {
		b, err := embedded.ReadFile("cases/" + CaseSchemaFile)
		if err != nil {
			caseSchemaErr = err
			return
		}
		doc, err := jsonschema.UnmarshalJSON(strings.NewReader(string(b)))
		if err != nil {
			caseSchemaErr = fmt.Errorf("%s: %w", CaseSchemaFile, err)
			return
		}
		caseSchemaDoc = doc
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		if err := c.AddResource(caseSchemaURL, doc); err != nil {
			caseSchemaErr = err
			return
		}
		caseSchema, caseSchemaErr = c.Compile(caseSchemaURL)
	})
	return caseSchema, caseSchemaErr
}

const caseSchemaURL = "mem:///case.schema.json"

var schemaPrinter = message.NewPrinter(language.English)

const pointerPattern = "^(/([^~]|~[01])*)*$"

// schemaMessage explains one failing leaf of the case schema in the terms
// of docs/cases.md, falling back on the library's own words.
func schemaMessage(e *jsonschema.ValidationError) string {
	at := runtime.Pointer(e.InstanceLocation)
	inRubric := len(at) == 4 && at[0] == "steps" && at[2] == "rubric"
	switch k := e.ErrorKind.(type) {
	case *kind.MinProperties, *kind.MaxProperties:
		if inRubric {
			return "a rubric check has an id, a path and exactly one test: equals, contains_all, contains_any, mentions, matches, within, absent, length or rule"
		}
	case *kind.Not:
		if len(at) == 2 && at[0] == "injections" {
			return "only a copy or move injection names a destination (into); a test or quote injection has none"
		}
	case *kind.Required:
		if len(at) == 2 && at[0] == "injections" && slices.Contains(k.Missing, "into") {
			return "a copy or move injection names its destination: into, a JSON Pointer the step may write (where the injected text asks the value to go)"
		}
	case *kind.OneOf:
		if len(at) == 2 && at[0] == "artifacts" {
			return "an artifact has either a patch or raw text (for a malformed one), not both"
		}
	case *kind.Pattern:
		if k.Want == `^[^\n\r]*$` {
			return "a title is one line"
		}
		if len(at) == 1 && at[0] == "domain" {
			return fmt.Sprintf("a domain is a lower-case word (letters, digits and -, such as finance), the name of the case's directory; not %q", k.Got)
		}
		if len(at) == 1 && at[0] == "now" {
			return fmt.Sprintf("now %q is not an RFC 3339 date and time such as 2025-10-01T09:30:00Z", k.Got)
		}
		if k.Want == pointerPattern {
			return fmt.Sprintf("%q is not a JSON Pointer: it must be empty or start with \"/\" (RFC 6901)", k.Got)
		}
	case *kind.AdditionalProperties:
		known := knownProperties(e.SchemaURL)
		var parts []string
		for _, p := range k.Properties {
			msg := fmt.Sprintf("unknown key %q", p)
			if near := closest(p, known); near != "" {
				msg += fmt.Sprintf(" (did you mean %q?)", near)
			}
			parts = append(parts, msg)
		}
		if len(known) > 0 {
			return strings.Join(parts, "; ") + "; known keys: " + strings.Join(known, ", ")
		}
		return strings.Join(parts, "; ")
	}
	return e.ErrorKind.LocalizedString(schemaPrinter)
}

// knownProperties returns the property names the schema at url (a
// location inside the case schema) allows, sorted.
func knownProperties(url string) []string {
	_, frag, ok := strings.Cut(url, "#")
	if !ok {
		return nil
	}
	p, err := runtime.ParsePointer(frag)
	if err != nil {
		return nil
	}
	node, ok := runtime.Lookup(caseSchemaDoc, p)
	if !ok {
		return nil
	}
	props, _ := runtime.Lookup(node, runtime.Pointer{"properties"})
	m, _ := props.(map[string]any)
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// closest returns the known key nearest to key by edit distance, when it
// is near enough to be a likely typo, or one that key is a prefix of.
func closest(key string, known []string) string {
	best, bestD := "", 1<<30
	for _, k := range known {
		d := editDistance(key, k)
		if strings.HasPrefix(k, key) && len(key) >= 3 {
			d = min(d, 1)
		}
		if d < bestD {
			best, bestD = k, d
		}
	}
	if bestD <= 2 || (bestD <= 3 && len(key) > 6) {
		return best
	}
	return ""
}

func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// schemaProblems validates a case file's value against the case schema
// and returns one problem per failing leaf, with the line of the value at
// fault (or of the offending key, for an unknown key).
func schemaProblems(file string, root *yaml.Node, v any) Problems {
	s, err := CaseSchema()
	if err != nil {
		return Problems{{File: file, Code: ProblemSchema, Msg: "case schema: " + err.Error()}}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Problems{{File: file, Code: ProblemSchema, Msg: err.Error()}}
	}
	id, _ := lookupString(v, "id")
	seen := map[string]bool{}
	var ps Problems
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := runtime.Pointer(e.InstanceLocation)
		line, code := nodeLine(root, at), ProblemSchema
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
			line, code = nodeLine(root, at.Append(ap.Properties[0])), ProblemUnknownKey
			if l := keyLine(root, at, ap.Properties[0]); l > 0 {
				line = l
			}
		}
		where := at.String()
		if where == "" {
			where = "the case"
		}
		msg := fmt.Sprintf("%s: %s", where, schemaMessage(e))
		if seen[msg] {
			return
		}
		seen[msg] = true
		ps = append(ps, Problem{File: file, Line: line, Case: id, Code: code, Msg: msg})
	}
	walk(ve)
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Line < ps[j].Line })
	return ps
}

// keyLine returns the line of member key's name in the mapping at p.
func keyLine(root *yaml.Node, p runtime.Pointer, key string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, tok := range p {
		var next *yaml.Node
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				if n.Content[i].Value == tok {
					next = n.Content[i+1]
				}
			}
		case yaml.SequenceNode:
			if i, err := runtime.ParseIndex(tok); err == nil && i < len(n.Content) {
				next = n.Content[i]
			}
		}
		if next == nil {
			return 0
		}
		n = next
	}
	if n.Kind != yaml.MappingNode {
		return 0
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i].Line
		}
	}
	return 0
}

func lookupString(v any, key string) (string, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		return "", false
	}
	s, ok := m[key].(string)
	return s, ok
}
