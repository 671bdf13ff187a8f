package bench

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"strconv"

	"go.yaml.in/yaml/v3"
)

// maxYAMLNodes bounds the nodes one conversion may visit, so that aliases
// cannot expand a small file into an enormous value.
const maxYAMLNodes = 1_000_000

var jsonNumberText = regexp.MustCompile(`^-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?$`)

// YAMLToJSON converts a YAML node to a decoded JSON value (nil, bool,
// string, json.Number, []any, map[string]any), the form the runtime takes.
// Numbers already spelled as JSON keep their exact text; other YAML
// numbers (0x1f, +5, 1_000) are converted. Mapping keys must be scalars
// and become their text. Infinity, NaN and binary data have no JSON form
// and are errors, which name the line.
func YAMLToJSON(n *yaml.Node) (any, error) {
	return newYAMLConverter().convert(n)
}

// maxYAMLBytes bounds the text (scalars and member names) one conversion
// may produce, so that aliases of long strings cannot expand a small file
// into gigabytes.
const maxYAMLBytes = 16 << 20

// yamlBudget is what a conversion may still produce.
type yamlBudget struct {
	nodes int
	bytes int
}

// yamlConverter converts several nodes of one file under one budget, so
// that aliases spread over many keys cannot multiply it.
type yamlConverter struct{ budget yamlBudget }

func newYAMLConverter() *yamlConverter {
	return &yamlConverter{budget: yamlBudget{nodes: maxYAMLNodes, bytes: maxYAMLBytes}}
}

func (c *yamlConverter) convert(n *yaml.Node) (any, error) { return yamlToJSON(n, &c.budget) }

func yamlToJSON(n *yaml.Node, budget *yamlBudget) (any, error) {
	budget.nodes--
	if n.Kind == yaml.ScalarNode {
		budget.bytes -= len(n.Value)
	}
	if budget.nodes < 0 {
		return nil, fmt.Errorf("line %d: the document expands to more than %d nodes (aliases?)", n.Line, maxYAMLNodes)
	}
	if budget.bytes < 0 {
		return nil, fmt.Errorf("line %d: the document expands to more than %d MiB of text (aliases?)", n.Line, maxYAMLBytes>>20)
	}
	switch n.Kind {
	case yaml.DocumentNode:
		if len(n.Content) == 0 {
			return nil, nil
		}
		return yamlToJSON(n.Content[0], budget)
	case yaml.AliasNode:
		return yamlToJSON(n.Alias, budget)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, err := yamlToJSON(c, budget)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	case yaml.MappingNode:
		out := make(map[string]any, len(n.Content)/2)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k, v := n.Content[i], n.Content[i+1]
			if k.Kind == yaml.AliasNode {
				k = k.Alias
			}
			if k.Kind != yaml.ScalarNode {
				return nil, fmt.Errorf("line %d: a mapping key must be a scalar to become a JSON member name", k.Line)
			}
			if k.Tag == "!!merge" {
				return nil, fmt.Errorf("line %d: merge keys (<<) are not supported", k.Line)
			}
			budget.bytes -= len(k.Value)
			if _, dup := out[k.Value]; dup {
				return nil, fmt.Errorf("line %d: member %q defined twice", k.Line, k.Value)
			}
			cv, err := yamlToJSON(v, budget)
			if err != nil {
				return nil, err
			}
			out[k.Value] = cv
		}
		return out, nil
	case yaml.ScalarNode:
		return scalarToJSON(n)
	}
	return nil, fmt.Errorf("line %d: unsupported YAML node", n.Line)
}

func scalarToJSON(n *yaml.Node) (any, error) {
	switch n.ShortTag() {
	case "!!null":
		return nil, nil
	case "!!bool":
		var b bool
		if err := n.Decode(&b); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		return b, nil
	case "!!int":
		if jsonNumberText.MatchString(n.Value) {
			return json.Number(n.Value), nil
		}
		var i int64
		if err := n.Decode(&i); err == nil {
			return json.Number(strconv.FormatInt(i, 10)), nil
		}
		var u uint64
		if err := n.Decode(&u); err == nil {
			return json.Number(strconv.FormatUint(u, 10)), nil
		}
		return nil, fmt.Errorf("line %d: %q is not an integer, or is out of range", n.Line, n.Value)
	case "!!float":
		if jsonNumberText.MatchString(n.Value) {
			return json.Number(n.Value), nil
		}
		var f float64
		if err := n.Decode(&f); err != nil {
			return nil, fmt.Errorf("line %d: %w", n.Line, err)
		}
		if math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, fmt.Errorf("line %d: %s has no JSON form", n.Line, n.Value)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case "!!binary":
		return nil, fmt.Errorf("line %d: binary data has no JSON form", n.Line)
	default: // !!str, !!timestamp and custom tags keep their text
		if n.Style == 0 && jsonNumberText.MatchString(n.Value) {
			// A plain number beyond float64 (1e400, a 400-digit
			// integer), which YAML resolves as a string, is a number.
			return json.Number(n.Value), nil
		}
		return n.Value, nil
	}
}
