// Package benchload holds the inputs of the runtime's load benchmarks
// (docs/development.md): the deterministic states of benchState, the contract's
// schema and invariants as text, and the patches, so that
// scripts/bench-peers.sh can give the very same inputs to the runtime
// (runtime's benchmarks and scripts/loadbench) and to the stacks a user
// would otherwise assemble (scripts/peers). The runtime's tests check
// that these are the inputs its own benchmarks use.
package benchload

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
)

// State builds a deterministic state of about size bytes of generator
// budget (the text is about 0.6 × size): a ledger of records that mix
// what a step reads with an account number it must not. Members are
// sorted by name, without white space or HTML escaping.
func State(size int) []byte {
	rng := rand.New(rand.NewPCG(uint64(size), 42))
	records := []any{}
	state := map[string]any{
		"phase":   "review",
		"meta":    map[string]any{"org": "Example Ltd", "version": json.Number("3"), "owner": "ops"},
		"summary": map[string]any{"total": json.Number("0"), "note": ""},
		"log":     []any{"opened"},
	}
	for n := 300; ; {
		i := len(records)
		records = append(records, map[string]any{
			"id":      fmt.Sprintf("r-%06d", i),
			"name":    fmt.Sprintf("Customer %d", rng.IntN(100000)),
			"balance": json.Number(strconv.FormatFloat(float64(rng.IntN(1000000))/100, 'f', 2, 64)),
			"account": fmt.Sprintf("GB%02dBANK%014d", rng.IntN(100), rng.Int64N(1e14)),
			"tags":    []any{"active"},
			"history": []any{json.Number(strconv.Itoa(rng.IntN(1000))), json.Number(strconv.Itoa(rng.IntN(1000)))},
		})
		n += 230
		if n >= size {
			break
		}
	}
	state["records"] = records
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(state); err != nil {
		panic(err) // not reached: the state is made of encodable values
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})
}

// Sizes are the states of the load benchmarks: names and generator
// budgets (texts of 0.6, 6 and 60 MB).
var Sizes = []struct {
	Name string
	Size int
}{{"0.6MB", 1 << 20}, {"6MB", 10 << 20}, {"60MB", 100 << 20}}

// Schema is the schema of the benchmark contract (runtime's benchSpec),
// JSON Schema 2020-12.
const Schema = `{"type":"object","required":["meta","records","summary"],"properties":{` +
	`"summary":{"type":"object","required":["total"],"properties":{"total":{"type":"number","minimum":0}}},` +
	`"records":{"type":"array","items":{"type":"object","required":["id","balance"],` +
	`"properties":{"id":{"type":"string"},"balance":{"type":"number"}}}}}}`

// OutputPath and OutputSchema are the contract's output schema: the
// value written at OutputPath must satisfy OutputSchema.
const (
	OutputPath   = "/summary/note"
	OutputSchema = `{"type":"string","maxLength":500}`
)

// Invariants are the contract's CEL rules over pre and post, by name.
var Invariants = [][2]string{
	{"records kept", "size(post.records) == size(pre.records)"},
	{"total not negative", "post.summary.total >= 0"},
}

// Phase is the phase the steps run in.
const Phase = "review"

// ChainPatch is the step of a chain: each step applies it to the state
// the previous one committed; its appends are replacements, so the state
// keeps its size.
const ChainPatch = `[
 {"op":"replace","path":"/summary/total","value":1234.5},
 {"op":"replace","path":"/summary/note","value":"Reviewed the five largest balances."},
 {"op":"replace","path":"/records/7/tags","value":["active","reviewed"]},
 {"op":"replace","path":"/records/5/tags","value":["active","flagged"]},
 {"op":"copy","from":"/records/3/balance","path":"/summary/last"}
]`

// The contract's regions (the runtime alone checks them: the other
// stacks have no scope gate).
var (
	ViewInclude = []string{"/records", "/summary", "/phase"}
	ViewExclude = []string{"/records/*/account"}
	Write       = []string{"/summary", "/log/-", "/records/*/tags"}
	Source      = []string{"/records/*/balance", "/summary"}
)
