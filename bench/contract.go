package bench

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/patchbench/patchbench/internal/regularfile"
	"github.com/patchbench/patchbench/runtime"
	"go.yaml.in/yaml/v3"
)

// contractFile is the on-disk form of a step contract: the step-contract
// keys of a case (docs/cases.md, A step), in YAML or JSON.
type contractFile struct {
	View         runtime.ViewSpec        `yaml:"view"`
	Write        []string                `yaml:"write"`
	Source       []string                `yaml:"source"`
	Phases       []string                `yaml:"phases"`
	Schema       yaml.Node               `yaml:"schema"`
	OutputSchema map[string]yaml.Node    `yaml:"output_schema"`
	Invariants   []runtime.InvariantSpec `yaml:"invariants"`
	Limits       yaml.Node               `yaml:"limits"`
}

// knownKeys lists the keys of each decoded type, for unknown-key errors.
var knownKeys = map[string][]string{
	"bench.contractFile":    yamlKeys(reflect.TypeFor[contractFile]()),
	"runtime.ViewSpec":      yamlKeys(reflect.TypeFor[runtime.ViewSpec]()),
	"runtime.InvariantSpec": yamlKeys(reflect.TypeFor[runtime.InvariantSpec]()),
	"runtime.Limits":        yamlKeys(reflect.TypeFor[runtime.Limits]()),
}

func yamlKeys(t reflect.Type) []string {
	var out []string
	for i := 0; i < t.NumField(); i++ {
		if k, _, _ := strings.Cut(t.Field(i).Tag.Get("yaml"), ","); k != "" {
			out = append(out, k)
		}
	}
	return out
}

var unknownField = regexp.MustCompile(`field (\S+) not found in type (\S+)`)

// FileError is a problem in an input file, with the file name and, when
// known, the 1-based line.
type FileError struct {
	File string
	Line int
	Err  error
}

func (e *FileError) Error() string {
	if e.Line > 0 {
		return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err)
	}
	return fmt.Sprintf("%s: %v", e.File, e.Err)
}

func (e *FileError) Unwrap() error { return e.Err }

var yamlLine = regexp.MustCompile(`line (\d+): `)

// yamlError turns a go.yaml.in/yaml/v3 error into a FileError, moving the
// first line number the library reports into Line and, when root is
// given, naming the key whose value sits on that line.
func yamlError(file string, err error, root *yaml.Node) error {
	msg := strings.TrimPrefix(err.Error(), "yaml: ")
	msg = strings.TrimPrefix(msg, "unmarshal errors:\n")
	msg = strings.TrimSpace(msg)
	line := 0
	if m := yamlLine.FindStringSubmatch(msg); m != nil {
		line, _ = strconv.Atoi(m[1])
		msg = strings.Replace(msg, m[0], "", 1)
		if key := keyAtLine(root, line, ""); key != "" && strings.HasPrefix(msg, "cannot unmarshal") {
			msg = key + ": " + msg
		}
	}
	if m := unknownField.FindStringSubmatch(msg); m != nil {
		repl := fmt.Sprintf("unknown key %q", m[1])
		if keys, ok := knownKeys[m[2]]; ok {
			repl += " (known keys: " + strings.Join(keys, ", ") + ")"
		}
		msg = strings.Replace(msg, m[0], repl, 1)
	}
	return &FileError{File: file, Line: line, Err: errors.New(msg)}
}

// YAMLError is yamlError for other YAML files of the module (a run's plan
// file): err as a *FileError naming file and the line, and the key on
// that line when root is given.
func YAMLError(file string, err error, root *yaml.Node) error { return yamlError(file, err, root) }

// LoadContractFile reads a step contract from a YAML or JSON file and
// compiles it. Unknown keys, wrong types, duplicate keys and every compile
// error (bad pattern, schema or rule) are *FileError values naming the
// file and, where it can be found, the line.
func LoadContractFile(path string) (*runtime.Contract, error) {
	b, err := regularfile.Read(path, MaxContractFileBytes)
	if err != nil {
		return nil, err
	}
	return ParseContract(path, b)
}

// MaxContractFileBytes bounds a contract file LoadContractFile reads (1
// MiB; a contract is a schema, regions and rules, a few KB): a contract
// decodes into about 100 times its text, and --contract /dev/zero grew
// view and verify without end. A longer file is
// a *regularfile.TooLargeError; a FIFO or device a
// *regularfile.NotRegularError.
const MaxContractFileBytes = 1 << 20

