package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
)

// PlanVersion is the version of the plan file format Plan reads.
const PlanVersion = 1

// Plan is an experiment written down (patchbench run --plan FILE): the
// settings of the runs (runspec.Spec), each by its plan key (the Spec
// field's plan tag: "rounds", "limits.max_attempts"), as data. A key left
// out is the flag's default. The command line's flags that are not about
// the runs (--out, --concurrency, --cache, --progress, --retry-errors,
// --shard, --format) stay on the command line.
//
// The file is YAML (go.yaml.in/yaml/v3): version (PlanVersion), then the
// keys, grouped in sections (cases, configs, settings, limits, scoring)
// by the first part of their dotted name. Unknown keys, wrong types,
// values out of range and a version other than PlanVersion are errors
// naming the file and line (*bench.FileError). docs/plans/ holds
// examples.
type Plan struct {
	// Version is PlanVersion.
	Version int
	// Spec holds the settings of the keys the plan gives (Has); the
	// others are zero.
	Spec runspec.Spec

	// set holds the keys the plan gives; file is the plan file's name
	// and lines the line of each key read from it (Where); a plan not
	// read from a file has none. durations holds a duration key's text
	// as the file writes it (90s), which YAML writes back, so that the
	// digest is the file's.
	set       map[string]bool
	file      string
	lines     map[string]int
	durations map[string]string
}

// NewPlan is the plan of the settings s: every key, but those of an empty
// string, an empty list or a number left unset (the temperature), which
// are their defaults, and those tagged omit:"default" at their default
// (cases.limit, cases.sample, cases.sample_seed). patchbench plan --print prints it.
func NewPlan(s runspec.Spec) *Plan {
	p := &Plan{Version: PlanVersion, Spec: s, set: map[string]bool{}}
	def := runspec.Default()
	for _, f := range runspec.Fields() {
		if f.Tag.Get("omit") == "default" && reflect.DeepEqual(f.Value(&p.Spec).Interface(), f.Value(&def).Interface()) {
			continue
		}
		if f.Key != "" && !emptyValue(f.Value(&p.Spec)) {
			p.set[f.Key] = true
		}
	}
	return p
}

// emptyValue reports whether a setting's value is "left out": an empty
// string or list, or a nil pointer.
func emptyValue(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.String, reflect.Slice:
		return v.Len() == 0
	case reflect.Pointer:
		return v.IsNil()
	}
	return false
}

// Has reports whether the plan gives the key (a Spec field's plan tag).
func (p *Plan) Has(key string) bool { return p.set[key] }

// Where is the file a plan was read from (ParsePlan's name) and the
// line of key in it: a dotted key path ("rounds", "limits.max_attempts"),
// or a list key with the 0-based index of an item ("actors.1"), whose
// line is the item's. The line is 0 when the plan does not hold the key
// or was not read from a file.
func (p *Plan) Where(key string) (file string, line int) {
	return p.file, p.lines[key]
}

// MaxPlanBytes bounds a plan file.
const MaxPlanBytes = 1 << 20

