package runtime

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// exactState holds an order total of 42.50 and integers around 2^53, the
// first integer a double cannot tell from its neighbour.
const exactState = `{"order": {"total": 42.50, "lines": [1.10, 2], "count": 9007199254740992, "big": 9007199254740993, "bigdot": 9007199254740992.0}}`

func exactContract(t testing.TB, rules ...string) *Contract {
	t.Helper()
	spec := ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{"/order"}, Source: []string{"/order"}}
	for i, r := range rules {
		spec.Invariants = append(spec.Invariants, InvariantSpec{Name: fmt.Sprintf("rule %d", i), Rule: r})
	}
	c, err := Compile(spec)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestInvariantsJudgeNumbersExactly reproduces a fault: with the total
// at 42.50, `post.order.total == pre.order.total` and a patch that writes
// 42.500000000000000000000000000001, the proposal committed (both sides
// were the double 42.5). No invariant judges a number by a rounded value:
// a number reaches CEL only as a value that holds it exactly, and a rule
// that reads one that no CEL int, uint or double holds is rejected with
// inexact_number, also where CEL would have swallowed the error (inside
// the equality of two objects). Both verification paths agree.
func TestInvariantsJudgeNumbersExactly(t *testing.T) {
	const longer = "42.500000000000000000000000000001"
	tests := []struct {
		name  string
		rule  string
		patch string
		code  string // CodeOK when it must commit
	}{
		{"the issue's reproduction", `post.order.total == pre.order.total`,
			`[{"op":"replace","path":"/order/total","value":` + longer + `}]`, CodeInexactNumber},
		{"inside an object's equality", `post.order == pre.order`,
			`[{"op":"replace","path":"/order/total","value":` + longer + `}]`, CodeInexactNumber},
		{"inside a list's equality", `post.order.lines == pre.order.lines`,
			`[{"op":"replace","path":"/order/lines/0","value":1.1000000000000000000001}]`, CodeInexactNumber},
		{"beyond a double's range, inside an object", `post.order == pre.order`,
			`[{"op":"replace","path":"/order/total","value":1e500}]`, CodeInexactNumber},
		{"below a double's range", `post.order.total >= 0.0`,
			`[{"op":"replace","path":"/order/total","value":1e-500}]`, CodeInexactNumber},
		{"an inexact read that the rule's result does not need is still read", `post.order.total == pre.order.total || true`,
			`[{"op":"replace","path":"/order/total","value":` + longer + `}]`, CodeInexactNumber},
		{"an order comparison", `post.order.total <= pre.order.total`,
			`[{"op":"replace","path":"/order/total","value":` + longer + `}]`, CodeInexactNumber},
		{"the same value spelled otherwise", `post.order.total == pre.order.total`,
			`[{"op":"replace","path":"/order/total","value":4.25000e1}]`, CodeOK},
		{"trailing zeros", `post.order.total == pre.order.total`,
			`[{"op":"replace","path":"/order/total","value":42.5000000000000000000000000000000}]`, CodeOK},
		{"a changed total that a double holds", `post.order.total == pre.order.total`,
			`[{"op":"replace","path":"/order/total","value":42.51}]`, CodeInvariantViolated},
		{"an integer beyond 2^53 beside one spelled with a point", `post.order.big == post.order.bigdot`,
			`[]`, CodeInvariantViolated},
		{"an integer beyond 2^53 spelled with a point is that integer", `post.order.bigdot == 9007199254740992 && post.order.bigdot != 9007199254740993`,
			`[]`, CodeOK},
		{"an integer beyond 2^53 spelled with an exponent", `post.order.count == 9007199254740992`,
			`[{"op":"replace","path":"/order/count","value":9.007199254740992e15}]`, CodeOK},
		{"double() of an integer a double cannot hold", `double(post.order.count) == double(pre.order.count)`,
			`[{"op":"replace","path":"/order/count","value":9007199254740993}]`, CodeInexactNumber},
		{"double() of an integer a double holds", `double(post.order.count) == double(pre.order.count)`,
			`[{"op":"replace","path":"/order/count","value":9007199254740992}]`, CodeOK},
		{"double() of a string a double cannot hold", `double(string(post.order.count) + ".000000000000000000001") > 0.0`,
			`[]`, CodeInexactNumber},
		{"the issue's reproduction through double()", `double(post.order.total) <= double(pre.order.total)`,
			`[{"op":"replace","path":"/order/total","value":` + longer + `}]`, CodeInexactNumber},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := exactContract(t, tc.rule)
			// The state as parsed, and as committed by an earlier step
			// (whose values the footprint path reads through overlays).
			first, err := exactContract(t).Verify(context.Background(), mustDoc(t, exactState), []byte(`[{"op":"add","path":"/order/note","value":"n"}]`), VerifyOptions{})
			if err != nil || !first.Committed {
				t.Fatal(err, first.Rejection())
			}
			for i, c := range []*Contract{c, wholeOnly(c), c} {
				start := mustDoc(t, exactState)
				if i == 2 {
					start = first.State
				}
				d, err := c.Verify(context.Background(), start, []byte(tc.patch), VerifyOptions{Gates: DefaultGates})
				if err != nil {
					t.Fatal(err)
				}
				if tc.code == CodeOK {
					if !d.Committed {
						t.Fatalf("%s: rejected %+v", d.path, d.Rejection())
					}
					continue
				}
				r := d.Rejection()
				if r == nil {
					t.Fatalf("%s: committed; want %s", d.path, tc.code)
				}
				if r.Gate != GateInvariants || r.Code != tc.code {
					t.Fatalf("%s: %s/%s (%s); want invariants/%s", d.path, r.Gate, r.Code, r.Message, tc.code)
				}
				if strings.Contains(r.Message, "42.5") || strings.Contains(r.Message, "9007") {
					t.Errorf("%s: the message quotes a number of the state: %q", d.path, r.Message)
				}
			}
		})
	}
}

