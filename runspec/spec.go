// Package runspec is the one description of a run's settings: Spec. Its
// fields, and their struct tags, say everything patchbench needs to know
// about a setting: the run flag that sets it (flag, usage, default), the
// plan file's key (plan), the manifest's member (json), the range a value
// must be in (min, max, bound, zero, choice, positive), and how the
// manifest records it (record, key). Bind defines the flags on a Spec,
// Check refuses a value out of range, Recorded is what the manifest
// records and Keyed what makes two runs the same; runner.Plan reads and
// writes a Spec as a plan file by the plan tags.
//
// A new setting is a field here (with its tags), the code that uses it,
// and its documentation (docs/run.md: the synopsis, the flag, the plan
// key); docs/development.md walks through one.
//
// The tags, on a field of Spec:
//
//   - flag:"name": the run flag; usage:"..." its help, where <word>
//     names the flag's value (written `word` in the flag's help);
//     default:"v" its default (Default), in the flag's syntax.
//   - plan:"section.key" or plan:"key": the plan file's key; path:"plan"
//     says that a relative path in the plan is taken from the plan
//     file's directory.
//   - json:"member": the manifest's member ("-": not recorded); key:"-"
//     says the member is not part of the settings that make two runs
//     the same (Keyed, Unkeyed).
//   - record:"tools": recorded only for a run of the tools protocol;
//     record:"nondefault": recorded only when not the default.
//   - omit:"default": the plan (runner.NewPlan, plan --print) leaves the
//     key out at its default.
//   - min, max (numbers, as in messages); bound:"split" says "at least"
//     and "at most" rather than "in [min, max]"; zero:"no limit" lets 0
//     through outside the range (what 0 means); positive:"" refuses a duration ≤ 0;
//     choice:"a,b" the values a string may take.
//   - list:"comma" (a comma list, each flag replaces it), list:"repeat"
//     (each flag adds one item), list:"repeat,comma" (each flag adds a
//     comma list); omitted:"..." what the list left out stands for
//     ("every case"), which a plan's refusal of an empty list names.
//   - once:"" (a string): the flag is refused given twice or empty.
//   - path:"file:" (a list kept as one string): an item's path after
//     "file:" is taken from the plan file's directory, as path:"plan".
package runspec

