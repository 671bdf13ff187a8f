package runtime

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/patchbench/patchbench/internal/jsonskip"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
)

// sameDecode reports how the one-pass parser and the reference decoder
// (jsonref_test.go) differ on b at maxDepth: value, depth of the deepest
// value, and error (type, offset, line, column and message); "" when they
// agree.
func sameDecode(b []byte, maxDepth int) string {
	want, wantDepth, wantErr := decodeStrictDepthRef(b, maxDepth)
	got, gotDepth, _, gotErr := parseJSON(b, maxDepth, false)
	if (wantErr == nil) != (gotErr == nil) {
		return fmt.Sprintf("error: reference %v, parser %v", wantErr, gotErr)
	}
	if wantErr != nil {
		if !reflect.DeepEqual(wantErr, gotErr) {
			return fmt.Sprintf("error: reference %#v, parser %#v", wantErr, gotErr)
		}
		return sameScan(b, maxDepth, nil, 0, wantErr)
	}
	if !reflect.DeepEqual(want, got) {
		return fmt.Sprintf("value: reference %#v, parser %#v", want, got)
	}
	if wantDepth != gotDepth {
		return fmt.Sprintf("depth: reference %d, parser %d", wantDepth, gotDepth)
	}
	return sameScan(b, maxDepth, want, wantDepth, wantErr)
}

// sameScan reports how ParseDocument's path (scanJSON, then buildJSON on
// first use) differs from the reference's value, depth and error on b:
// with the default parts and with arrays of two elements and more built
// in parts of one, two and three, so that random documents take the
// parallel build too; "" when they agree.
func sameScan(b []byte, maxDepth int, want any, wantDepth int, wantErr error) string {
	for _, parts := range [][2]int{{parallelMinItems, partItems}, {2, 1}, {2, 2}, {3, 3}} {
		gotDepth, _, bigs, gotErr := scanJSONParts(b, maxDepth, parts[0], parts[1])
		if (wantErr == nil) != (gotErr == nil) {
			return fmt.Sprintf("scan %v: error: reference %v, scan %v", parts, wantErr, gotErr)
		}
		if wantErr != nil {
			if !reflect.DeepEqual(wantErr, gotErr) {
				return fmt.Sprintf("scan %v: error: reference %#v, scan %#v", parts, wantErr, gotErr)
			}
			continue
		}
		if wantDepth != gotDepth {
			return fmt.Sprintf("scan %v: depth: reference %d, scan %d", parts, wantDepth, gotDepth)
		}
		if got := buildJSON(b, bigs); !reflect.DeepEqual(want, got) {
			return fmt.Sprintf("scan %v: value: reference %#v, build %#v", parts, want, got)
		}
	}
	doc, err := parseDocument(b, maxDepth)
	if (wantErr == nil) != (err == nil) || wantErr != nil && !reflect.DeepEqual(wantErr, err) {
		return fmt.Sprintf("ParseDocument: error: reference %#v, ParseDocument %#v", wantErr, err)
	}
	if err == nil && (!reflect.DeepEqual(want, doc.Value()) || doc.maxDepth() != wantDepth) {
		return fmt.Sprintf("ParseDocument: value %#v depth %d, reference %#v depth %d", doc.Value(), doc.maxDepth(), want, wantDepth)
	}
	return ""
}