// randomDecimal returns the text of a JSON number drawn from a mix that
// reaches every case of the exactness rule: the shortest text of a random
// double, the same spelled with trailing zeros or an exponent, long
// decimals no double holds, integers around 2^53, 2^63 and 2^64, and
// numbers beyond a double's range.
func randomDecimal(rng *rand.Rand) string {
	digits := func(n int) string {
		var b strings.Builder
		for range n {
			b.WriteByte(byte('0' + rng.IntN(10)))
		}
		return b.String()
	}
	sign := ""
	if rng.IntN(4) == 0 {
		sign = "-"
	}
	switch rng.IntN(8) {
	case 0, 1:
		f := rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
		return strconv.FormatFloat(f, 'g', -1, 64)
	case 2:
		f := math.Round(rng.NormFloat64()*1e6) / 100 // money
		return strconv.FormatFloat(f, 'f', 2+rng.IntN(3), 64)
	case 3:
		int := strings.TrimLeft(digits(1+rng.IntN(20)), "0")
		if int == "" {
			int = "0"
		}
		return sign + int + "." + digits(1+rng.IntN(40))
	case 4:
		base := []string{"9007199254740992", "9007199254740993", "9223372036854775807", "9223372036854775808",
			"18446744073709551615", "18446744073709551616", "18446744073709552000", "100000000000000000000"}[rng.IntN(8)]
		switch rng.IntN(3) {
		case 1:
			return sign + base + ".0"
		case 2:
			return sign + base[:1] + "." + base[1:] + "e" + strconv.Itoa(len(base)-1)
		}
		return sign + base
	case 5:
		return sign + "1e" + []string{"308", "309", "400", "-307", "-323", "-324", "-400"}[rng.IntN(7)]
	case 6:
		return strconv.Itoa(rng.IntN(2000) - 1000)
	default:
		f := rng.NormFloat64() * 1000
		s := strconv.FormatFloat(f, 'e', -1, 64)
		return strings.Replace(s, "e", "0e", 1) // a trailing zero before the exponent
	}
}

// relatedDecimal returns a number near a: a itself, a respelled, a with
// a digit added far past a double's precision, or another number.
func relatedDecimal(rng *rand.Rand, a string) string {
	switch rng.IntN(4) {
	case 0:
		return a
	case 1:
		if strings.ContainsAny(a, ".eE") {
			return a
		}
		return a + ".000"
	case 2:
		mant, exp := a, ""
		if i := strings.IndexAny(a, "eE"); i >= 0 {
			mant, exp = a[:i], a[i:]
		}
		if !strings.Contains(mant, ".") {
			mant += "."
		}
		return mant + strings.Repeat("0", 20) + "1" + exp
	}
	return randomDecimal(rng)
}

// plainDouble reports whether the text s is a number a double holds in
// the plain sense: its float64 round trip (shortest text) has the same
// value, and it is below 2^53 in magnitude (so no int it meets is rounded
// either). Such numbers must never be refused.
func plainDouble(s string) bool {
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.Abs(f) >= 1<<53 {
		return false
	}
	want, _ := new(big.Rat).SetString(s)
	got, _ := new(big.Rat).SetString(strconv.FormatFloat(f, 'g', -1, 64))
	return want.Cmp(got) == 0
}