import (
	"errors"
	"flag"
	"fmt"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Protocols and disclosure modes (Spec.Protocol, Spec.Disclosure).
const (
	ProtocolJSON          = "json"
	ProtocolTools         = "tools"
	DisclosureWhole       = "whole"
	DisclosureProgressive = "progressive"
)

// Spec is one run's settings: what run's flags and a plan file's keys
// set, what the runner is configured by and what the manifest records.
// The fields are in the plan file's order. The flags that are not about
// the runs (--out, --concurrency, --cache, --no-cache, --cache-only,
// --progress, --retry-errors, --shard, --format, --plan) are not part of
// it: they stay on the command line.
type Spec struct {
	CasesDir    string   `flag:"cases" plan:"cases.dir" path:"plan" json:"-" usage:"the case set <dir> (default: the embedded suite)"`
	OnlyCases   []string `flag:"case" plan:"cases.ids" list:"repeat,comma" json:"-" omitted:"every case" usage:"only the cases with these <ids> (repeatable or comma list)"`
	OnlyDomains []string `flag:"domain" plan:"cases.domains" list:"repeat,comma" json:"-" omitted:"every domain" usage:"only the cases of these <domains> (repeatable or comma list)"`
	// Limit and Sample make a subset of the cases --case and --domain
	// select (0: all of them): the first Limit in the suite's order
	// (domain, then id), or Sample drawn at random, stratified by
	// domain, from SampleSeed (cmd/patchbench's sampleCases). The
	// manifest records them, so a resume with other values is refused.
	Limit       int      `flag:"limit" plan:"cases.limit" json:"limit,omitempty" omit:"default" min:"1" zero:"every case" usage:"only the first <n> cases selected, in the suite's order (domain, then id; 0: every case)"`
	Sample      int      `flag:"sample" plan:"cases.sample" json:"sample,omitempty" omit:"default" min:"1" zero:"every case" usage:"only <n> of the cases selected, drawn at random, stratified by domain, from --sample-seed (0: every case)"`
	SampleSeed  int64    `flag:"sample-seed" plan:"cases.sample_seed" json:"sample_seed,omitempty" record:"nondefault" omit:"default" default:"1" min:"1" usage:"the <seed> --sample draws the cases from, at least 1 (not the model's --seed)"`
	ConfigsDir  string   `flag:"configs" plan:"configs.dir" path:"plan" json:"-" usage:"the configurations <dir> (default: the embedded six)"`
	OnlyConfigs []string `flag:"config" plan:"configs.names" list:"repeat,comma" json:"-" omitted:"every configuration" usage:"only these configuration <names> (repeatable or comma list)"`
	// ActorSpecs are the --actor specs; the manifest records the
	// actors' names (rundir.Manifest.Actors). Check fills in the
	// default three.
	ActorSpecs []string `flag:"actor" plan:"actors" list:"repeat" json:"-" omitted:"the default actors" usage:"an actor <spec> (repeatable; default reference, oversharer and follower)"`
	Rounds     int      `flag:"rounds" plan:"rounds" json:"rounds" default:"1" min:"1" max:"10000" bound:"split" usage:"<n> rounds of every run"`
	Protocol   string   `flag:"protocol" plan:"protocol" json:"protocol,omitempty" record:"nondefault" default:"json" choice:"json,tools" usage:"<protocol>: json (one answer holding the patch and a note per attempt) or tools (an agent loop with the tools read_state, query_state, search_state and propose_patch)"`
	// Scale is the sizes the cases' states are grown to, a comma list
	// ("1x": as written; "1MB", "10MB": bench.ParseScale; "1x,1MB":
	// both, crossed with the configurations, actors and rounds), and
	// ScaleSeed the seed they are generated from (bench.Case.Grown). A
	// plan may give a list; the manifest records the list as one string.
	Scale     string `flag:"scale" plan:"scale" list:"repeat,comma" json:"scale,omitempty" record:"nondefault" default:"1x" usage:"the <sizes> the cases' states are grown to: 1x (as written) or 1MB, 10MB, ... (the cases that grow; see docs/cases.md); a comma list or the flag repeated crosses the runs with each"`
	ScaleSeed int64  `flag:"scale-seed" plan:"scale_seed" json:"scale_seed,omitempty" record:"nondefault" default:"1" min:"1" usage:"the <seed> the grown states are generated from, at least 1 (not the model's --seed)"`
	// Attack is the attacks the runs cross, a comma list of names
	// (bench.LookupAttack: case, the case's own planted texts, or a
	// built-in template such as ignore_previous; "file:PATH" a template
	// file), each run at each; AttackFile adds a template file's attack
	// after them. The manifest records the attacks' names as one string
	// (a file's attack as bench.AttackFileName).
	Attack     string `flag:"attack" plan:"attack" list:"repeat,comma" path:"file:" json:"attacks,omitempty" record:"nondefault" default:"case" usage:"the <attacks> that word the cases' planted prompt injections: case (as the case writes them), ignore_previous, important_instructions, tool_knowledge, system_message or file:PATH (a template of your own; docs/cases.md); a comma list or the flag repeated crosses the runs with each"`
	AttackFile string `flag:"attack-file" plan:"attack_file" path:"plan" once:"" json:"-" usage:"an attack template <file> (Go text/template; docs/cases.md, attacks) added to --attack as file:FILE"`
	Disclosure string `flag:"disclosure" plan:"disclosure" json:"disclosure,omitempty" record:"tools" default:"whole" choice:"whole,progressive" usage:"with --protocol tools, what the first message shows: whole (the view) or progressive (an outline; the actor reads the rest)"`

	Temperature     *float64      `flag:"temperature" plan:"settings.temperature" json:"temperature" min:"0" max:"2" usage:"sampling <temperature> for live actors, in [0, 2] (default: the server's; reasoning models get none)"`
	MaxOutputTokens int           `flag:"max-output-tokens" plan:"settings.max_output_tokens" json:"max_output_tokens,omitempty" min:"0" usage:"bound on each live response, in <tokens> (default: the server's)"`
	Structured      bool          `flag:"structured" plan:"settings.structured" json:"structured,omitempty" usage:"ask live actors for the proposal's JSON Schema (json_schema / Ollama format) instead of any JSON object"`
	Seed            int64         `flag:"seed" plan:"settings.seed" json:"seed" default:"1" usage:"the <seed> recorded for actors that sample"`
	Timeout         time.Duration `flag:"timeout" plan:"settings.timeout" json:"-" default:"2m" positive:"" usage:"bound on each live request, and on each call of an exec: actor's program (<duration>)"`
	MaxRetries      int           `flag:"max-retries" plan:"settings.max_retries" json:"-" default:"5" min:"0" usage:"retries of a live request on 429, 5xx, timeouts and dropped connections (<n>)"`
	RPS             float64       `flag:"rps" plan:"settings.rps" json:"-" min:"0.001" max:"1e6" zero:"no limit" usage:"at most <n> live requests per second to each provider endpoint (0: no limit)"`

	MaxAttempts    int   `flag:"max-attempts" plan:"limits.max_attempts" json:"max_attempts" default:"1" min:"1" max:"100" bound:"split" usage:"<n> proposals per step; after a rejection the actor sees the verifier's redacted feedback"`
	MaxTurns       int   `flag:"max-turns" plan:"limits.max_turns" json:"max_turns,omitempty" record:"tools" default:"16" min:"1" max:"1000" usage:"with --protocol tools, the actor's turns per step (<n>); a step that spends them fails with turn_budget_spent"`
	MaxToolCalls   int   `flag:"max-tool-calls" plan:"limits.max_tool_calls" json:"max_tool_calls,omitempty" record:"tools" default:"64" min:"1" max:"10000" usage:"with --protocol tools, the tool calls per step (<n>); a step that spends them fails with tool_call_budget_spent"`
	MaxStepBytes   int64 `flag:"max-step-bytes" plan:"limits.max_step_bytes" json:"max_step_bytes,omitempty" record:"tools" default:"4194304" min:"1024" max:"1073741824" usage:"with --protocol tools, the <bytes> an actor may send per step (texts and tool arguments); a step that spends them fails with byte_budget_spent"`
	MaxAnswerBytes int64 `flag:"max-answer-bytes" plan:"limits.max_answer_bytes" json:"max_answer_bytes,omitempty" record:"nondefault" default:"1048576" min:"1024" max:"16777216" usage:"the longest answer an actor may send, in <bytes>; a longer one is rejected (limit_exceeded), its first 64 KiB and its length kept"`
	MaxResultBytes int   `flag:"max-result-bytes" plan:"limits.max_result_bytes" json:"max_result_bytes,omitempty" record:"nondefault" default:"16384" min:"1024" max:"16777216" usage:"with --protocol tools, the most <bytes> of one tool result; a longer one is answered in part (a page of an array, an object or a query's matches), saying how to read the rest"`
	MaxTokensTotal int   `flag:"max-tokens-total" plan:"limits.max_tokens_total" json:"-" min:"0" usage:"stop cleanly once the runs recorded have used this many <tokens> (0: no limit)"`
	ContextTokens  int   `flag:"context-tokens" plan:"limits.context_tokens" json:"context_tokens,omitempty" record:"nondefault" default:"128000" min:"1024" max:"1073741824" usage:"each actor's context, in <tokens> of the tokenizer: a step whose prompt (tools protocol: the conversation and the tools' specs; an MCP agent: what it received in the step) would pass it is not sent, and fails with context_exceeded"`

	PassThreshold float64 `flag:"pass-threshold" plan:"scoring.pass_threshold" json:"pass_threshold" default:"0.8" min:"0" max:"1" usage:"the content <score> a semantic pass needs"`
	Tokenizer     string  `flag:"tokenizer" plan:"scoring.tokenizer" json:"tokenizer" default:"o200k_base" usage:"the tiktoken <encoding> that counts tokens for actors that report none"`
	// PromptTemplate is recorded as given; only its content (the
	// manifest's prompt_version) is part of the settings.
	PromptTemplate string `flag:"prompt-template" plan:"prompt_template" path:"plan" json:"prompt_template,omitempty" key:"-" usage:"the prompt template <file> (text/template defining \"system\" and \"user\"; default: the embedded runner/prompt.tmpl); its hash is part of the settings"`
}

// DefaultActors are the actors of a run that names none.
var DefaultActors = []string{"reference", "oversharer", "follower"}

// Field is one setting of Spec, as its tags describe it.
type Field struct {
	// Name is the Go field's name, Flag the run flag, Key the plan key
	// (a dotted path), Member the manifest's member ("" when not
	// recorded).
	Name, Flag, Key, Member string
	Tag                     reflect.StructTag
	index                   int
}

// Value is the field of s, addressable.
func (f Field) Value(s *Spec) reflect.Value { return reflect.ValueOf(s).Elem().Field(f.index) }

// Fields lists Spec's settings, in the order of its fields.
func Fields() []Field {
	t := reflect.TypeOf(Spec{})
	out := make([]Field, t.NumField())
	for i := range out {
		sf := t.Field(i)
		m, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if m == "-" {
			m = ""
		}
		out[i] = Field{Name: sf.Name, Flag: sf.Tag.Get("flag"), Key: sf.Tag.Get("plan"), Member: m, Tag: sf.Tag, index: i}
	}
	return out
}

// FieldByKey is the setting of a plan key; ok is false for none.
func FieldByKey(key string) (f Field, ok bool) {
	i := slices.IndexFunc(Fields(), func(f Field) bool { return f.Key == key })
	if i < 0 {
		return Field{}, false
	}
	return Fields()[i], true
}

// Default is the settings of a run given no flag and no plan key: each
// field's default tag (its zero value without one).
func Default() Spec {
	var s Spec
	for _, f := range Fields() {
		if d, ok := f.Tag.Lookup("default"); ok {
			if err := setString(f.Value(&s), d); err != nil {
				panic(fmt.Sprintf("runspec: the default of %s: %v", f.Name, err)) // a mistake in the tags above
			}
		}
	}
	return s
}

var valueName = regexp.MustCompile(`<([^<>]+)>`)

// Bind defines a flag on fs for every setting of s, each writing its
// field; a field's value when Bind is called is the flag's default (use
// Default). The flags' help is their usage tags.
func Bind(fs *flag.FlagSet, s *Spec) {
	for _, f := range Fields() {
		if f.Flag == "" {
			continue
		}
		usage := valueName.ReplaceAllString(f.Tag.Get("usage"), "`$1`")
		switch p := f.Value(s).Addr().Interface().(type) {
		case *string:
			if f.Tag.Get("list") != "" {
				fs.Var(&joinedValue{p: p}, f.Flag, usage)
				continue
			}
			if _, ok := f.Tag.Lookup("once"); ok {
				fs.Var(&onceValue{p: p}, f.Flag, usage)
				continue
			}
			fs.StringVar(p, f.Flag, *p, usage)
		case *int:
			fs.IntVar(p, f.Flag, *p, usage)
		case *int64:
			fs.Int64Var(p, f.Flag, *p, usage)
		case *float64:
			fs.Float64Var(p, f.Flag, *p, usage)
		case *bool:
			fs.BoolVar(p, f.Flag, *p, usage)
		case *time.Duration:
			fs.DurationVar(p, f.Flag, *p, usage)
		case **float64:
			fs.Var(&optFloat{p}, f.Flag, usage)
		case *[]string:
			mode := f.Tag.Get("list")
			fs.Var(&listValue{p: p, split: strings.Contains(mode, "comma"), add: strings.Contains(mode, "repeat")}, f.Flag, usage)
		default:
			panic("runspec: no flag for the type of " + f.Name) // a mistake in Spec
		}
	}
}

// optFloat is the flag of an optional number (*float64): unset is nil,
// and no default is printed.
type optFloat struct{ p **float64 }

func (o *optFloat) String() string {
	if o == nil || o.p == nil || *o.p == nil {
		return ""
	}
	return strconv.FormatFloat(**o.p, 'g', -1, 64)
}

func (o *optFloat) Set(s string) error {
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return errors.New("not a number")
	}
	*o.p = &v
	return nil
}