// TestParseJSONCases: chosen texts of every kind of error and of the
// spellings that decode alike, each decoded as the reference decodes it.
func TestParseJSONCases(t *testing.T) {
	cases := []string{
		``, ` `, `{}`, `[]`, `""`, `0`, `-0`, `1.5e+3`, `-1E-2`, `true`, `false`, `null`,
		` {"a" : [1 , 2 ] , "b":{}} `, "\t\r\n[\n1\n]\n",
		// numbers
		`01`, `-`, `-x`, `1.`, `1.x`, `1e`, `1e+`, `1ex`, `.5`, `+1`, `1e1000`, `1e1001`, `-1E-1001`, `1e0001000`,
		`[1e99999x]`, `[1e99999`, `{"a":1e5000}`, `[` + strings.Repeat("9", 1001) + `]`, strings.Repeat("1", 1000),
		`[0x1]`, `[00]`, `[1.0e]`, `NaN`, `Infinity`, `-Infinity`, `[1 2]`, `[1,]`, `[,1]`,
		// strings and escapes
		`"\u00e9\n\t\"\\\/\b\f\r"`, `"\ud83d\ude00"`, `"\ud83d"`, `"\ude00"`, `"\ud83d\u0041"`, `"\ud83dx"`,
		`"\ud83d\ud83d\ude00"`, `"\x"`, `"\u12"`, `"\u12g4"`, `"abc`, `"a\`, `"\u`, "\"a\x01b\"", "\"\u2028\"",
		`"\'"`, `{"\u0061":1,"a":2}`, `{"\ud800":1,"\udbff":2}`, `{"a\u0000":1,"a":2}`,
		// objects and duplicates
		`{"a":1,"a":2}`, `{"a":1,"b":{"c":1,"c":2}}`, `{"a":1 "b":2}`, `{"a" 1}`, `{"a":}`, `{"a"`, `{"a":1`,
		`{"a":1,}`, `{1:2}`, `{"a":1]`, `[1}`, `{]`, `[}`, `{"a":1,"a"x`, `{"a":1,"a"`, `{"a"::1}`, `{"a":1:2}`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9,"k10":10,"k11":11,"k12":12,"k13":13,"k14":14,"k15":15,"k16":16,"k3":3}`,
		// literals
		`tru`, `trux`, `nul`, `nulL`, `fals`, `[true false]`, `truex`, `[nullx]`,
		// data after the value
		`1 2`, `1 x`, `1 {`, `1 }`, `1 "abc`, `1 "abc"`, `1 [1,2]`, `{} []`, `[] ,`, `"a" :`, `1 -`, `1 23abc`,
		`1 tru`, `1 true`, `1 truex`, `1 "\x"`, `0 0`, `{}x`, `[]]`, "1 \xc3\xa9",
		// UTF-8
		"\"\xff\"", "[\"a\",\xff]", "{\"a\":1,\"a\":\"\xfe\"}", "\xef\xbb\xbf{}", "\"\xef\xbf\xbd\"", "[1,] \xc3",
		// depth
		strings.Repeat("[", 512) + strings.Repeat("]", 512), strings.Repeat("[", 513) + strings.Repeat("]", 513),
		strings.Repeat(`{"a":`, 513) + "1" + strings.Repeat("}", 513), strings.Repeat("[", 600), strings.Repeat("[", 513) + "x",
	}
	for _, c := range cases {
		for _, depth := range []int{DefaultMaxDepth, 2} {
			if diff := sameDecode([]byte(c), depth); diff != "" {
				t.Errorf("%.80q at depth %d: %s", c, depth, diff)
			}
		}
	}
}

// TestParseJSONDifferential: the parser against the reference on random
// documents, valid ones and the same with a byte changed, inserted or
// cut: numbers of every spelling, escapes (surrogates paired or not),
// names that repeat once unescaped, deep nesting, white space, and bytes
// that are not UTF-8.
func TestParseJSONDifferential(t *testing.T) {
	rng := rand.New(rand.NewPCG(25, 1))
	n := 4000
	if testing.Short() {
		n = 500
	}
	for i := range n {
		doc := randomJSON(rng)
		texts := [][]byte{doc, mutateJSON(rng, doc), mutateJSON(rng, doc), doc[:rng.IntN(len(doc)+1)]}
		for _, b := range texts {
			for _, depth := range []int{DefaultMaxDepth, 1 + rng.IntN(6)} {
				if diff := sameDecode(b, depth); diff != "" {
					t.Fatalf("document %d, %q at depth %d: %s", i, b, depth, diff)
				}
			}
		}
	}
}

// TestParseJSONLarge: the benchmark states and an indented copy of one
// decode as the reference decodes them.
func TestParseJSONLarge(t *testing.T) {
	t.Parallel()
	for _, size := range []int{10 << 10, 1 << 20} {
		b := benchState(size)
		var ind bytes.Buffer
		if err := json.Indent(&ind, b, " ", "\t"); err != nil {
			t.Fatal(err)
		}
		for _, text := range [][]byte{b, ind.Bytes()} {
			if diff := sameDecode(text, DefaultMaxDepth); diff != "" {
				t.Fatalf("state of %d bytes: %.300s", len(text), diff)
			}
		}
	}
}