// TestInvariantNumbersProperty compares, over random decimal texts
// (seeded), the invariant gate's verdict on comparisons of a number
// before and after a patch with the exact comparison of the two texts'
// values (math/big): the gate never commits what the exact comparison
// refutes, never refutes what it confirms, and refuses with
// inexact_number only a number some double or int cannot hold exactly;
// a plain double (plainDouble) and an int64 are never refused.
func TestInvariantNumbersProperty(t *testing.T) {
	rules := []struct {
		rule string
		want func(cmp int) bool
	}{
		{`post.x == pre.x`, func(c int) bool { return c == 0 }},
		{`post.x != pre.x`, func(c int) bool { return c != 0 }},
		{`post.x < pre.x`, func(c int) bool { return c < 0 }},
		{`post.x <= pre.x`, func(c int) bool { return c <= 0 }},
		{`post.x > pre.x`, func(c int) bool { return c > 0 }},
		{`post == pre`, func(c int) bool { return c == 0 }},
		{`[post.x] == [pre.x]`, func(c int) bool { return c == 0 }},
		{`double(post.x) >= double(pre.x)`, func(c int) bool { return c >= 0 }},
	}
	contracts := make([]*Contract, len(rules))
	for i, r := range rules {
		c, err := Compile(ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{"/x"},
			Invariants: []InvariantSpec{{Name: "r", Rule: r.rule}}})
		if err != nil {
			t.Fatal(err)
		}
		contracts[i] = c
	}
	rng := rand.New(rand.NewPCG(20, 5))
	refused := 0
	for n := range 3000 {
		a := randomDecimal(rng)
		b := relatedDecimal(rng, a)
		ra, _ := new(big.Rat).SetString(a)
		rb, _ := new(big.Rat).SetString(b)
		if ra == nil || rb == nil {
			t.Fatalf("the generator made %q or %q", a, b)
		}
		cmp := rb.Cmp(ra)
		i := n % len(rules)
		c := contracts[i]
		if n%2 == 1 {
			c = wholeOnly(c)
		}
		doc := mustDoc(t, `{"x":`+a+`}`)
		d, err := c.Verify(context.Background(), doc, []byte(`[{"op":"replace","path":"/x","value":`+b+`}]`), VerifyOptions{Gates: GateSet{Invariants: true}})
		if err != nil {
			t.Fatal(err)
		}
		r := d.Rejection()
		code := CodeOK
		if r != nil {
			code = r.Code
		}
		what := fmt.Sprintf("pre %s, post %s, rule %s (%s)", a, b, rules[i].rule, d.path)
		switch code {
		case CodeOK:
			if !rules[i].want(cmp) {
				t.Fatalf("%s: committed, but the exact comparison refutes it", what)
			}
		case CodeInvariantViolated:
			if rules[i].want(cmp) {
				t.Fatalf("%s: violated, but the exact comparison confirms it", what)
			}
		case CodeInexactNumber:
			refused++
			// double() of an int64 beyond 2^53 may round, so there only
			// smaller ints must pass.
			held := func(s string) bool {
				return plainDouble(s) || isInt64(s) && (!strings.HasPrefix(rules[i].rule, "double") || plainDouble(s))
			}
			if held(a) && held(b) {
				t.Fatalf("%s: refused as inexact, but a double or an int holds both exactly", what)
			}
		default:
			if !(strings.HasPrefix(rules[i].rule, "double") && code == CodeInvariantError) {
				t.Fatalf("%s: %s (%s)", what, code, r.Message)
			}
		}
	}
	if refused == 0 || refused == 3000 {
		t.Fatalf("%d of 3000 refused: the generator does not reach both kinds of number", refused)
	}
}

func isInt64(s string) bool {
	_, err := strconv.ParseInt(s, 10, 64)
	return err == nil
}