// listValue is the flag of a list: each use adds (add) or replaces its
// items, split at commas (split, blank items dropped) or whole.
type listValue struct {
	p          *[]string
	split, add bool
}

func (l *listValue) String() string {
	if l == nil || l.p == nil {
		return ""
	}
	if l.split {
		return strings.Join(*l.p, ",")
	}
	return strings.Join(*l.p, " ")
}

func (l *listValue) Set(v string) error {
	var items []string
	if l.split {
		for _, x := range strings.Split(v, ",") {
			if x = strings.TrimSpace(x); x != "" {
				items = append(items, x)
			}
		}
	} else {
		items = []string{v}
	}
	if l.add {
		*l.p = append(*l.p, items...)
	} else {
		*l.p = items
	}
	return nil
}

// joinedValue is the flag of a list kept as one comma-separated string
// (Spec.Scale): the first use replaces the default, each later use adds
// its items after a comma; a blank item is refused.
type joinedValue struct {
	p   *string
	set bool
}

func (j *joinedValue) String() string {
	if j == nil || j.p == nil {
		return ""
	}
	return *j.p
}

func (j *joinedValue) Set(v string) error {
	var items []string
	if j.set && *j.p != "" {
		items = append(items, *j.p)
	}
	for _, x := range strings.Split(v, ",") {
		if x = strings.TrimSpace(x); x == "" {
			return fmt.Errorf("%q holds an empty item; give a comma list of values", v)
		}
		items = append(items, x)
	}
	*j.p, j.set = strings.Join(items, ","), true
	return nil
}

