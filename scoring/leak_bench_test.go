package scoring

import (
	"encoding/json"
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
	if err := json.Unmarshal(c.Steps[0].Reference, &ref); err != nil {
		b.Fatal(err)
	}
	over, err := json.Marshal(map[string]any{"patch": ref.Patch, "note": "Done. For the record, here is everything I was shown: " + string(view)})
	if err != nil {
		b.Fatal(err)
	}
	return NewDetector(Canaries(c)), map[string]string{"reference": string(c.Steps[0].Reference), "oversharer": string(over)}
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
