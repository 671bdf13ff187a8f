package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/interpreter"
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
// (the current phase, a string).
func invariantEnv() (*cel.Env, error) {
	celEnvOnce.Do(func() {
		celEnv, celEnvErr = cel.NewEnv(
			cel.Variable("pre", cel.DynType),
			cel.Variable("post", cel.DynType),
			cel.Variable("phase", cel.StringType),
		)
	})
	return celEnv, celEnvErr
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
func evalInvariant(ctx context.Context, inv invariant, pre, post any, phase string) (code, msg, detail string) {
	act := map[string]any{
		"pre":   jsonAdapter.NativeToValue(pre),
		"post":  jsonAdapter.NativeToValue(post),
		"phase": phase,
	}
	out, _, err := inv.prg.ContextEval(ctx, act)
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
// (overlay.go), which read as the containers they stand for. A number becomes an int when its text is an
// integer that fits in int64, a uint when it fits only in uint64, and a
// double otherwise; an integer beyond uint64, or a number beyond the
// range of a double (overflow or underflow), becomes a CEL error, so a
// rule that reads it fails with invariant_error instead of comparing an
// approximation.
var jsonAdapter types.Adapter = jsonTypeAdapter{}

type jsonTypeAdapter struct{}

func (a jsonTypeAdapter) NativeToValue(v any) ref.Val {
	switch x := v.(type) {
	case json.Number:
		s := string(x)
		if i, err := strconv.ParseInt(s, 10, 64); err == nil {
			return types.Int(i)
		}
		if u, err := strconv.ParseUint(s, 10, 64); err == nil {
			return types.Uint(u)
		}
		if !strings.ContainsAny(s, ".eE") {
			return types.NewErr("the integer %s is beyond CEL's int and uint range", s)
		}
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return types.NewErr("the number %s is beyond the range of a CEL double", s)
		}
		if f == 0 {
			if d, ok := normalizeNumber(s); ok && d.digits != "" {
				return types.NewErr("the number %s is beyond the range of a CEL double", s)
			}
		}
		return types.Double(f)
	case map[string]any:
		return types.NewStringInterfaceMap(a, x)
	case []any:
		return types.NewDynamicList(a, x)
	case *ovNode:
		return newOverlayVal(a, x)
	}
	return types.DefaultTypeAdapter.NativeToValue(v)
}