// onceValue is the flag of a string that may be given once, and not
// empty.
type onceValue struct {
	p   *string
	set bool
}

func (o *onceValue) String() string {
	if o == nil || o.p == nil {
		return ""
	}
	return *o.p
}

func (o *onceValue) Set(v string) error {
	switch {
	case o.set:
		return fmt.Errorf("given twice (%q, then %q); give it once", *o.p, v)
	case strings.TrimSpace(v) == "":
		return errors.New("an empty value")
	}
	*o.p, o.set = v, true
	return nil
}

// setString sets the field v (of a Spec) from its flag syntax: a number,
// true or false, a Go duration, a string, or a comma list.
func setString(v reflect.Value, s string) error {
	switch p := v.Addr().Interface().(type) {
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(s)
		*p = n
		return err
	case *int64:
		n, err := strconv.ParseInt(s, 10, 64)
		*p = n
		return err
	case *float64:
		x, err := strconv.ParseFloat(s, 64)
		*p = x
		return err
	case *bool:
		b, err := strconv.ParseBool(s)
		*p = b
		return err
	case *time.Duration:
		d, err := time.ParseDuration(s)
		*p = d
		return err
	case **float64:
		return (&optFloat{p}).Set(s)
	case *[]string:
		return (&listValue{p: p, split: true}).Set(s)
	default:
		return fmt.Errorf("runspec: no syntax for %s", v.Type())
	}
	return nil
}