// ParsePlan reads a plan from YAML; name is the file's name in errors.
// Unknown keys, wrong types, values out of range (runspec.Spec.Check's
// ranges), several documents and a missing or other version are
// *bench.FileError values with the line where it is known. Every key's
// value must have the key's type, as YAML reads it: an integer key takes
// an integer (not 2.5, 2.0 or "2"), a number key an integer or a float, a
// boolean key true or false, a string key a string (quote a number:
// "42"; a duration is a string: 90s), a list key a list of strings, and a
// section (cases, settings, ...) a mapping; null is a key left out. A
// wrong type is refused as "FILE:LINE: key: want an integer, got 2.5". A
// value that would read as the key left out is refused too, as its flag
// refuses it or because a key left out says it better: rounds: 0 (out of
// its range), an empty list ("actors: an empty list; leave the key out
// for the default actors", the field's omitted tag) and an empty string.
// A missing or null version is refused as "version: required". YAML's
// merge keys (<<), anchors and aliases are refused (checkWrittenOut).
func ParsePlan(name string, b []byte) (*Plan, error) {
	if len(b) > MaxPlanBytes {
		return nil, &bench.FileError{File: name, Err: fmt.Errorf("larger than %d bytes", MaxPlanBytes)}
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	var root, extra yaml.Node
	if err := dec.Decode(&root); err != nil && err != io.EOF {
		return nil, bench.YAMLError(name, err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &bench.FileError{File: name, Err: errors.New("empty plan (it needs at least version: 1)")}
	}
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &bench.FileError{File: name, Line: extra.Line, Err: errors.New("more than one YAML document; a plan file holds one")}
	}
	if err := checkWrittenOut(name, root.Content[0]); err != nil {
		return nil, err
	}
	p := &Plan{set: map[string]bool{}, file: name, lines: map[string]int{}, durations: map[string]string{}}
	top := root.Content[0] // no aliases: checkWrittenOut
	if top.Kind != yaml.MappingNode {
		return nil, &bench.FileError{File: name, Line: top.Line, Err: fmt.Errorf("the plan: want a mapping of keys, got %s", yamlValue(top))}
	}
	if err := p.readMapping(name, top, ""); err != nil {
		return nil, err
	}
	if v := keyNode(&root, "version"); v == nil || isNull(v) {
		return nil, &bench.FileError{File: name, Line: keyLine(&root, "version"), Err: fmt.Errorf("version: required (version: %d)", PlanVersion)}
	}
	if p.Version != PlanVersion {
		return nil, &bench.FileError{File: name, Line: keyLine(&root, "version"), Err: fmt.Errorf("version: must be %d, not %d", PlanVersion, p.Version)}
	}
	for _, f := range runspec.Fields() {
		if p.set[f.Key] {
			if why := f.Check(&p.Spec); why != "" {
				return nil, &bench.FileError{File: name, Line: p.lines[f.Key], Err: fmt.Errorf("%s: %s", f.Key, why)}
			}
		}
	}
	return p, nil
}

// checkWrittenOut refuses, anywhere under the YAML node n, what makes one
// part of a plan copy another: a merge key (<<), an alias (*NAME) and an
// anchor (&NAME). The decoder would take a merged value past the type
// check (2.5 merged into an integer key is cut to 2), and a plan reads
// plainly without them. The first merge key or alias is named, else the
// first anchor (an anchor comes before its uses, and the use says more),
// in a *bench.FileError with the line and the key (a dotted path, "the
// plan" for the top).
func checkWrittenOut(name string, n *yaml.Node) error {
	var anchor error
	var walk func(n *yaml.Node, key string) error
	walk = func(n *yaml.Node, key string) error {
		what := key
		if what == "" {
			what = "the plan"
		}
		if n.Kind == yaml.AliasNode {
			return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: aliases (*%s) are not supported in a plan; write the value out", what, n.Value)}
		}
		if n.Anchor != "" && anchor == nil {
			anchor = &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: anchors (&%s) are not supported in a plan; write the value out where it is used", what, n.Anchor)}
		}
		switch n.Kind {
		case yaml.MappingNode:
			for i := 0; i+1 < len(n.Content); i += 2 {
				k := n.Content[i]
				if k.ShortTag() == "!!merge" || k.Value == "<<" {
					return &bench.FileError{File: name, Line: k.Line, Err: fmt.Errorf("%s: merge keys (<<) are not supported in a plan; write the keys out", what)}
				}
				child := k.Value
				if key != "" {
					child = key + "." + child
				}
				if err := walk(k, key); err != nil {
					return err
				}
				if err := walk(n.Content[i+1], child); err != nil {
					return err
				}
			}
		case yaml.SequenceNode:
			for _, item := range n.Content {
				if err := walk(item, key); err != nil {
					return err
				}
			}
		}
		return nil
	}
	if err := walk(n, ""); err != nil {
		return err
	}
	return anchor
}

// isNull reports whether n is YAML's null.
func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// keyNode is the value of the key at path (nested mapping keys) in the
// plan's YAML, or nil when a key on the way is not there.
func keyNode(root *yaml.Node, path ...string) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return nil
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				next = n.Content[i+1]
			}
		}
		if next == nil {
			return nil
		}
		n = next
	}
	return n
}

// planKeys are the keys known in the plan's section ("" for the top):
// each either a setting's key (a Spec field's plan tag) or a section.
func planKeys(section string) (keys []string) {
	if section == "" {
		keys = append(keys, "version")
	}
	for _, f := range runspec.Fields() {
		rest, ok := f.Key, section == ""
		if !ok {
			rest, ok = strings.CutPrefix(f.Key, section+".")
		}
		if !ok || f.Key == "" {
			continue
		}
		k, _, _ := strings.Cut(rest, ".")
		if !slices.Contains(keys, k) {
			keys = append(keys, k)
		}
	}
	return keys
}