// ParseContract is LoadContractFile on bytes already read; name is used in
// errors.
func ParseContract(name string, b []byte) (*runtime.Contract, error) {
	if strings.EqualFold(filepath.Ext(name), ".json") {
		// YAML accepts more than JSON (trailing commas, comments); a
		// .json file must be JSON.
		if _, err := runtime.ParseDocument(b); err != nil {
			return nil, &FileError{File: name, Err: err}
		}
	}
	if !utf8.Valid(b) {
		line := 1 + bytes.Count(b[:invalidUTF8At(b)], []byte{'\n'})
		return nil, &FileError{File: name, Line: line, Err: errors.New("invalid UTF-8")}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(name, err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &FileError{File: name, Err: errors.New("empty contract")}
	}
	var cf contractFile
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&cf); err != nil {
		return nil, yamlError(name, err, &root)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &FileError{File: name, Line: extra.Line, Err: errors.New("more than one YAML document; a contract file holds one")}
	}
	spec := runtime.ContractSpec{
		View: cf.View, Write: cf.Write, Source: cf.Source, Phases: cf.Phases,
		Invariants: cf.Invariants,
	}
	conv := newYAMLConverter()
	if cf.Limits.Kind != 0 {
		if err := decodeLimits(conv, &cf.Limits, &spec.Limits); err != nil {
			return nil, &FileError{File: name, Line: cf.Limits.Line, Err: fmt.Errorf("limits: %w", err)}
		}
	}
	if cf.Schema.Kind != 0 {
		var err error
		if spec.Schema, err = conv.convert(&cf.Schema); err != nil {
			return nil, &FileError{File: name, Err: fmt.Errorf("schema: %w", err)}
		}
	}
	if len(cf.OutputSchema) > 0 {
		spec.OutputSchema = map[string]any{}
		for k, n := range cf.OutputSchema {
			v, err := conv.convert(&n)
			if err != nil {
				return nil, &FileError{File: name, Err: fmt.Errorf("output_schema[%q]: %w", k, err)}
			}
			spec.OutputSchema[k] = v
		}
	}
	c, err := runtime.Compile(spec)
	if err != nil {
		line := 0
		var ce *runtime.ContractError
		if errors.As(err, &ce) {
			line = fieldLine(root.Content[0], ce.Field)
		}
		return nil, &FileError{File: name, Line: line, Err: err}
	}
	return c, nil
}

// invalidUTF8At returns the offset of the first byte that is not UTF-8.
func invalidUTF8At(b []byte) int {
	off := 0
	for off < len(b) {
		r, size := utf8.DecodeRune(b[off:])
		if r == utf8.RuneError && size <= 1 {
			return off
		}
		off += size
	}
	return off
}

// decodeLimits decodes the limits mapping strictly: integers only, known
// keys only.
func decodeLimits(conv *yamlConverter, n *yaml.Node, l *runtime.Limits) error {
	v, err := conv.convert(n)
	if err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(l); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return fmt.Errorf("%s must be a non-negative integer", te.Field)
		}
		if strings.HasPrefix(err.Error(), "json: unknown field ") {
			return fmt.Errorf("unknown key %s (known keys: %s)", strings.TrimPrefix(err.Error(), "json: unknown field "), strings.Join(knownKeys["runtime.Limits"], ", "))
		}
		return err
	}
	return nil
}

var fieldPart = regexp.MustCompile(`^([a-z_]+)(?:\[(\d+)\]|\["((?:[^"\\]|\\.)*)"\])?`)

// fieldLine finds the line of a field path such as "view.include",
// "invariants[2].rule" or `output_schema["/a"]` in a YAML mapping; 0 when
// it cannot be found.
func fieldLine(n *yaml.Node, field string) int {
	line := 0
	for _, part := range strings.Split(field, ".") {
		m := fieldPart.FindStringSubmatch(part)
		if m == nil || n == nil {
			return line
		}
		n = mapValue(n, m[1])
		if n == nil {
			return line
		}
		line = n.Line
		switch {
		case m[2] != "":
			i, _ := strconv.Atoi(m[2])
			if n.Kind != yaml.SequenceNode || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
		case m[3] != "":
			key, err := strconv.Unquote(`"` + m[3] + `"`)
			if err != nil {
				return line
			}
			if n = mapValue(n, key); n == nil {
				return line
			}
			line = n.Line
		}
	}
	return line
}

// keyAtLine returns the dotted path of the mapping key whose value starts
// on line, or "".
func keyAtLine(n *yaml.Node, line int, prefix string) string {
	if n == nil {
		return ""
	}
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		return keyAtLine(n.Content[0], line, prefix)
	}
	if n.Kind != yaml.MappingNode {
		return ""
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, v := n.Content[i], n.Content[i+1]
		path := k.Value
		if prefix != "" {
			path = prefix + "." + k.Value
		}
		if inner := keyAtLine(v, line, path); inner != "" {
			return inner
		}
		if v.Line == line {
			return path
		}
	}
	return ""
}

func mapValue(n *yaml.Node, key string) *yaml.Node {
	if n.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		if n.Content[i].Value == key {
			return n.Content[i+1]
		}
	}
	return nil
}