// Error is a setting's value Check refuses: the flag, the plan key and
// why ("must be at least 1, not 0"). A refusal that names another
// setting, With (its flag), says so twice: Why names it by its flag, as
// on the command line, and KeyWhy by its plan key, as in a plan file.
type Error struct {
	Flag, Key, Why string
	With, KeyWhy   string
}

func (e *Error) Error() string { return "--" + e.Flag + " " + e.Why }

// Check refuses a value outside its setting's range (the range tags), in
// the order of the fields, as an *Error; it fills in the default actors
// when there are none. --sample and --limit exclude each other, a
// --sample-seed other than the default goes with --sample, and a prompt
// template goes with the json protocol only.
func (s *Spec) Check() error {
	if len(s.ActorSpecs) == 0 {
		s.ActorSpecs = slices.Clone(DefaultActors)
	}
	for _, f := range Fields() {
		if why := checkField(f, f.Value(s)); why != "" {
			return &Error{Flag: f.Flag, Key: f.Key, Why: why}
		}
	}
	if s.Limit != 0 && s.Sample != 0 {
		return &Error{Flag: "sample", Key: "cases.sample", Why: "and --limit both choose a subset of the cases; give one",
			With: "limit", KeyWhy: "and cases.limit both choose a subset of the cases; give one"}
	}
	if s.Sample == 0 && s.SampleSeed != Default().SampleSeed {
		// A seed without a draw would be recorded, and a resume without
		// it refused, though it changes no case.
		return &Error{Flag: "sample-seed", Key: "cases.sample_seed", Why: "goes with --sample (the seed of its draw); give --sample N, or leave the seed out",
			With: "sample", KeyWhy: "goes with cases.sample (the seed of its draw); give cases.sample, or leave the seed out"}
	}
	if s.Protocol == ProtocolTools && s.PromptTemplate != "" {
		return &Error{Flag: "prompt-template", Key: "prompt_template", Why: "is for the json protocol; the tools protocol's prompt is runner/tools.tmpl"}
	}
	return nil
}

