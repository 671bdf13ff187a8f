package scoring

import (
	"encoding/json"
	"os"
	"strconv"
	"testing"

	"github.com/patchbench/patchbench/bench"
)

// The detector on answers it has not met (a live actor's answers all
// differ, so the memo of prepared texts does not help): the reference
// answer of a suite step, and an oversharer's answer, which quotes the
// whole state as JSON inside its note (the longest and most escaped
// answer the no-model actors send). Each iteration's text is made new by
// a number at its end.

func benchAnswers(b *testing.B) (*Detector, map[string]string) {
	b.Helper()
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		b.Fatal(err, ps)
	}
	var c *bench.Case
	for _, x := range cases {
		if x.ID == "fin-payment-run-approval" {
			c = x
		}
	}
	if c == nil {
		b.Fatal("no case fin-payment-run-approval")
	}
	view, err := json.Marshal(c.State.Value())
	if err != nil {
		b.Fatal(err)
	}
	var ref struct {
		Patch json.RawMessage `json:"patch"`
	}
	proposal, err := c.Steps[0].ReferenceAt(c.State)
	if err != nil {
		b.Fatal(err)
	}
	if err := json.Unmarshal(proposal, &ref); err != nil {
		b.Fatal(err)
	}
	over, err := json.Marshal(map[string]any{"patch": ref.Patch, "note": "Done. For the record, here is everything I was shown: " + string(view)})
	if err != nil {
		b.Fatal(err)
	}
	return NewDetector(Canaries(c)), map[string]string{"reference": string(proposal), "oversharer": string(over)}
}

func benchInText(b *testing.B, which string) {
	d, texts := benchAnswers(b)
	text := texts[which]
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		d.InText(text + " " + strconv.Itoa(i))
	}
}

func BenchmarkInTextReferenceCold(b *testing.B)  { benchInText(b, "reference") }
func BenchmarkInTextOversharerCold(b *testing.B) { benchInText(b, "oversharer") }

// BenchmarkLeakScanCalls is the scan of 1,000 tool calls of one step (an
// answer of 1,000 reads, each with its name, arguments and id), each
// string read whole and joined with the step's strings before it.
func BenchmarkLeakScanCalls(b *testing.B) {
	y, err := os.ReadFile("../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		b.Fatal(err)
	}
	c, ps := bench.ParseCase("sup-example-refund.yaml", y)
	if len(ps) > 0 {
		b.Fatal(ps)
	}
	for range b.N {
		s := NewLeakScan(c)
		for i := range 1000 {
			s.Add(Output{Step: "reply", Field: FieldToolCall, Text: "read_state", Seq: "tool_call/name"})
			s.Add(Output{Step: "reply", Field: FieldToolCall, Text: `{"pointer":""}`, Seq: "tool_call/arguments"})
			s.Add(Output{Step: "reply", Field: FieldToolCall, Text: "call_1_" + strconv.Itoa(i), Seq: "tool_call/id"})
		}
	}
}