// readMapping reads the mapping n of the section (a dotted key path, ""
// for the top) into p: each key's line, its value checked for its type
// and set in p.Spec (or p.Version).
func (p *Plan) readMapping(name string, n *yaml.Node, section string) error {
	known := planKeys(section)
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		kn, vn := n.Content[i], n.Content[i+1]
		k := kn.Value
		if !slices.Contains(known, k) {
			sorted := slices.Clone(known)
			sort.Strings(sorted)
			return &bench.FileError{File: name, Line: kn.Line, Err: fmt.Errorf("unknown key %q (known keys: %s)", k, strings.Join(sorted, ", "))}
		}
		if line, ok := seen[k]; ok {
			return &bench.FileError{File: name, Line: kn.Line, Err: fmt.Errorf("key %q is given twice (line %d)", k, line)}
		}
		seen[k] = kn.Line
		key := k
		if section != "" {
			key = section + "." + k
		}
		p.lines[key] = kn.Line
		if isNull(vn) {
			continue // left out
		}
		if key == "version" {
			if vn.Kind != yaml.ScalarNode || vn.ShortTag() != "!!int" {
				return &bench.FileError{File: name, Line: vn.Line, Err: fmt.Errorf("version: want an integer, got %s", yamlValue(vn))}
			}
			if err := vn.Decode(&p.Version); err != nil {
				return &bench.FileError{File: name, Line: vn.Line, Err: fmt.Errorf("version: %v", err)}
			}
			continue
		}
		f, leaf := runspec.FieldByKey(key)
		if !leaf {
			if vn.Kind != yaml.MappingNode {
				return &bench.FileError{File: name, Line: vn.Line, Err: fmt.Errorf("%s: want a mapping of keys, got %s", key, yamlValue(vn))}
			}
			if err := p.readMapping(name, vn, key); err != nil {
				return err
			}
			continue
		}
		if err := p.readValue(name, vn, f); err != nil {
			return err
		}
	}
	return nil
}

// readValue checks that the YAML node n has the type of the setting f
// and sets it in p.Spec; a list records the line of each item (key.i).
func (p *Plan) readValue(name string, n *yaml.Node, f runspec.Field) error {
	v := f.Value(&p.Spec)
	t := v.Type()
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	want, ok := "", false
	isDuration := t == reflect.TypeOf(time.Duration(0))
	// A string setting with a list tag (scale) takes a string or a list
	// of strings, kept as one comma list.
	joined := t.Kind() == reflect.String && f.Tag.Get("list") != ""
	switch {
	case joined:
		want, ok = "a string or a list of strings", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str" || n.Kind == yaml.SequenceNode
	case isDuration, t.Kind() == reflect.String:
		want, ok = "a string", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
	case t.Kind() == reflect.Int, t.Kind() == reflect.Int64:
		want, ok = "an integer", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int"
	case t.Kind() == reflect.Float64:
		want, ok = "a number", n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float")
	case t.Kind() == reflect.Bool:
		want, ok = "true or false", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool"
	case t.Kind() == reflect.Slice:
		want, ok = "a list of strings", n.Kind == yaml.SequenceNode
	}
	if !ok {
		return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: want %s, got %s", f.Key, want, yamlValue(n))}
	}
	bad := func(err error) error {
		return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: %v", f.Key, err)}
	}
	switch {
	case n.Kind == yaml.ScalarNode && n.Value == "":
		return bad(errors.New("an empty string; leave the key out for the default"))
	case n.Kind == yaml.SequenceNode && len(n.Content) == 0:
		return bad(fmt.Errorf("an empty list; leave the key out for %s", f.Tag.Get("omitted")))
	}
	switch {
	case isDuration:
		d, err := time.ParseDuration(n.Value)
		if err != nil || d <= 0 {
			return bad(fmt.Errorf("must be a positive Go duration (90s, 2m), not %q", n.Value))
		}
		v.SetInt(int64(d))
		p.durations[f.Key] = n.Value
	case t.Kind() == reflect.Slice, joined && n.Kind == yaml.SequenceNode:
		var items []string
		for i, item := range n.Content {
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
				return &bench.FileError{File: name, Line: item.Line, Err: fmt.Errorf("%s: want a list of strings, got %s as item %d", f.Key, yamlValue(item), i+1)}
			}
			if joined && strings.TrimSpace(item.Value) == "" {
				// Kept as one comma list, an empty item would vanish.
				return &bench.FileError{File: name, Line: item.Line, Err: fmt.Errorf("%s: item %d is an empty string", f.Key, i+1)}
			}
			p.lines[fmt.Sprintf("%s.%d", f.Key, i)] = item.Line
			items = append(items, item.Value)
		}
		if joined {
			v.SetString(strings.Join(items, ","))
			break
		}
		v.Set(reflect.ValueOf(items))
	case v.Kind() == reflect.Pointer:
		x := reflect.New(t)
		if err := n.Decode(x.Interface()); err != nil {
			return bad(err)
		}
		v.Set(x)
	default:
		if err := n.Decode(v.Addr().Interface()); err != nil {
			return bad(err)
		}
	}
	p.set[f.Key] = true
	return nil
}

