package runtime

import (
	"errors"
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

var printer = message.NewPrinter(language.English)

// noLoader refuses every external schema: a contract's schemas are
// self-contained, and compiling one never reads a file or the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("external schema %q not allowed: contract schemas must be self-contained", url)
}

// compileSchema compiles one JSON Schema (draft 2020-12 unless the schema
// says otherwise through $schema).
func compileSchema(field string, doc any) (*jsonschema.Schema, error) {
	if err := CheckNumbers(doc); err != nil {
		return nil, &ContractError{Field: field, Err: err}
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	const url = "mem:///contract-schema.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil, &ContractError{Field: field, Err: err}
	}
	s, err := c.Compile(url)
	if err != nil {
		// Name the schema by its field, not by the internal URL.
		msg := strings.ReplaceAll(err.Error(), strconv.Quote(url+"#"), "the schema")
		msg = strings.ReplaceAll(msg, url, field)
		return nil, &ContractError{Field: field, Err: errors.New(msg)}
	}
	return s, nil
}

// schemaFailure is the first leaf error of a validation, described
// without any value from the instance.
type schemaFailure struct {
	at      Pointer
	keyword string
	msg     string
	detail  string // the library's own message; may quote the value
	kind    jsonschema.ErrorKind
}

// told returns the failure's message and keyword as the actor may be told
// them: named reports whether a member of the failing value may be named
// (the view shows it, or the proposal named it). The keywords that name
// members (required, dependentRequired, dependencies) keep only the names
// it allows: a member the schema requires, or a member that triggers a
// dependency, at a location the view does not show is hidden structure.
func (f *schemaFailure) told(named func(string) bool) (msg, keyword string) {
	switch k := f.kind.(type) {
	case *kind.Required:
		var said []string
		for _, m := range k.Missing {
			if named(m) {
				said = append(said, m)
			}
		}
		switch {
		case len(said) == len(k.Missing):
			return f.msg, f.keyword
		case len(said) == 0:
			return "missing required members outside the view", f.keyword
		default:
			return "missing required members: " + strings.Join(said, ", ") + ", and others outside the view", f.keyword
		}
	case *kind.DependentRequired:
		if !named(k.Prop) {
			return `fails the schema keyword "dependentRequired"`, "/dependentRequired"
		}
	case *kind.Dependency:
		if !named(k.Prop) {
			return `fails the schema keyword "dependency"`, "/dependency"
		}
	}
	return f.msg, f.keyword
}

// validateSchema validates v and returns one failure, or nil. Among the
// leaves of the library's error tree it picks the first by instance
// location, then keyword location, so the same state always gives the
// same failure whatever the map iteration order.
func validateSchema(s *jsonschema.Schema, v any) (f *schemaFailure, err error) {
	defer func() {
		// The library must not take the verifier down with it: a panic
		// inside validation is a schema that could not be evaluated.
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("schema validation panicked: %v", r)
		}
	}()
	err = s.Validate(v)
	if err == nil {
		return nil, nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return nil, err
	}
	var best *schemaFailure
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		f := &schemaFailure{
			at:      Pointer(e.InstanceLocation),
			keyword: "/" + strings.Join(e.ErrorKind.KeywordPath(), "/"),
			msg:     describeKind(e.ErrorKind),
			detail:  e.ErrorKind.LocalizedString(printer),
			kind:    e.ErrorKind,
		}
		if best == nil || f.at.Compare(best.at) < 0 || (f.at.Equal(best.at) && f.keyword+f.msg < best.keyword+best.msg) {
			best = f
		}
	}
	walk(ve)
	return best, nil
}

// describeKind says what a schema keyword wants, using only what the
// schema says, never the instance value (which may be outside the view).
func describeKind(k jsonschema.ErrorKind) string {
	switch k := k.(type) {
	case *kind.Required:
		return "missing required members: " + strings.Join(k.Missing, ", ")
	case *kind.Type:
		return "must be of type " + strings.Join(k.Want, " or ")
	case *kind.Pattern:
		return fmt.Sprintf("must match the pattern %q", k.Want)
	case *kind.Enum:
		return "must be one of the values the schema allows"
	case *kind.Const:
		return "must equal the schema's constant"
	case *kind.Format:
		return "must be a valid " + k.Want
	case *kind.MinLength:
		return fmt.Sprintf("must have at least %d characters", k.Want)
	case *kind.MaxLength:
		return fmt.Sprintf("must have at most %d characters", k.Want)
	case *kind.MinItems:
		return fmt.Sprintf("must have at least %d items", k.Want)
	case *kind.MaxItems:
		return fmt.Sprintf("must have at most %d items", k.Want)
	case *kind.MinProperties:
		return fmt.Sprintf("must have at least %d members", k.Want)
	case *kind.MaxProperties:
		return fmt.Sprintf("must have at most %d members", k.Want)
	case *kind.Minimum:
		return "must be at least " + exactDecimal(k.Want)
	case *kind.Maximum:
		return "must be at most " + exactDecimal(k.Want)
	case *kind.ExclusiveMinimum:
		return "must be greater than " + exactDecimal(k.Want)
	case *kind.ExclusiveMaximum:
		return "must be less than " + exactDecimal(k.Want)
	case *kind.AdditionalProperties:
		return "has members the schema does not allow"
	case *kind.UniqueItems:
		return "must not contain equal items"
	case *kind.FalseSchema:
		return "is not allowed here"
	case *kind.RefCycle:
		// Schema locations only: the contract's, which the actor may see.
		return fmt.Sprintf("cannot be checked: the schema's references loop: %s and %s both resolve to %s",
			schemaLocation(k.KeywordLocation1), schemaLocation(k.KeywordLocation2), schemaLocation(k.URL))
	}
	return fmt.Sprintf("fails the schema keyword %q", strings.Join(k.KeywordPath(), "/"))
}

// exactDecimal writes r, a bound read from a JSON number, as plain
// decimal text with its exact value: a number a schema judges exactly is
// never reported rounded. A rational whose decimal expansion does not end
// (which no JSON number is) is written as a fraction.
func exactDecimal(r *big.Rat) string {
	if r.IsInt() {
		return r.Num().String()
	}
	// r = n / (2^a 5^b) has max(a, b) decimals.
	d := new(big.Int).Set(r.Denom())
	places := [2]int{}
	for i, p := range []int64{2, 5} {
		q, m, bp := new(big.Int), new(big.Int), big.NewInt(p)
		for {
			q.QuoRem(d, bp, m)
			if m.Sign() != 0 {
				break
			}
			d.Set(q)
			places[i]++
		}
	}
	if d.Cmp(big.NewInt(1)) != 0 {
		return r.RatString()
	}
	return r.FloatString(max(places[0], places[1]))
}

// schemaLocation is a location in a contract's schema as "#/pointer",
// without the internal URL the schema was compiled under.
func schemaLocation(loc string) string {
	if i := strings.IndexByte(loc, '#'); i >= 0 {
		return loc[i:]
	}
	return "#" + loc
}
