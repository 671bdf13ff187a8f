package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/patchbench/patchbench/runtime"
)

// Check is one rubric check on the final state of a run: a stable id (unique
// in its case), a JSON Pointer and exactly one test. The tests are described
// in docs/cases.md.
type Check struct {
	ID          string          `json:"id"`
	Path        runtime.Pointer `json:"path"`
	Equals      json.RawMessage `json:"equals,omitempty"`
	ContainsAll []any           `json:"contains_all,omitempty"`
	ContainsAny []any           `json:"contains_any,omitempty"`
	// Mentions holds when some string anywhere at or below the path (a
	// member's value, an array's element, at any depth) contains one of
	// its strings, case-insensitively: a test robust to the shape an
	// answer gives a value (a string, an object, a list).
	Mentions []string     `json:"mentions,omitempty"`
	Matches  string       `json:"matches,omitempty"`
	Within   *Tolerance   `json:"within,omitempty"`
	Absent   bool         `json:"absent,omitempty"`
	Length   *LengthRange `json:"length,omitempty"`
	// Rule is a CEL expression that must give true, with pre the run's
	// initial state (grown, at a scale) and post its final state (the
	// environment of the invariants; runtime.CompileRule). Path then
	// names what the check is about, for reports: the rule reads the
	// states itself.
	Rule string `json:"rule,omitempty"`

	re     *regexp.Regexp
	equals any
	rule   *runtime.Rule
}

// Tolerance is the operand of a within check: |got − Value| ≤ Tolerance.
type Tolerance struct {
	Value     json.Number `json:"value"`
	Tolerance json.Number `json:"tolerance"`
}

// LengthRange bounds a length; a nil bound is open. The bounds are
// integers (1.0 is one) up to 1e9, which the case schema checks.
type LengthRange struct {
	Min *float64 `json:"min,omitempty"`
	Max *float64 `json:"max,omitempty"`
}

// Kind names the check's test ("equals", "contains_all", ...).
func (c *Check) Kind() string {
	switch {
	case c.Equals != nil:
		return "equals"
	case c.ContainsAll != nil:
		return "contains_all"
	case c.ContainsAny != nil:
		return "contains_any"
	case c.Mentions != nil:
		return "mentions"
	case c.Matches != "":
		return "matches"
	case c.Within != nil:
		return "within"
	case c.Absent:
		return "absent"
	case c.Length != nil:
		return "length"
	case c.Rule != "":
		return "rule"
	}
	return ""
}

// Describe says what the check tests, in the format's own words and
// without its path: `contains_all ["2187","chunk"]`, `length {min: 1}`.
func (c *Check) Describe() string {
	operand := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	switch c.Kind() {
	case "equals":
		return "equals " + string(c.Equals)
	case "contains_all":
		return "contains_all " + operand(c.ContainsAll)
	case "contains_any":
		return "contains_any " + operand(c.ContainsAny)
	case "mentions":
		return "mentions " + operand(c.Mentions)
	case "matches":
		return "matches " + operand(c.Matches)
	case "within":
		return fmt.Sprintf("within %s ± %s", c.Within.Value, c.Within.Tolerance)
	case "absent":
		return "absent"
	case "length":
		var parts []string
		if c.Length.Min != nil {
			parts = append(parts, fmt.Sprintf("min: %g", *c.Length.Min))
		}
		if c.Length.Max != nil {
			parts = append(parts, fmt.Sprintf("max: %g", *c.Length.Max))
		}
		return "length {" + strings.Join(parts, ", ") + "}"
	case "rule":
		return "rule " + c.Rule
	}
	return ""
}

// compile prepares the regular expression and the equals operand.
func (c *Check) compile() error {
	if c.Kind() == "" {
		return errors.New("a check needs one test: equals, contains_all, contains_any, mentions, matches, within, absent, length or rule")
	}
	if c.Rule != "" {
		r, err := runtime.CompileRule(c.Rule)
		if err != nil {
			return fmt.Errorf("rule: %w", err)
		}
		c.rule = r
	}
	if c.Matches != "" {
		re, err := regexp.Compile(c.Matches)
		if err != nil {
			return fmt.Errorf("matches: %w", err)
		}
		c.re = re
	}
	if c.Equals != nil {
		v, err := decodeValue(c.Equals)
		if err != nil {
			return fmt.Errorf("equals: %w", err)
		}
		c.equals = v
	}
	if c.Length != nil && c.Length.Min != nil && c.Length.Max != nil && *c.Length.Min > *c.Length.Max {
		return errors.New("length: min is above max")
	}
	return nil
}

