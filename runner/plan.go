package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"reflect"
	"sort"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/patchbench/patchbench/bench"
)

// PlanVersion is the version of the plan file format Plan reads.
const PlanVersion = 1

// Plan is an experiment written down (patchbench run --plan FILE): what
// patchbench run's flags say about the runs, as data. A key left out is
// the flag's default. The command line's flags that are not about the
// runs (--out, --concurrency, --cache, --progress, --retry-errors,
// --shard, --format) stay on the command line.
//
// The file is YAML (go.yaml.in/yaml/v3); unknown keys, wrong types and a
// version other than PlanVersion are errors naming the file and line
// (*bench.FileError). docs/plans/ holds examples.
type Plan struct {
	// Version is PlanVersion.
	Version int `yaml:"version"`
	// Cases choose the case set and which of its cases run.
	Cases PlanCases `yaml:"cases,omitempty"`
	// Configs choose the configurations.
	Configs PlanConfigs `yaml:"configs,omitempty"`
	// Actors are actor specs, as --actor takes them (openai:MODEL,
	// role=spec lists, exec:COMMAND, ...), settings in a spec's query
	// (ollama:mistral?num_ctx=8192) included; default reference,
	// oversharer and follower.
	Actors []string `yaml:"actors,omitempty,flow"`
	// Rounds is the number of rounds (default 1).
	Rounds int `yaml:"rounds,omitempty"`
	// Protocol is json (default) or tools; Disclosure, with tools,
	// whole (default) or progressive.
	Protocol   string `yaml:"protocol,omitempty"`
	Disclosure string `yaml:"disclosure,omitempty"`
	// Settings are the live actors' settings.
	Settings PlanSettings `yaml:"settings,omitempty"`
	// Limits bound each step and the whole run.
	Limits PlanLimits `yaml:"limits,omitempty"`
	// Scoring sets the pass threshold and the tokenizer.
	Scoring PlanScoring `yaml:"scoring,omitempty"`
	// PromptTemplate is a prompt template file of the json protocol
	// (default the embedded one).
	PromptTemplate string `yaml:"prompt_template,omitempty"`

	// file is the plan file's name and lines the line of each key read
	// from it (Where); a plan not read from a file has none.
	file  string
	lines map[string]int
}

// Where is the file a plan was read from (ParsePlan's name) and the
// line of key in it: a dotted key path ("rounds", "limits.max_attempts"),
// or a list key with the 0-based index of an item ("actors.1"), whose
// line is the item's. The line is 0 when the plan does not hold the key
// or was not read from a file.
func (p *Plan) Where(key string) (file string, line int) {
	return p.file, p.lines[key]
}

// PlanCases are a plan's cases: the case set (Dir, default the embedded
// suite), and only the cases of IDs and of Domains when given.
type PlanCases struct {
	Dir     string   `yaml:"dir,omitempty"`
	IDs     []string `yaml:"ids,omitempty,flow"`
	Domains []string `yaml:"domains,omitempty,flow"`
}

// PlanConfigs are a plan's configurations: the directory of their files
// (default the embedded six) and only those named when Names is given.
type PlanConfigs struct {
	Dir   string   `yaml:"dir,omitempty"`
	Names []string `yaml:"names,omitempty,flow"`
}

// PlanSettings are the live actors' settings (run's flags of the same
// names); a nil value is the flag's default.
type PlanSettings struct {
	Temperature     *float64 `yaml:"temperature,omitempty"`
	MaxOutputTokens *int     `yaml:"max_output_tokens,omitempty"`
	Structured      *bool    `yaml:"structured,omitempty"`
	Seed            *int64   `yaml:"seed,omitempty"`
	// Timeout bounds each live request (a Go duration: 2m, 90s).
	Timeout    string   `yaml:"timeout,omitempty"`
	MaxRetries *int     `yaml:"max_retries,omitempty"`
	RPS        *float64 `yaml:"rps,omitempty"`
}

// PlanLimits are the limits of each step and of the whole run (run's
// flags of the same names).
type PlanLimits struct {
	MaxAttempts    *int   `yaml:"max_attempts,omitempty"`
	MaxTurns       *int   `yaml:"max_turns,omitempty"`
	MaxToolCalls   *int   `yaml:"max_tool_calls,omitempty"`
	MaxStepBytes   *int64 `yaml:"max_step_bytes,omitempty"`
	MaxAnswerBytes *int64 `yaml:"max_answer_bytes,omitempty"`
	MaxTokensTotal *int   `yaml:"max_tokens_total,omitempty"`
}

// PlanScoring sets how runs are scored.
type PlanScoring struct {
	PassThreshold *float64 `yaml:"pass_threshold,omitempty"`
	Tokenizer     string   `yaml:"tokenizer,omitempty"`
}

// MaxPlanBytes bounds a plan file.
const MaxPlanBytes = 1 << 20

