package runspec

import (
	"errors"
	"flag"
	"io"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestFieldsTagged: every setting has a flag, a plan key and a usage, and
// no two share one; every list says what it stands for left out; a
// default parses.
func TestFieldsTagged(t *testing.T) {
	flags, keys := map[string]bool{}, map[string]bool{}
	for _, f := range Fields() {
		if f.Flag == "" || f.Key == "" || f.Tag.Get("usage") == "" {
			t.Errorf("%s: flag %q, plan key %q, usage %q", f.Name, f.Flag, f.Key, f.Tag.Get("usage"))
		}
		if flags[f.Flag] || keys[f.Key] {
			t.Errorf("%s: flag %q or key %q used twice", f.Name, f.Flag, f.Key)
		}
		flags[f.Flag], keys[f.Key] = true, true
		if _, list := f.Value(&Spec{}).Interface().([]string); list && f.Tag.Get("omitted") == "" {
			t.Errorf("%s: a list without an omitted tag (what a plan's empty list is refused for)", f.Name)
		}
	}
	d := Default()
	if d.Rounds != 1 || d.MaxTurns != 16 || d.Timeout != 2*time.Minute || d.PassThreshold != 0.8 || d.Protocol != ProtocolJSON {
		t.Errorf("Default() = %+v", d)
	}
}

// TestBind: the flags write the spec's fields: lists by their mode, the
// optional temperature, a duration.
func TestBind(t *testing.T) {
	s := Default()
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Bind(fs, &s)
	err := fs.Parse([]string{"--rounds", "3", "--case", "a,b", "--case", "c", "--config", "x,y", "--config", "z",
		"--actor", "r=reference,w=follower", "--actor", "oversharer", "--temperature", "0.5", "--timeout", "90s", "--max-turns", "9"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Rounds != 3 || !slices.Equal(s.OnlyCases, []string{"a", "b", "c"}) || !slices.Equal(s.OnlyConfigs, []string{"x", "y", "z"}) ||
		!slices.Equal(s.ActorSpecs, []string{"r=reference,w=follower", "oversharer"}) || s.Temperature == nil || *s.Temperature != 0.5 ||
		s.Timeout != 90*time.Second || s.MaxTurns != 9 {
		t.Errorf("bound: %+v", s)
	}
}

// TestCheck: each range refuses its value with the flag, the plan key
// and the message patchbench has always given.
func TestCheck(t *testing.T) {
	nan := 0.0
	nan /= nan
	for _, c := range []struct {
		mod       func(*Spec)
		flag, why string
	}{
		{func(s *Spec) { s.Rounds = 0 }, "rounds", "must be at least 1, not 0"},
		{func(s *Spec) { s.Rounds = 20000 }, "rounds", "must be at most 10000, not 20000"},
		{func(s *Spec) { s.MaxTurns = 0 }, "max-turns", "must be at least 1, not 0"},
		{func(s *Spec) { s.MaxTurns = 1001 }, "max-turns", "must be in [1, 1000], not 1001"},
		{func(s *Spec) { s.MaxStepBytes = 10 }, "max-step-bytes", "must be in [1024, 1073741824], not 10"},
		{func(s *Spec) { s.MaxResultBytes = 1023 }, "max-result-bytes", "must be in [1024, 16777216], not 1023"},
		{func(s *Spec) { s.MaxRetries = -1 }, "max-retries", "must be at least 0, not -1"},
		{func(s *Spec) { s.PassThreshold = nan }, "pass-threshold", "must be in [0, 1], not NaN"},
		{func(s *Spec) { s.RPS = 1e7 }, "rps", "must be 0 (no limit) or in [0.001, 1e6], not 1e+07"},
		{func(s *Spec) { x := 3.0; s.Temperature = &x }, "temperature", "must be in [0, 2], not 3"},
		{func(s *Spec) { s.Timeout = 0 }, "timeout", "must be positive, not 0s"},
		{func(s *Spec) { s.Protocol = "xml" }, "protocol", `must be json or tools, not "xml"`},
		{func(s *Spec) { s.Protocol, s.PromptTemplate = ProtocolTools, "p.tmpl" }, "prompt-template", "is for the json protocol"},
		{func(s *Spec) { s.Limit, s.Sample = 2, 3 }, "sample", "and --limit both choose"},
		{func(s *Spec) { s.SampleSeed = 4 }, "sample-seed", "goes with --sample"},
	} {
		s := Default()
		c.mod(&s)
		var e *Error
		if err := s.Check(); !errors.As(err, &e) || e.Flag != c.flag || !strings.HasPrefix(e.Why, c.why) {
			t.Errorf("%s: %v, want %s", c.flag, err, c.why)
		}
	}
	s := Default()
	if err := s.Check(); err != nil || !slices.Equal(s.ActorSpecs, DefaultActors) {
		t.Errorf("the default: %v, actors %v", err, s.ActorSpecs)
	}
}

// TestRecorded: a run of the json protocol records no tools budget, and
// the settings recorded only off their default are left out at it.
func TestRecorded(t *testing.T) {
	s := Default()
	s.MaxTurns = 5
	r := s.Recorded()
	if r.MaxTurns != 0 || r.Disclosure != "" || r.Protocol != "" || r.MaxAnswerBytes != 0 || r.Rounds != 1 {
		t.Errorf("json: %+v", r)
	}
	s.Protocol, s.MaxAnswerBytes = ProtocolTools, 2048
	r = s.Recorded()
	if r.MaxTurns != 5 || r.Disclosure != DisclosureWhole || r.Protocol != ProtocolTools || r.MaxAnswerBytes != 2048 {
		t.Errorf("tools: %+v", r)
	}
	s.PromptTemplate = "p.tmpl"
	if k := s.Keyed(); k.PromptTemplate != "" || !slices.Equal(Unkeyed(), []string{"prompt_template"}) {
		t.Errorf("Keyed: %+v, Unkeyed %v", k, Unkeyed())
	}
}

// TestScaleFlagList: --scale takes a comma list and may be repeated, each
// use adding its scales after the others; the first use replaces the
// default 1x.
func TestScaleFlagList(t *testing.T) {
	for _, tt := range []struct {
		args []string
		want string
	}{
		{nil, "1x"},
		{[]string{"--scale", "10MB"}, "10MB"},
		{[]string{"--scale", "1x, 1MB"}, "1x,1MB"},
		{[]string{"--scale", "1MB", "--scale", "1x,10MB"}, "1MB,1x,10MB"},
	} {
		s := Default()
		fs := flag.NewFlagSet("run", flag.ContinueOnError)
		Bind(fs, &s)
		if err := fs.Parse(tt.args); err != nil {
			t.Fatal(err)
		}
		if s.Scale != tt.want {
			t.Errorf("%q: scale %q, want %q", tt.args, s.Scale, tt.want)
		}
	}
}
