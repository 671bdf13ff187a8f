package bench

import (
	"errors"
	"fmt"
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
		c := jsonschema.NewCompiler()
		c.DefaultDraft(jsonschema.Draft2020)
		const url = "mem:///case.schema.json"
		if err := c.AddResource(url, doc); err != nil {
			caseSchemaErr = err
			return
		}
		caseSchema, caseSchemaErr = c.Compile(url)
	})
	return caseSchema, caseSchemaErr
}

var schemaPrinter = message.NewPrinter(language.English)

// schemaProblems validates a case file's value against the case schema
// and returns one problem per failing leaf, with the line of the value at
// fault (or of the offending key, for an unknown key).
func schemaProblems(file string, root *yaml.Node, v any) Problems {
	s, err := CaseSchema()
	if err != nil {
		return Problems{{File: file, Msg: "case schema: " + err.Error()}}
	}
	err = s.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return Problems{{File: file, Msg: err.Error()}}
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
		line := nodeLine(root, at)
		if ap, ok := e.ErrorKind.(*kind.AdditionalProperties); ok && len(ap.Properties) > 0 {
			line = nodeLine(root, at.Append(ap.Properties[0]))
			if l := keyLine(root, at, ap.Properties[0]); l > 0 {
				line = l
			}
		}
		where := at.String()
		if where == "" {
			where = "the case"
		}
		msg := fmt.Sprintf("%s: %s", where, e.ErrorKind.LocalizedString(schemaPrinter))
		if seen[msg] {
			return
		}
		seen[msg] = true
		ps = append(ps, Problem{File: file, Line: line, Case: id, Msg: msg})
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