// ParsePlan reads a plan from YAML; name is the file's name in errors.
// Unknown keys, wrong types, several documents and a missing or other
// version are *bench.FileError values with the line where it is known.
// Every key's value must have the key's type, as YAML reads it: an
// integer key takes an integer (not 2.5, 2.0 or "2"), a number key an
// integer or a float, a boolean key true or false, a string key a string
// (quote a number: "42"), a list key a list of strings, and a section
// (cases, settings, ...) a mapping; null is a key left out. A wrong type
// is refused as "FILE:LINE: key: want an integer, got 2.5". A value that
// would read as the key left out is refused too, as its flag refuses it
// or because a key left out says it better: rounds: 0, an empty list
// ("actors: an empty list; leave the key out for the default actors")
// and an empty string.
func ParsePlan(name string, b []byte) (*Plan, error) {
	if len(b) > MaxPlanBytes {
		return nil, &bench.FileError{File: name, Err: fmt.Errorf("larger than %d bytes", MaxPlanBytes)}
	}
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, bench.YAMLError(name, err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &bench.FileError{File: name, Err: errors.New("empty plan (it needs at least version: 1)")}
	}
	if err := checkWrittenOut(name, root.Content[0]); err != nil {
		return nil, err
	}
	lines := map[string]int{}
	if err := checkTypes(name, root.Content[0], reflect.TypeOf(Plan{}), "", lines); err != nil {
		return nil, err
	}
	var p Plan
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&p); err != nil {
		return nil, bench.YAMLError(name, planKeys(err), &root)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &bench.FileError{File: name, Line: extra.Line, Err: errors.New("more than one YAML document; a plan file holds one")}
	}
	if _, ok := lines["version"]; !ok || p.Version == 0 && isNull(keyNode(&root, "version")) {
		return nil, &bench.FileError{File: name, Line: keyLine(&root, "version"), Err: fmt.Errorf("version: required (version: %d)", PlanVersion)}
	}
	if p.Version != PlanVersion {
		return nil, &bench.FileError{File: name, Line: keyLine(&root, "version"), Err: fmt.Errorf("version: must be %d, not %d", PlanVersion, p.Version)}
	}
	if err := p.checkRanges(name, &root); err != nil {
		return nil, err
	}
	p.file, p.lines = name, lines
	return &p, nil
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

// checkTypes checks that the YAML node n has the type of t (a Plan
// struct, by its yaml tags, or one of its fields' types), at key (a
// dotted path, "" for the top), and records the line of every key and
// list item under it in lines. Keys t does not know are left to the
// decoder, which names the known ones.
func checkTypes(name string, n *yaml.Node, t reflect.Type, key string, lines map[string]int) error {
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	if t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		return nil // left out
	}
	want, ok := "", false
	switch t.Kind() {
	case reflect.Struct:
		want, ok = "a mapping of keys", n.Kind == yaml.MappingNode
	case reflect.Int, reflect.Int64:
		want, ok = "an integer", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!int"
	case reflect.Float64:
		want, ok = "a number", n.Kind == yaml.ScalarNode && (n.ShortTag() == "!!int" || n.ShortTag() == "!!float")
	case reflect.Bool:
		want, ok = "true or false", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!bool"
	case reflect.String:
		want, ok = "a string", n.Kind == yaml.ScalarNode && n.ShortTag() == "!!str"
	case reflect.Slice:
		want, ok = "a list of strings", n.Kind == yaml.SequenceNode
	}
	if !ok {
		what := key
		if what == "" {
			what = "the plan"
		}
		return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: want %s, got %s", what, want, yamlValue(n))}
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := map[string]reflect.Type{}
		for i := range t.NumField() {
			if tag := strings.Split(t.Field(i).Tag.Get("yaml"), ",")[0]; tag != "" && tag != "-" {
				fields[tag] = t.Field(i).Type
			}
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i].Value
			ft, known := fields[k]
			if !known {
				continue
			}
			if key != "" {
				k = key + "." + k
			}
			lines[k] = n.Content[i].Line
			if err := checkTypes(name, n.Content[i+1], ft, k, lines); err != nil {
				return err
			}
		}
	case reflect.String:
		if n.Value == "" {
			return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: an empty string; leave the key out for the default", key)}
		}
	case reflect.Slice:
		if len(n.Content) == 0 {
			return &bench.FileError{File: name, Line: n.Line, Err: fmt.Errorf("%s: an empty list; leave the key out for %s", key, emptyListDefault[key])}
		}
		for i, item := range n.Content {
			for item.Kind == yaml.AliasNode && item.Alias != nil {
				item = item.Alias
			}
			if item.Kind != yaml.ScalarNode || item.ShortTag() != "!!str" {
				return &bench.FileError{File: name, Line: item.Line, Err: fmt.Errorf("%s: want a list of strings, got %s as item %d", key, yamlValue(item), i+1)}
			}
			lines[fmt.Sprintf("%s.%d", key, i)] = item.Line
		}
	}
	return nil
}