// FuzzParseJSON: on any text and depth limit, the parser decodes as the
// reference decoder does (value, depth, error).
func FuzzParseJSON(f *testing.F) {
	rng := rand.New(rand.NewPCG(25, 2))
	for range 20 {
		f.Add(randomJSON(rng), uint8(8))
	}
	for _, s := range []string{`{"a":1,"a":2}`, `[1e99999x]`, `"\ud83d\ude00"`, `1 2`, "\"\xff\"", `{"a":[1,{"b":null}]}`} {
		f.Add([]byte(s), uint8(3))
	}
	f.Fuzz(func(t *testing.T, b []byte, depth uint8) {
		if diff := sameDecode(b, int(depth)); diff != "" {
			t.Fatalf("%q at depth %d: %s", b, depth, diff)
		}
	})
}

// randomJSON writes a random JSON text.
func randomJSON(rng *rand.Rand) []byte {
	var b []byte
	var value func(depth int)
	space := func() {
		if rng.IntN(6) == 0 {
			b = append(b, " \t\n\r"[rng.IntN(4)])
		}
	}
	value = func(depth int) {
		space()
		k := rng.IntN(10)
		if depth > 7 && k < 4 {
			k += 4
		}
		switch k {
		case 0, 1:
			b = append(b, '{')
			n := rng.IntN(5)
			if rng.IntN(8) == 0 {
				n = 15 + rng.IntN(6) // past objectScanMax
			}
			names := []string{}
			for i := range n {
				if i > 0 {
					b = append(b, ',')
				}
				space()
				name := randomName(rng)
				if len(names) > 0 && rng.IntN(12) == 0 {
					name = names[rng.IntN(len(names))] // a duplicate, maybe spelled otherwise
					if rng.IntN(2) == 0 && name != "" {
						name = fmt.Sprintf(`\u%04x`, name[0]) + name[1:]
					}
				}
				names = append(names, name)
				b = append(b, '"')
				b = append(b, name...)
				b = append(b, '"')
				space()
				b = append(b, ':')
				value(depth + 1)
			}
			space()
			b = append(b, '}')
		case 2, 3:
			b = append(b, '[')
			if rng.IntN(20) == 0 { // a deep chain
				d := 2 + rng.IntN(12)
				b = append(b, strings.Repeat("[", d)...)
				value(depth + d + 1)
				b = append(b, strings.Repeat("]", d+1)...)
				break
			}
			for i := range rng.IntN(5) {
				if i > 0 {
					b = append(b, ',')
				}
				value(depth + 1)
			}
			space()
			b = append(b, ']')
		case 4, 5:
			b = append(b, randomNumber(rng)...)
		case 6, 7:
			b = append(b, '"')
			b = append(b, randomStringText(rng)...)
			b = append(b, '"')
		default:
			b = append(b, []string{"true", "false", "null"}[rng.IntN(3)]...)
		}
		space()
	}
	value(0)
	return b
}

func randomName(rng *rand.Rand) string {
	switch rng.IntN(6) {
	case 0:
		return ""
	case 1:
		return randomStringText(rng)
	}
	return string(rune('a' + rng.IntN(5)))
}

