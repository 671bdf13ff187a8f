package runtime

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"sync"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/ext"
	"cel.dev/cel-go/interpreter"
)

// Rule is a CEL expression compiled in the environment of the
// invariants (pre, post and phase; numbers held exactly, as the
// invariants gate holds them) with CEL's list and string extensions
// (lists.range(n) gives an array's indices, for the pointers of a
// generated patch; join, format), for use outside a contract: a case's
// rubric rules and the rules that generate a reference patch (package
// bench). A Rule is safe for concurrent use.
type Rule struct {
	src string
	prg cel.Program
}

// MaxRuleCost bounds the CEL cost of one Rule evaluation. It is far above
// an invariant's (Limits.MaxInvariantCost): a rule reads a whole grown
// state (a filter over tens of thousands of records at 10 MB), and its
// author is the case's, not an actor.
const MaxRuleCost = 1 << 34

// CompileRule compiles a CEL expression over pre, post (dynamic JSON
// values) and phase (a string). Its result may be of any type; Holds
// wants a bool and Eval takes any JSON value. The error is CEL's
// (a parse or type error, with its position), or says that a double
// literal has no exact value.
func CompileRule(expr string) (*Rule, error) {
	env, err := ruleEnv()
	if err != nil {
		return nil, err
	}
	ast, iss := env.Compile(expr)
	if iss.Err() != nil {
		return nil, iss.Err()
	}
	if lit := inexactLiteral(ast, expr); lit != "" {
		return nil, fmt.Errorf("the number %s has no exact double (its float64 round trip changes it); CEL would compare the rounded value", lit)
	}
	prg, err := env.Program(ast, cel.CostLimit(MaxRuleCost), cel.InterruptCheckFrequency(100))
	if err != nil {
		return nil, err
	}
	return &Rule{src: expr, prg: prg}, nil
}

var (
	ruleEnvOnce sync.Once
	ruleEnvVal  *cel.Env
	ruleEnvErr  error
)

// ruleEnv is invariantEnv with the list and string extensions.
func ruleEnv() (*cel.Env, error) {
	ruleEnvOnce.Do(func() {
		env, err := invariantEnv()
		if err != nil {
			ruleEnvErr = err
			return
		}
		ruleEnvVal, ruleEnvErr = env.Extend(ext.Lists(), ext.Strings())
	})
	return ruleEnvVal, ruleEnvErr
}

// String is the rule's expression as written.
func (r *Rule) String() string { return r.src }

// eval runs the rule on pre and post (decoded JSON values, as
// Document.Value gives them; post may be nil when the rule reads only
// pre) with phase "".
func (r *Rule) eval(ctx context.Context, pre, post any) (ref.Val, error) {
	reads := &numberReads{}
	a := jsonTypeAdapter{reads: reads}
	act := map[string]any{"pre": a.NativeToValue(pre), "phase": ""}
	if post != nil {
		act["post"] = a.NativeToValue(post)
	}
	out, _, err := r.prg.ContextEval(ctx, act)
	if reads.inexact != nil {
		return nil, reads.inexact
	}
	if err != nil {
		var cancelled interpreter.EvalCancelledError
		if errors.As(err, &cancelled) && cancelled.Cause == interpreter.CostLimitExceeded {
			return nil, fmt.Errorf("the rule exceeded its cost limit (%d)", uint64(MaxRuleCost))
		}
		return nil, err
	}
	return out, nil
}

// Holds evaluates the rule on pre and post and reports whether it gives
// true. The error says why it could not be evaluated, or that it gave a
// value that is not a bool.
func (r *Rule) Holds(ctx context.Context, pre, post any) (bool, error) {
	out, err := r.eval(ctx, pre, post)
	if err != nil {
		return false, err
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("the rule gave a %s, not a bool", out.Type().TypeName())
	}
	return bool(b), nil
}

// Eval evaluates the rule on pre and post and returns its value as
// decoded JSON: objects as map[string]any, arrays as []any, numbers as
// json.Number (an int or uint as its digits, a double as its shortest
// text), strings, bools and nil. The error says why it could not be
// evaluated, or that the value has no JSON form (a map with a key that is
// not a string, a NaN, a byte string).
func (r *Rule) Eval(ctx context.Context, pre, post any) (any, error) {
	out, err := r.eval(ctx, pre, post)
	if err != nil {
		return nil, err
	}
	return celToJSON(out, 0)
}

// maxRuleDepth bounds the nesting of a rule's value.
const maxRuleDepth = 64

// celToJSON is a CEL value as decoded JSON (Rule.Eval).
func celToJSON(v ref.Val, depth int) (any, error) {
	if depth > maxRuleDepth {
		return nil, fmt.Errorf("the rule's value is nested more than %d deep", maxRuleDepth)
	}
	switch x := v.(type) {
	case types.Null:
		return nil, nil
	case types.Bool:
		return bool(x), nil
	case types.String:
		return string(x), nil
	case types.Int:
		return json.Number(strconv.FormatInt(int64(x), 10)), nil
	case types.Uint:
		return json.Number(strconv.FormatUint(uint64(x), 10)), nil
	case types.Double:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("the rule gave %v, which JSON has no number for", f)
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), nil
	case *types.Err:
		return nil, x
	}
	switch x := v.(type) {
	case traits.Mapper:
		out := map[string]any{}
		it := x.Iterator()
		for it.HasNext() == types.True {
			k := it.Next()
			ks, ok := k.(types.String)
			if !ok {
				return nil, fmt.Errorf("the rule gave a map with a %s key; a JSON object's member names are strings", k.Type().TypeName())
			}
			c, err := celToJSON(x.Get(k), depth+1)
			if err != nil {
				return nil, err
			}
			out[string(ks)] = c
		}
		return out, nil
	case traits.Lister:
		n, ok := x.Size().(types.Int)
		if !ok {
			return nil, errors.New("the rule gave a list of no size")
		}
		out := make([]any, 0, int(n))
		for i := types.Int(0); i < n; i++ {
			c, err := celToJSON(x.Get(i), depth+1)
			if err != nil {
				return nil, err
			}
			out = append(out, c)
		}
		return out, nil
	}
	return nil, fmt.Errorf("the rule gave a %s, which has no JSON form", v.Type().TypeName())
}
