package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// A JSON value in this package is one of: nil (null), bool, string,
// json.Number (a number with its exact text), []any (array) or
// map[string]any (object). Values are treated as immutable: every
// operation that changes a document copies the containers on the changed
// path and shares the rest.

// SyntaxError is a JSON text that could not be decoded strictly: invalid
// JSON, a duplicate member name, nesting deeper than the limit, or data
// after the value. Line and Column are 1-based and count bytes.
type SyntaxError struct {
	Offset int64
	Line   int
	Column int
	Msg    string
}

func (e *SyntaxError) Error() string {
	return fmt.Sprintf("line %d, column %d: %s", e.Line, e.Column, e.Msg)
}

func syntaxErrorAt(b []byte, off int64, msg string) *SyntaxError {
	off = max(0, min(off, int64(len(b))))
	line := 1 + bytes.Count(b[:off], []byte{'\n'})
	col := int(off) + 1
	if i := bytes.LastIndexByte(b[:off], '\n'); i >= 0 {
		col = int(off) - i
	}
	return &SyntaxError{Offset: off, Line: line, Column: col, Msg: msg}
}

// encodeJSON encodes v compactly, without HTML escaping, keeping number
// text and sorting object members by name (deterministic output).
func encodeJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// EncodeIndent encodes a JSON value with the given indent, without HTML
// escaping, keeping number text and sorting object members by name, so
// equal values always give equal bytes. It is the rendering used for views.
func EncodeIndent(v any, indent string) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", indent)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'}), nil
}

// equalJSON reports whether two JSON values are equal in the sense of RFC
// 6902 §4.6: same type; numbers equal by value; strings equal by code
// points; arrays of equal length with equal elements in order; objects
// with the same member names and equal values.
func equalJSON(a, b any) bool {
	switch x := a.(type) {
	case nil:
		return b == nil
	case bool:
		y, ok := b.(bool)
		return ok && x == y
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		y, ok := b.(json.Number)
		return ok && numbersEqual(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalJSON(x[i], y[i]) {
				return false
			}
		}
		return true
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok || !equalJSON(xv, yv) {
				return false
			}
		}
		return true
	}
	return false
}

// numbersEqual compares two JSON numbers by value, exactly, whatever their
// spelling: 1, 1.0, 10e-1 and 1e0 are equal; -0 equals 0. It never rounds
// through float64 and does not allocate in proportion to an exponent.
func numbersEqual(a, b json.Number) bool {
	if a == b {
		return true
	}
	na, ok1 := normalizeNumber(string(a))
	nb, ok2 := normalizeNumber(string(b))
	return ok1 && ok2 && na.neg == nb.neg && na.digits == nb.digits && na.exp.Cmp(nb.exp) == 0
}

type decimal struct {
	neg    bool
	digits string   // significant digits, no leading or trailing zeros; "" for zero
	exp    *big.Int // value = 0.digits × 10^exp
}

// normalizeNumber brings a JSON number (RFC 8259 §6 grammar) into a
// canonical decimal form; ok is false if s is not a JSON number.
func normalizeNumber(s string) (decimal, bool) {
	d := decimal{exp: new(big.Int)}
	if strings.HasPrefix(s, "-") {
		d.neg = true
		s = s[1:]
	}
	mant, expPart := s, ""
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		mant, expPart = s[:i], s[i+1:]
	}
	intPart, frac := mant, ""
	if i := strings.IndexByte(mant, '.'); i >= 0 {
		intPart, frac = mant[:i], mant[i+1:]
	}
	if intPart == "" || !allDigits(intPart) || !allDigits(frac) || (strings.Contains(mant, ".") && frac == "") {
		return d, false
	}
	if expPart != "" {
		if _, ok := d.exp.SetString(strings.TrimPrefix(expPart, "+"), 10); !ok {
			return d, false
		}
	} else if strings.ContainsAny(s, "eE") {
		return d, false
	}
	digits := intPart + frac
	lead := len(digits) - len(strings.TrimLeft(digits, "0"))
	digits = digits[lead:]
	// value = 0.(intPart frac) × 10^(len(intPart)+exp); dropping leading
	// zeros moves the point.
	pointPos := int64(len(intPart) - lead)
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		return decimal{exp: new(big.Int)}, true // zero, sign ignored
	}
	d.digits = digits
	d.exp.Add(d.exp, big.NewInt(pointPos))
	return d, true
}

func allDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Bounds on JSON numbers. RFC 8259 §6 lets implementations limit the
// range and precision of numbers; these bounds are far beyond any real
// state and keep exact comparison cheap and the schema library (which
// parses numbers with math/big) safe.
const (
	maxNumberLength   = 1000 // characters of number text
	maxNumberExponent = 1000 // magnitude of an explicit exponent
)

// checkNumber reports a number outside the supported range.
func checkNumber(n json.Number) error {
	s := string(n)
	if len(s) > maxNumberLength {
		return fmt.Errorf("number with %d characters; at most %d are supported", len(s), maxNumberLength)
	}
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e := strings.TrimLeft(s[i+1:], "+-")
		e = strings.TrimLeft(e, "0")
		if len(e) > 4 || (e != "" && mustAtoi(e) > maxNumberExponent) {
			return fmt.Errorf("number %.40s has an exponent beyond ±%d", s, maxNumberExponent)
		}
	}
	return nil
}

func mustAtoi(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		n = n*10 + int(s[i]-'0')
	}
	return n
}

// CheckNumbers walks a decoded JSON value and reports the first number
// outside the supported range (at most 1000 characters, exponent within
// ±1000), with its location.
func CheckNumbers(v any) error {
	var walk func(v any, at Pointer) error
	walk = func(v any, at Pointer) error {
		switch x := v.(type) {
		case json.Number:
			if err := checkNumber(x); err != nil {
				return fmt.Errorf("at %q: %w", at.String(), err)
			}
		case []any:
			for i, e := range x {
				if err := walk(e, at.Append(strconv.Itoa(i))); err != nil {
					return err
				}
			}
		case map[string]any:
			for k, e := range x {
				if err := walk(e, at.Append(k)); err != nil {
					return err
				}
			}
		}
		return nil
	}
	return walk(v, Pointer{})
}

// sizeUpTo returns an upper estimate of the encoded size of v in bytes,
// stopping early once it passes limit (then ok is false). Strings count
// their bytes plus quotes; escapes are not counted.
func sizeUpTo(v any, limit int64) (n int64, ok bool) {
	var walk func(v any) bool
	walk = func(v any) bool {
		switch x := v.(type) {
		case nil:
			n += 4
		case bool:
			n += 5
		case string:
			n += int64(len(x)) + 2
		case json.Number:
			n += int64(len(x))
		case []any:
			n += 2 + int64(len(x))
			for _, e := range x {
				if !walk(e) {
					return false
				}
			}
		case map[string]any:
			n += 2 + int64(len(x))
			for k, e := range x {
				n += int64(len(k)) + 3
				if !walk(e) {
					return false
				}
			}
		}
		return n <= limit
	}
	ok = walk(v)
	return n, ok
}

// ATypeName is TypeName with its indefinite article ("an object", "a
// string"; "null" alone), for messages that say what a value is.
func ATypeName(v any) string {
	switch n := TypeName(v); n {
	case "null":
		return n
	case "array", "object":
		return "an " + n
	default:
		return "a " + n
	}
}

// TypeName names the JSON type of a decoded value (null, boolean,
// string, number, array, object; Go's name of its type for any other
// value), for messages that must not show the value.
func TypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case string:
		return "string"
	case json.Number:
		return "number"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
