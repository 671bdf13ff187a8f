package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	celast "cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/overloads"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
	"github.com/patchbench/patchbench/runtime/internal/overlay"
)

type invariant struct {
	name string
	prg  cel.Program
}

var (
	celEnvOnce sync.Once
	celEnv     *cel.Env
	celEnvErr  error
)

// invariantEnv is the CEL environment of every invariant: pre and post
// (the state before and after the patch, as dynamic JSON values) and phase
// (the current phase, a string). The conversions to double that CEL
// defines on int, uint and string are redefined to be exact: a value no
// double holds exactly is an inexactError, not a rounded double.
func invariantEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("pre", cel.DynType),
			cel.Variable("post", cel.DynType),
			cel.Variable("phase", cel.StringType),
			cel.Function(overloads.TypeConvertDouble,
				cel.Overload(overloads.IntToDouble, []*cel.Type{cel.IntType}, cel.DoubleType,
					cel.UnaryBinding(func(v ref.Val) ref.Val { return exactIntToDouble(v) })),
				cel.Overload(overloads.UintToDouble, []*cel.Type{cel.UintType}, cel.DoubleType,
					cel.UnaryBinding(func(v ref.Val) ref.Val { return exactIntToDouble(v) })),
				cel.Overload(overloads.StringToDouble, []*cel.Type{cel.StringType}, cel.DoubleType,
					cel.UnaryBinding(exactStringToDouble)),
			),
		)
	})
	return celEnv, celEnvErr
}

// inexactError is a number that no CEL value holds exactly; text is the
// number (operator-only detail: it may be hidden data).
type inexactError struct{ text string }

func (e *inexactError) Error() string {
	return fmt.Sprintf("the number %.60s has no exact CEL int, uint or double (its float64 round trip changes it)", e.text)
}

// exactIntToDouble is double() of an int or uint: the double when it
// holds the integer exactly, else an inexactError (a double holds every
// integer up to 2^53 in magnitude, and beyond only some).
func exactIntToDouble(v ref.Val) ref.Val {
	switch x := v.(type) {
	case types.Int:
		f := float64(x)
		if f < 0x1p63 && int64(f) == int64(x) {
			return types.Double(f)
		}
		return types.WrapErr(&inexactError{strconv.FormatInt(int64(x), 10)})
	case types.Uint:
		f := float64(x)
		if f < 0x1p64 && uint64(f) == uint64(x) {
			return types.Double(f)
		}
		return types.WrapErr(&inexactError{strconv.FormatUint(uint64(x), 10)})
	}
	return types.MaybeNoSuchOverloadErr(v)
}

// exactStringToDouble is double() of a string: a string in JSON number
// syntax must be held exactly (as exactNumber decides); any other text is
// parsed as CEL's own conversion does.
func exactStringToDouble(v ref.Val) ref.Val {
	s, ok := v.(types.String)
	if !ok {
		return types.MaybeNoSuchOverloadErr(v)
	}
	if _, isNumber := normalizeNumber(string(s)); isNumber {
		f, ok := exactDouble(string(s))
		if !ok {
			return types.WrapErr(&inexactError{string(s)})
		}
		return types.Double(f)
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return types.WrapErr(err)
	}
	return types.Double(f)
}

// invariants compiles a contract's rules: each must have a unique,
// non-empty name and a boolean or dynamic result; a rule compiled before
// by cc with the same cost limit is not compiled again.
func (cc *Compiler) invariants(specs []InvariantSpec, lim Limits) ([]invariant, error) {
	env, err := invariantEnv()
	if err != nil {
		return nil, err
	}
	out := make([]invariant, 0, len(specs))
	seen := map[string]bool{}
	for i, s := range specs {
		field := fmt.Sprintf("invariants[%d]", i)
		if s.Name == "" {
			return nil, &ContractError{Field: field + ".name", Err: errors.New("empty invariant name")}
		}
		if seen[s.Name] {
			return nil, &ContractError{Field: field + ".name", Err: fmt.Errorf("invariant %q defined twice", s.Name)}
		}
		seen[s.Name] = true
		key := ruleKey{rule: s.Rule, cost: lim.MaxInvariantCost}
		cc.mu.Lock()
		prg, ok := cc.rules[key]
		cc.mu.Unlock()
		if ok {
			out = append(out, invariant{name: s.Name, prg: prg})
			continue
		}
		ast, iss := env.Compile(s.Rule)
		if iss.Err() != nil {
			return nil, &ContractError{Field: field + ".rule", Err: iss.Err()}
		}
		if lit := inexactLiteral(ast, s.Rule); lit != "" {
			return nil, &ContractError{Field: field + ".rule", Err: fmt.Errorf("the number %s has no exact double (its float64 round trip changes it); CEL would compare the rounded value", lit)}
		}
		if t := ast.OutputType(); !t.IsExactType(cel.BoolType) && !t.IsExactType(cel.DynType) {
			return nil, &ContractError{Field: field + ".rule", Err: fmt.Errorf("rule has type %s, want bool", t)}
		}
		prg, err := env.Program(ast,
			cel.CostLimit(lim.MaxInvariantCost),
			cel.InterruptCheckFrequency(100),
		)
		if err != nil {
			return nil, &ContractError{Field: field + ".rule", Err: err}
		}
		cc.mu.Lock()
		if cc.rules == nil {
			cc.rules = map[ruleKey]cel.Program{}
		}
		cc.rules[key] = prg
		cc.mu.Unlock()
		out = append(out, invariant{name: s.Name, prg: prg})
	}
	return out, nil
}