// emptyListDefault is what each list key of a plan left out stands for,
// said when the list is empty.
var emptyListDefault = map[string]string{
	"actors": "the default actors", "cases.ids": "every case", "cases.domains": "every domain",
	"configs.names": "every configuration",
}

// isNull reports whether n is absent (nil) or YAML's null.
func isNull(n *yaml.Node) bool {
	return n == nil || n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// keyNode is the value of the key at path (nested mapping keys) in the
// plan's YAML, aliases followed, or nil when a key on the way is not
// there.
func keyNode(root *yaml.Node, path ...string) *yaml.Node {
	n := root
	if n.Kind == yaml.DocumentNode && len(n.Content) > 0 {
		n = n.Content[0]
	}
	for _, key := range path {
		for n.Kind == yaml.AliasNode && n.Alias != nil {
			n = n.Alias
		}
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
	for n.Kind == yaml.AliasNode && n.Alias != nil {
		n = n.Alias
	}
	return n
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

// checkRanges refuses a value outside its run flag's range, naming the
// key and its line: rounds (left out: the default) and the step
// limits at least 1, counts at
// least 0, temperature in [0, 2], a positive timeout, the pass threshold
// in [0, 1].
func (p *Plan) checkRanges(name string, root *yaml.Node) error {
	bad := func(why string, path ...string) error {
		return &bench.FileError{File: name, Line: keyLine(root, path...), Err: fmt.Errorf("%s: %s", strings.Join(path, "."), why)}
	}
	atLeast := func(v *int64, min int64, path ...string) error {
		if v != nil && *v < min {
			return bad(fmt.Sprintf("must be at least %d, not %d", min, *v), path...)
		}
		return nil
	}
	i64 := func(v *int) *int64 {
		if v == nil {
			return nil
		}
		x := int64(*v)
		return &x
	}
	l, st := p.Limits, p.Settings
	if p.Rounds < 0 || p.Rounds == 0 && !isNull(keyNode(root, "rounds")) {
		return bad(fmt.Sprintf("must be at least 1, not %d", p.Rounds), "rounds")
	}
	for _, err := range []error{
		atLeast(i64(l.MaxAttempts), 1, "limits", "max_attempts"),
		atLeast(i64(l.MaxTurns), 1, "limits", "max_turns"),
		atLeast(i64(l.MaxToolCalls), 1, "limits", "max_tool_calls"),
		atLeast(l.MaxStepBytes, 1, "limits", "max_step_bytes"),
		atLeast(l.MaxAnswerBytes, 1, "limits", "max_answer_bytes"),
		atLeast(i64(l.MaxTokensTotal), 0, "limits", "max_tokens_total"),
		atLeast(i64(st.MaxOutputTokens), 0, "settings", "max_output_tokens"),
		atLeast(i64(st.MaxRetries), 0, "settings", "max_retries"),
	} {
		if err != nil {
			return err
		}
	}
	if t := st.Temperature; t != nil && !(*t >= 0 && *t <= 2) { // NaN too
		return bad(fmt.Sprintf("must be in [0, 2], not %g", *t), "settings", "temperature")
	}
	if r := st.RPS; r != nil && !(*r >= 0) {
		return bad(fmt.Sprintf("must be at least 0, not %g", *r), "settings", "rps")
	}
	if st.Timeout != "" {
		if d, err := time.ParseDuration(st.Timeout); err != nil || d <= 0 {
			return bad(fmt.Sprintf("must be a positive Go duration (90s, 2m), not %q", st.Timeout), "settings", "timeout")
		}
	}
	if t := p.Scoring.PassThreshold; t != nil && !(*t >= 0 && *t <= 1) {
		return bad(fmt.Sprintf("must be in [0, 1], not %g", *t), "scoring", "pass_threshold")
	}
	return nil
}

// planKeys adds the known keys of the plan's part to each unknown-key
// error of the decoder, as the case loader does.
func planKeys(err error) error {
	var te *yaml.TypeError
	if !errors.As(err, &te) {
		return err
	}
	for i, msg := range te.Errors {
		for _, t := range []any{Plan{}, PlanCases{}, PlanConfigs{}, PlanSettings{}, PlanLimits{}, PlanScoring{}} {
			typ := reflect.TypeOf(t)
			if strings.HasSuffix(msg, "not found in type runner."+typ.Name()) {
				var keys []string
				for k := range typ.NumField() {
					// Fields without a key (the plan's file and lines) are not keys.
					if key := strings.Split(typ.Field(k).Tag.Get("yaml"), ",")[0]; key != "" && key != "-" {
						keys = append(keys, key)
					}
				}
				sort.Strings(keys)
				te.Errors[i] = msg + " (known keys: " + strings.Join(keys, ", ") + ")"
			}
		}
	}
	return te
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

// YAML is the plan as a plan file: its keys in the order of Plan, the
// defaults left out.
func (p *Plan) YAML() []byte {
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	enc.Encode(p) // a Plan always encodes
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