// Holds reports whether the check holds on a run whose initial state was
// initial and whose final state is final (decoded JSON values as
// runtime.Document.Value returns them). Every test but rule reads final
// alone; a rule that cannot be evaluated does not hold (Eval says why).
func (c *Check) Holds(initial, final any) bool {
	ok, _ := c.Eval(initial, final)
	return ok
}

// Eval is Holds with the reason a rule check could not be evaluated (a
// CEL error, a result that is not a bool); the error is nil for every
// other test.
func (c *Check) Eval(initial, final any) (bool, error) {
	if c.Kind() == "rule" {
		if c.rule == nil {
			return false, errors.New("the rule is not compiled")
		}
		return c.rule.Holds(context.Background(), initial, final)
	}
	return c.holds(final), nil
}

// holds is every test but rule, on the final state.
func (c *Check) holds(state any) bool {
	v, ok := runtime.Lookup(state, c.Path)
	if !ok {
		return c.Absent
	}
	switch c.Kind() {
	case "equals":
		return runtime.EqualJSON(v, c.equals)
	case "contains_all":
		for _, want := range c.ContainsAll {
			if !contains(v, want) {
				return false
			}
		}
		return true
	case "mentions":
		found := false
		walkStrings(v, func(s string) {
			for _, want := range c.Mentions {
				found = found || strings.Contains(strings.ToLower(s), strings.ToLower(want))
			}
		})
		return found
	case "contains_any":
		for _, want := range c.ContainsAny {
			if contains(v, want) {
				return true
			}
		}
		return false
	case "matches":
		s, ok := v.(string)
		return ok && c.re != nil && c.re.MatchString(s)
	case "within":
		got, ok := number(v)
		want, ok2 := number(json.Number(c.Within.Value))
		tol, ok3 := number(json.Number(c.Within.Tolerance))
		if !ok || !ok2 || !ok3 {
			return false
		}
		d := new(big.Float).Sub(got, want)
		return d.Abs(d).Cmp(tol) <= 0
	case "absent":
		return false
	case "length":
		n := -1
		switch x := v.(type) {
		case string:
			n = utf8.RuneCountInString(x)
		case []any:
			n = len(x)
		case map[string]any:
			n = len(x)
		}
		if n < 0 {
			return false
		}
		return (c.Length.Min == nil || float64(n) >= *c.Length.Min) && (c.Length.Max == nil || float64(n) <= *c.Length.Max)
	}
	return false
}

// walkStrings calls fn with every string value at or below v (member
// names excluded).
func walkStrings(v any, fn func(string)) {
	switch x := v.(type) {
	case string:
		fn(x)
	case []any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	case map[string]any:
		for _, e := range x {
			walkStrings(e, fn)
		}
	}
}

// contains is the membership test of contains_all and contains_any.
func contains(v, want any) bool {
	switch x := v.(type) {
	case string:
		w, ok := want.(string)
		return ok && strings.Contains(strings.ToLower(x), strings.ToLower(w))
	case []any:
		for _, e := range x {
			if runtime.EqualJSON(e, normalise(want)) {
				return true
			}
		}
	case map[string]any:
		w, ok := want.(string)
		if ok {
			_, has := x[w]
			return has
		}
	}
	return false
}

// normalise turns an operand decoded by encoding/json (float64 for
// numbers when not using json.Number) into the runtime's form.
func normalise(v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	d, err := runtime.ParseDocument(b)
	if err != nil {
		return v
	}
	return d.Value()
}

func number(v any) (*big.Float, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return nil, false
	}
	f, _, err := big.ParseFloat(string(n), 10, 200, big.ToNearestEven)
	return f, err == nil
}