// evalInvariant evaluates one rule; it returns the stable code, a message
// that names the rule but never a value, and CEL's own error text as the
// operator-only detail (it can quote data, so it stays out of msg).
//
// A rule that read a number no CEL value holds exactly (exactNumber),
// from the state or through double(), gives inexact_number whatever its
// result: CEL swallows an error inside the equality of two lists or maps
// and under || and &&, and a rule must not pass by not looking.
func evalInvariant(ctx context.Context, inv invariant, pre, post any, phase string) (code, msg, detail string) {
	reads := &numberReads{}
	a := jsonTypeAdapter{reads: reads}
	act := map[string]any{
		"pre":   a.NativeToValue(pre),
		"post":  a.NativeToValue(post),
		"phase": phase,
	}
	out, _, err := inv.prg.ContextEval(ctx, act)
	var inexact *inexactError
	if reads.inexact != nil || errors.As(err, &inexact) {
		if inexact == nil {
			inexact = reads.inexact
		}
		return CodeInexactNumber, fmt.Sprintf("invariant %q reads a number that no CEL int, uint or double holds exactly (its float64 round trip changes it); it is not judged by a rounded value", inv.name), inexact.Error()
	}
	if err != nil {
		detail = err.Error()
		var cancelled interpreter.EvalCancelledError
		if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
			return CodeInvariantError, fmt.Sprintf("invariant %q exceeded its cost limit", inv.name), detail
		}
		if ctx.Err() != nil {
			return CodeLimitExceeded, fmt.Sprintf("invariant %q ran past the work-time limit", inv.name), detail
		}
		return CodeInvariantError, fmt.Sprintf("invariant %q could not be evaluated", inv.name), detail
	}
	b, ok := out.(types.Bool)
	if !ok {
		return CodeInvariantNotBool, fmt.Sprintf("invariant %q gave a %s, not a bool", inv.name, out.Type().TypeName()), ""
	}
	if !b {
		return CodeInvariantViolated, fmt.Sprintf("invariant %q does not hold", inv.name), ""
	}
	return CodeOK, "", ""
}

// jsonAdapter presents decoded JSON to CEL lazily: objects and arrays are
// wrapped, not converted, and so are the overlays of a committed state
// (internal/overlay), which read as the containers they stand for. A number
// becomes the CEL value that holds it exactly (exactNumber), or, when none
// does, an error; an evaluation's own adapter (evalInvariant) also notes
// the first such number it was asked for.
var jsonAdapter types.Adapter = jsonTypeAdapter{}

type jsonTypeAdapter struct {
	reads *numberReads // nil: nothing is noted
}

// numberReads is what one evaluation's adapter saw: the first number no
// CEL value holds exactly. One evaluation runs on one goroutine.
type numberReads struct {
	inexact *inexactError
}

func (a jsonTypeAdapter) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case json.Number:
		if n, ok := exactNumber(string(x)); ok {
			return n
		}
		e := &inexactError{string(x)}
		if a.reads != nil && a.reads.inexact == nil {
			a.reads.inexact = e
		}
		return types.WrapErr(e)
	case map[string]any:
		return types.NewStringInterfaceMap(a, x)
	case []any:
		return types.NewDynamicList(a, x)
	case *overlay.Node:
		return overlay.CELValue(a, x)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}

// exactNumber is the CEL value that holds the JSON number s exactly
// (no float64 rounding decides a gate; docs/contracts-and-gates.md):
//
//   - an int when s is an integer in int64's range, a uint in uint64's,
//     however it is spelled (9007199254740993, 9.007199254740993e15 and
//     9007199254740993.0 are all the int 9007199254740993) when its
//     magnitude is 2^53 or more, where doubles no longer hold every
//     integer; below 2^53 a number with a point or an exponent stays a
//     double, as it always was;
//   - a double when the double nearest s converts back (as its shortest
//     text, strconv 'g' -1) to the same value: 42.50 and 0.1 are
//     doubles, 42.500000000000000000000000000001, 1e400 and 1e-400 are
//     not; at 2^53 and above only integers beyond uint64 qualify, and only
//     those a double puts past every int and uint (beyond 2^64 or below
//     -2^63), so that CEL's comparisons of a double with an int or a uint,
//     which convert the integer to a double, never meet a rounded one.
//
// ok is false when no CEL value holds s exactly. Any two values it gives
// compare (==, <, <=) as their texts' exact values do: distinct doubles it
// accepts are the nearest doubles of distinct values, and an int or uint
// beside a double is either below 2^53 (converted exactly) or beyond
// every double it could be equal to.
func exactNumber(s string) (ref.Val, bool) {
	if !strings.ContainsAny(s, ".eE") {
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i), true
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return types.Uint(u), true
		}
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return nil, false // beyond a double's range, or not a number
	}
	if math.Abs(f) < 0x1p53 {
		if !roundTrips(s, f) {
			return nil, false
		}
		return types.Double(f), true
	}
	d, ok := normalizeNumber(s)
	if !ok || !d.exp.IsInt64() || d.exp.Int64() < int64(len(d.digits)) {
		return nil, false // not an integer: no double at 2^53 or more holds it
	}
	if d.exp.Int64() <= 20 { // at most 20 digits: it may fit 64 bits
		n, _ := new(big.Int).SetString(d.digits+strings.Repeat("0", int(d.exp.Int64())-len(d.digits)), 10)
		if d.neg {
			n.Neg(n)
		}
		if n.IsInt64() {
			return types.Int(n.Int64()), true
		}
		if n.IsUint64() {
			return types.Uint(n.Uint64()), true
		}
	}
	if (f > 0x1p64 || f < -0x1p63) && roundTrips(s, f) {
		return types.Double(f), true
	}
	return nil, false
}