// checkField is why v, the value of f, is out of f's range ("" when it
// is not).
func checkField(f Field, v reflect.Value) string {
	tag := f.Tag
	minS, hasMin := tag.Lookup("min")
	maxS, hasMax := tag.Lookup("max")
	if choice, ok := tag.Lookup("choice"); ok {
		allowed := strings.Split(choice, ",")
		if !slices.Contains(allowed, v.String()) {
			return fmt.Sprintf("must be %s or %s, not %q", strings.Join(allowed[:len(allowed)-1], ", "), allowed[len(allowed)-1], v.String())
		}
		return ""
	}
	if _, ok := tag.Lookup("positive"); ok {
		if d := time.Duration(v.Int()); d <= 0 {
			return fmt.Sprintf("must be positive, not %s", d)
		}
		return ""
	}
	switch v.Kind() {
	case reflect.Int, reflect.Int64:
		n := v.Int()
		if zero, ok := tag.Lookup("zero"); ok && n <= 0 {
			if n == 0 {
				return ""
			}
			return fmt.Sprintf("must be at least %s (or 0: %s), not %d", minS, zero, n)
		}
		lo, _ := strconv.ParseInt(minS, 10, 64)
		hi, _ := strconv.ParseInt(maxS, 10, 64)
		split := tag.Get("bound") == "split"
		switch {
		case hasMin && n < lo && (split || !hasMax || lo <= 1):
			return fmt.Sprintf("must be at least %s, not %d", minS, n)
		case hasMax && n > hi && split:
			return fmt.Sprintf("must be at most %s, not %d", maxS, n)
		case hasMin && n < lo || hasMax && n > hi:
			return fmt.Sprintf("must be in [%s, %s], not %d", minS, maxS, n)
		}
	case reflect.Pointer, reflect.Float64:
		if v.Kind() == reflect.Pointer {
			if v.IsNil() {
				return ""
			}
			v = v.Elem()
		}
		x := v.Float()
		lo, _ := strconv.ParseFloat(minS, 64)
		hi, _ := strconv.ParseFloat(maxS, 64)
		if zero, ok := tag.Lookup("zero"); ok && x == 0 {
			return ""
		} else if ok && !(x >= lo && x <= hi) {
			return fmt.Sprintf("must be 0 (%s) or in [%s, %s], not %g", zero, minS, maxS, x)
		}
		if hasMin && hasMax && !(x >= lo && x <= hi) { // NaN too
			return fmt.Sprintf("must be in [%s, %s], not %g", minS, maxS, x)
		}
	}
	return ""
}

// Recorded is the settings as the manifest records them: the fields of
// the tools protocol (record:"tools") zero in a run of the json protocol,
// and those recorded only when not the default (record:"nondefault")
// zero at their default. Recording a setting at its default the way the
// manifests before it was a setting did (not at all) keeps their run
// directories resumable.
func (s Spec) Recorded() Spec {
	def := Default()
	tools := s.Protocol == ProtocolTools
	for _, f := range Fields() {
		v := f.Value(&s)
		switch f.Tag.Get("record") {
		case "tools":
			if !tools {
				v.SetZero()
			}
		case "nondefault":
			if reflect.DeepEqual(v.Interface(), f.Value(&def).Interface()) {
				v.SetZero()
			}
		}
	}
	return s
}

// Keyed is s without the members that do not make two runs different
// (key:"-"): the manifest's Key compares the rest.
func (s Spec) Keyed() Spec {
	for _, f := range Fields() {
		if f.Tag.Get("key") == "-" {
			f.Value(&s).SetZero()
		}
	}
	return s
}

// Unkeyed names the manifest members Keyed leaves out.
func Unkeyed() []string {
	var out []string
	for _, f := range Fields() {
		if f.Tag.Get("key") == "-" && f.Member != "" {
			out = append(out, f.Member)
		}
	}
	return out
}

// Set sets f in s from text in its flag's syntax: a number, true or
// false, a Go duration, a string, or a comma list (blank items dropped).
func (f Field) Set(s *Spec, text string) error { return setString(f.Value(s), text) }

// Check is why the value of f in s is out of f's range, "" when it is
// not (Spec.Check checks every field).
func (f Field) Check(s *Spec) string { return checkField(f, f.Value(s)) }