// yamlValue describes a YAML node in an error: a scalar as written
// (a string quoted, at most 40 bytes of it), a list or a mapping by its
// kind.
func yamlValue(n *yaml.Node) string {
	switch n.Kind {
	case yaml.SequenceNode:
		return "a list"
	case yaml.MappingNode:
		return "a mapping"
	}
	v := n.Value
	if len(v) > 40 {
		v = v[:40] + "..."
	}
	if n.ShortTag() == "!!str" {
		return strconv.Quote(v)
	}
	return v
}

// keyLine is the line of the key at path (nested mapping keys) in the
// plan's YAML, or of the deepest mapping on the way that lacks the next
// key; no path is the top mapping's line.
func keyLine(root *yaml.Node, path ...string) int {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	line := n.Line
	for _, key := range path {
		if n.Kind != yaml.MappingNode {
			return line
		}
		found := false
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, n, found = n.Content[i].Line, n.Content[i+1], true
				break
			}
		}
		if !found {
			return line
		}
	}
	return line
}

// YAML is the plan as a plan file: version, then the keys it gives in
// the order of runspec.Spec's fields, each section where its first key
// comes; lists in flow style ([a, b]), a duration as a Go duration
// (2m0s).
func (p *Plan) YAML() []byte {
	doc := &yaml.Node{Kind: yaml.MappingNode}
	add := func(m *yaml.Node, key string, v *yaml.Node) {
		m.Content = append(m.Content, &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key}, v)
	}
	scalar := func(v any) *yaml.Node {
		var n yaml.Node
		n.Encode(v) // a setting's value always encodes
		return &n
	}
	add(doc, "version", scalar(p.Version))
	sections := map[string]*yaml.Node{}
	for _, f := range runspec.Fields() {
		if !p.set[f.Key] {
			continue
		}
		v := f.Value(&p.Spec)
		var n *yaml.Node
		switch x := v.Interface().(type) {
		case time.Duration:
			text, ok := p.durations[f.Key]
			if !ok {
				text = x.String()
			}
			n = scalar(text)
		case []string:
			n = scalar(x)
			n.Style = yaml.FlowStyle
		case *float64:
			n = scalar(*x)
		case string:
			if items := strings.Split(x, ","); f.Tag.Get("list") != "" && len(items) > 1 {
				// A list kept as one string (scale) is written as
				// the list it is; one item stays a string.
				n = scalar(items)
				n.Style = yaml.FlowStyle
				break
			}
			n = scalar(x)
		default:
			n = scalar(x)
		}
		section, key, nested := strings.Cut(f.Key, ".")
		if !nested {
			add(doc, f.Key, n)
			continue
		}
		m := sections[section]
		if m == nil {
			m = &yaml.Node{Kind: yaml.MappingNode}
			sections[section] = m
			add(doc, section, m)
		}
		add(m, key, n)
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.Encode(doc) // a plan always encodes
	enc.Close()
	return buf.Bytes()
}

// Digest is the plan's SHA-256 in hex over its YAML (Plan.YAML): two
// files that say the same (comments, order and quoting aside) have one
// digest. The manifest records it (plan_digest).
func (p *Plan) Digest() string {
	sum := sha256.Sum256(p.YAML())
	return hex.EncodeToString(sum[:])
}