func randomNumber(rng *rand.Rand) string {
	var s strings.Builder
	if rng.IntN(3) == 0 {
		s.WriteByte('-')
	}
	if rng.IntN(4) == 0 {
		s.WriteByte('0')
	} else {
		s.WriteByte(byte('1' + rng.IntN(9)))
		for range rng.IntN(4) {
			s.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	if rng.IntN(3) == 0 {
		s.WriteByte('.')
		for range 1 + rng.IntN(3) {
			s.WriteByte(byte('0' + rng.IntN(10)))
		}
	}
	if rng.IntN(3) == 0 {
		s.WriteByte("eE"[rng.IntN(2)])
		if rng.IntN(2) == 0 {
			s.WriteByte("+-"[rng.IntN(2)])
		}
		exp := []string{"0", "7", "999", "1000", "1001", "00001001", "12345"}[rng.IntN(7)]
		s.WriteString(exp)
	}
	if rng.IntN(40) == 0 {
		s.WriteString(strings.Repeat("7", 1000))
	}
	return s.String()
}

func randomStringText(rng *rand.Rand) string {
	var s strings.Builder
	for range rng.IntN(8) {
		switch rng.IntN(14) {
		case 0:
			s.WriteString([]string{`\"`, `\\`, `\/`, `\b`, `\f`, `\n`, `\r`, `\t`}[rng.IntN(8)])
		case 1:
			fmt.Fprintf(&s, `\u%04x`, rng.IntN(0x10000))
		case 2:
			fmt.Fprintf(&s, `\u%04X\u%04x`, 0xd800+rng.IntN(0x400), 0xdc00+rng.IntN(0x400))
		case 3:
			fmt.Fprintf(&s, `\u%04x`, 0xd800+rng.IntN(0x800)) // unpaired
		case 4:
			s.WriteString([]string{"é", "€", "😀", "\u2028", "\u2029", "\ufffd"}[rng.IntN(6)])
		case 5:
			s.WriteString("Customer account number ")
		default:
			s.WriteByte(byte('a' + rng.IntN(26)))
		}
	}
	return s.String()
}

// mutateJSON changes one place of b: a byte replaced, inserted or
// removed, with bytes JSON gives meaning to, or bytes that are not UTF-8.
func mutateJSON(rng *rand.Rand, b []byte) []byte {
	out := bytes.Clone(b)
	if len(out) == 0 {
		const starts = "[{\"x1 \xff"
		return []byte{starts[rng.IntN(len(starts))]}
	}
	i := rng.IntN(len(out))
	const meaningful = "{}[]\",:\\ x0-.eE+u\x00\x1f\xff\xc3\xe2tfn"
	c := meaningful[rng.IntN(len(meaningful))]
	switch rng.IntN(3) {
	case 0:
		out[i] = c
	case 1:
		out = append(out[:i], append([]byte{c}, out[i:]...)...)
	default:
		out = append(out[:i], out[i+1:]...)
	}
	return out
}

// TestParseSeed: what ParseDocument learns for the footprint path is what
// the footprint path would read from the text itself: the canonical text
// (compact or not), and each kept member table as buildTable reads it,
// names that the apply library spells otherwise included.
func TestParseSeed(t *testing.T) {
	state := benchState(200 << 10)
	var ind bytes.Buffer
	if err := json.Indent(&ind, state, "  ", "  "); err != nil {
		t.Fatal(err)
	}
	escaped := bytes.Replace(state, []byte(`"phase":`), []byte(`"ph\u0061se":`), 1)
	escaped = bytes.Replace(escaped, []byte(`"records":[`), []byte(`"records":[{"\u2028x":1,"a\/b":[]},`), 1)
	for name, text := range map[string][]byte{"compact": state, "indented": append([]byte("\n "), ind.Bytes()...), "escaped names": escaped} {
		t.Run(name, func(t *testing.T) {
			d, err := ParseDocument(text)
			if err != nil {
				t.Fatal(err)
			}
			seed := d.seed
			if seed == nil || len(seed.tables) == 0 {
				t.Fatal("no tables kept")
			}
			if want := name != "indented"; seed.compact != want {
				t.Errorf("compact = %v, want %v", seed.compact, want)
			}
			m := d.text()
			if want := canonicalText(bytes.TrimLeft(text, " \t\r\n")); !bytes.Equal(m.base.buf, want) {
				t.Fatalf("canonical text differs from canonicalText's")
			}
			for lo, got := range seed.tables {
				hi := jsonskip.Value(m.base.buf, lo)
				want, ok := buildTable(m.base.buf, lo, hi)
				if !ok {
					t.Fatalf("no table at %d", lo)
				}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("table at %d: kept %+v, read %+v", lo, summary(got), summary(want))
				}
				if lo == 0 && got.canon == (name == "escaped names") {
					t.Errorf("root table: canon = %v", got.canon)
				}
			}
		})
	}
}

func summary(t *ctable) string {
	return fmt.Sprintf("object %v canon %v %d keys %d vals %d indexed", t.object, t.canon, len(t.keys), len(t.vals), len(t.index))
}