// exactDouble is exactNumber restricted to doubles: the double that holds
// the JSON number s exactly, if one does.
func exactDouble(s string) (float64, bool) {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || !roundTrips(s, f) {
		return 0, false
	}
	return f, true
}

// roundTrips reports whether f, the double nearest the JSON number s,
// converts back to a text of the same value as s.
func roundTrips(s string, f float64) bool {
	if !strings.ContainsAny(s, "eE") {
		// Plain text: compare with f's shortest plain text, s's fraction
		// stripped of trailing zeros (both are then canonical).
		t := s
		if strings.Contains(t, ".") {
			t = strings.TrimRight(t, "0")
			t = strings.TrimSuffix(t, ".")
		}
		return t == strconv.FormatFloat(f, 'f', -1, 64)
	}
	return numbersEqual(json.Number(s), json.Number(strconv.FormatFloat(f, 'g', -1, 64)))
}

// InvariantOutcome is the verdict of one invariant: its name and the
// result the invariants gate would give for it alone.
type InvariantOutcome struct {
	Name   string
	Result GateResult
}

// FailingInvariants evaluates every invariant of the contract on pre and
// post (the states before and after a proposal) in phase and returns the
// outcome of each rule that does not hold, in the contract's order; none
// when all hold. Unlike the invariants gate, which stops at the first
// failing rule, it tells which rules fail: a rule that fails with the
// same code when post is pre (a step that changed nothing) was broken
// before the step: inherited, never the step's illegal commit
// (docs/run.md, illegal commits). The work-time limit
// bounds the whole evaluation; the error is the caller's context's.
func (c *Contract) FailingInvariants(ctx context.Context, pre, post *Document, phase string) ([]InvariantOutcome, error) {
	wctx, cancel := c.workContext(ctx)
	defer cancel()
	var out []InvariantOutcome
	for _, inv := range c.invariants {
		code, msg, detail := evalInvariant(wctx, inv, pre.Value(), post.Value(), phase)
		if err := callerEnded(wctx); err != nil {
			return nil, err
		}
		if code != CodeOK {
			out = append(out, InvariantOutcome{Name: inv.name, Result: GateResult{Gate: GateInvariants, Code: code, Message: msg, Detail: detail}})
		}
	}
	return out, nil
}

// celFloat is a CEL floating-point literal at the start of a text: digits
// with a fraction or an exponent, or a fraction alone (.5).
var celFloat = regexp.MustCompile(`^-?(?:[0-9]+\.[0-9]+(?:[eE][+-]?[0-9]+)?|[0-9]+[eE][+-]?[0-9]+|\.[0-9]+(?:[eE][+-]?[0-9]+)?)`)

// inexactLiteral returns the text of the first double literal of a
// compiled rule whose value no double holds exactly (roundTrips), "" when
// every one is exact: the parser turns 42.500000000000000000000000000001
// into 42.5, and the rule would judge a rounded value. Literals are found
// in the AST and read back from the source at their offsets.
func inexactLiteral(a *cel.Ast, source string) string {
	native := a.NativeRep()
	runes := []rune(source)
	found := ""
	celast.PostOrderVisit(native.Expr(), celast.NewExprVisitor(func(e celast.Expr) {
		if found != "" || e.Kind() != celast.LiteralKind {
			return
		}
		if _, ok := e.AsLiteral().(types.Double); !ok {
			return
		}
		r, ok := native.SourceInfo().GetOffsetRange(e.ID())
		if !ok || r.Start < 0 || int(r.Start) >= len(runes) {
			return
		}
		text := celFloat.FindString(string(runes[r.Start:]))
		if text == "" {
			return
		}
		j := strings.TrimPrefix(text, "-")
		if strings.HasPrefix(j, ".") {
			j = "0" + j
		}
		f, err := strconv.ParseFloat(j, 64)
		if err != nil || !roundTrips(j, f) {
			found = text
		}
	}))
	return found
}