// TestSchemaNumbersProperty checks the schema gate the same way: the
// keywords that read a number (minimum, maximum, exclusive bounds, const,
// enum, multipleOf) judge it by its exact value, on the footprint path
// (incremental validation) and the whole-document path alike.
func TestSchemaNumbersProperty(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 6))
	for n := range 1500 {
		bound := randomDecimal(rng)
		v := relatedDecimal(rng, bound)
		rb, _ := new(big.Rat).SetString(bound)
		rv, _ := new(big.Rat).SetString(v)
		cmp := rv.Cmp(rb)
		kw := []string{"minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "const", "enum", "multipleOf"}[n%7]
		var want bool
		schema := fmt.Sprintf(`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"%s":%s}}}}}`, kw, bound)
		switch kw {
		case "minimum":
			want = cmp >= 0
		case "maximum":
			want = cmp <= 0
		case "exclusiveMinimum":
			want = cmp > 0
		case "exclusiveMaximum":
			want = cmp < 0
		case "const":
			want = cmp == 0
		case "enum":
			want = cmp == 0
			schema = fmt.Sprintf(`{"type":"object","properties":{"o":{"type":"object","properties":{"x":{"enum":[%s]}}}}}`, bound)
		case "multipleOf":
			if rb.Sign() <= 0 {
				continue
			}
			want = new(big.Rat).Quo(rv, rb).IsInt()
		}
		c, err := Compile(ContractSpec{View: ViewSpec{Include: []string{""}}, Write: []string{"/o/x"}, Schema: mustJSON(t, schema)})
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		doc := mustDoc(t, `{"o":{"x":0,"y":[1,2]}}`)
		for _, c := range []*Contract{c, wholeOnly(c)} {
			d, err := c.Verify(context.Background(), doc, []byte(`[{"op":"replace","path":"/o/x","value":`+v+`}]`), VerifyOptions{Gates: GateSet{Schema: true}})
			if err != nil {
				t.Fatal(err)
			}
			if d.Committed != want {
				t.Fatalf("%s, value %s (%s): committed %v, want %v (%+v)", schema, v, d.path, d.Committed, want, d.Rejection())
			}
			if r := d.Rejection(); r != nil && kw != "const" && kw != "enum" && kw != "multipleOf" {
				if exact := ratText(rb); !strings.Contains(r.Message, exact) {
					t.Fatalf("%s, value %s: message %q does not give the bound %s exactly", schema, v, r.Message, exact)
				}
			}
		}
	}
}

// ratText is the shortest plain decimal text of a rational with a finite
// decimal expansion, computed independently of the runtime's.
func ratText(r *big.Rat) string {
	for prec := 0; prec < 2100; prec++ {
		s := r.FloatString(prec)
		back, _ := new(big.Rat).SetString(s)
		if back.Cmp(r) == 0 {
			return s
		}
	}
	return r.String()
}

// FailingInvariants names every rule that fails, not only the first, so a
// caller can tell a rule broken before a step from one the step broke.
func TestFailingInvariants(t *testing.T) {
	c := exactContract(t, `post.order.total > 100.0`, `post.order.total == pre.order.total`, `size(post.order.lines) == 2`, `post.order.count > 0`)
	pre := mustDoc(t, exactState)
	post := mustDoc(t, strings.Replace(exactState, "42.50", "42.51", 1))
	got, err := c.FailingInvariants(context.Background(), pre, post, "")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Name != "rule 0" || got[1].Name != "rule 1" || got[1].Result.Code != CodeInvariantViolated || got[1].Result.Gate != GateInvariants {
		t.Fatalf("after the change: %+v; want rules 0 and 1 violated", got)
	}
	got, err = c.FailingInvariants(context.Background(), pre, pre, "")
	if err != nil || len(got) != 1 || got[0].Name != "rule 0" {
		t.Fatalf("on the unchanged state: %+v %v; want rule 0 only", got, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.FailingInvariants(ctx, pre, pre, ""); err == nil {
		t.Fatal("a cancelled context gave no error")
	}
}

// A rule's own number literals are judged as the state's numbers are: a
// double literal no double holds exactly is a contract error naming it
// (the parser would round it), while every literal a double holds, in
// any spelling CEL allows, compiles.
func TestInvariantLiteralsAreExact(t *testing.T) {
	for _, rule := range []string{
		`post.order.total == 42.500000000000000000000000000001`,
		`post.order.total <= 0.1000000000000000000001 && true`,
		`[1.0, 2.00000000000000000001].exists(x, x == post.order.total)`,
		`post.order.total > -1.00000000000000000001e5`,
	} {
		_, err := Compile(ContractSpec{View: ViewSpec{Include: []string{""}}, Invariants: []InvariantSpec{{Name: "r", Rule: rule}}})
		var ce *ContractError
		if !errors.As(err, &ce) || ce.Field != "invariants[0].rule" || !strings.Contains(err.Error(), "no exact double") {
			t.Errorf("%s: %v; want a contract error at invariants[0].rule", rule, err)
		}
	}
	for _, rule := range []string{
		`post.order.total == 42.50 && post.order.total != 0.1 && post.order.total > -5e-3 && post.order.total < 1e300`,
		`post.order.total >= .5 && post.order.total > -1.5e1 && post.order.total < 1E3`,
		`post.order.count > 9007199254740993 && "1.00000000000000000001" != ""`,
	} {
		if _, err := Compile(ContractSpec{View: ViewSpec{Include: []string{""}}, Invariants: []InvariantSpec{{Name: "r", Rule: rule}}}); err != nil {
			t.Errorf("%s: %v", rule, err)
		}
	}
}
