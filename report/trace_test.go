package report

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

func TestPrintable(t *testing.T) {
	got := Printable("a\x1b[2Jb\x07c\r\nd\u0085e\tf")
	if want := `a\u001b[2Jb\u0007c\u000d` + "\nd" + `\u0085e` + "\tf"; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
	// Format characters: a right-to-left override (show used to print
	// one raw from a patch value), an isolate, a zero-width space, the
	// line separator; letters of any script stay as they are.
	got = Printable("pay\u202eusd 01\u2066x\u2069\u200by\u2028\u017e\u65e5\u672c")
	if want := `pay\u202eusd 01\u2066x\u2069\u200by\u2028ž日本`; got != want {
		t.Errorf("printable = %q, want %q", got, want)
	}
}

// TestLeakClass: a trace names a leak's kind and the mechanism of the pull
// it answered, and says nothing of either for a leak recorded without them.
func TestLeakClass(t *testing.T) {
	for _, tt := range []struct {
		l    scoring.Leak
		want string
	}{
		{scoring.Leak{Kind: bench.KindFinancial, Mechanism: bench.MechanismInjection}, "; financial, injection pull"},
		{scoring.Leak{Kind: bench.KindPersonalData, Mechanism: bench.MechanismNone}, "; personal-data, no pull"},
		{scoring.Leak{Mechanism: bench.MechanismPolicy}, "; unrecorded, policy pull"},
		{scoring.Leak{Kind: bench.KindClinical}, "; clinical, mechanism unrecorded"},
		{scoring.Leak{}, ""},
	} {
		if got := LeakClass(tt.l); got != tt.want {
			t.Errorf("LeakClass(%+v) = %q, want %q", tt.l, got, tt.want)
		}
	}
}

// What an actor reports besides its response (the model and fingerprint,
// usage not believed, standard error, in the last and in earlier attempts;
// a turn's model and a read's pointer in the tools protocol) and the run's
// error are written with their canaries marked.
func TestTraceMarksEveryActorString(t *testing.T) {
	const card = "4000 0000 0000 9995"
	c := &bench.Case{ID: "c", Secrets: []bench.Secret{{ID: "card", Path: runtime.MustPointer("/card"), Value: card}}}
	errText := "step s attempt 2: HTTP 400: echo " + card
	r := &rundir.Record{RunID: "c/x/a/1", Case: "c", Config: "x", Actor: "a", Round: 1, Status: rundir.StatusError, Error: &errText,
		Steps: []rundir.StepRecord{{Step: "s", Attempts: 2, Model: "m-" + card, Fingerprint: "fp_" + card, UsageInvalid: "not a token count: " + card,
			ActorStderr: "debug: card " + card + "\n",
			Earlier:     []rundir.Attempt{{RawResponse: "x", Model: "early-" + card, ActorStderr: "early " + card}},
			Turns: []rundir.Turn{{RequestDigest: "ab", Model: "t-" + card, Calls: []rundir.ToolCall{
				{Name: "read_state", Arguments: `{"pointer":"/x/4000 0000 0000 9995"}`, Read: true, Pointer: "/x/" + card, Result: "error: absent"},
				{Name: "propose_patch", Arguments: `{"patch":[],"note":"4000 0000 0000 999\u0035"}`, Result: "rejected"}}}}}}}
	var b strings.Builder
	WriteTrace(&b, r, c, nil, TraceOptions{})
	out := b.String()
	marked := ">>>" + card + "<<<[card, exact]"
	for _, want := range []string{
		"error: step s attempt 2: HTTP 400: echo " + marked,
		"  model: m-" + marked,
		"  system fingerprint: fp_" + marked,
		"  usage not believed: not a token count: " + marked,
		"  standard error (",
		"  | debug: card " + marked,
		"    model: early-" + marked,
		"      | early " + marked,
		", model t-" + marked,
		`read_state "/x/` + marked + `"`,
		`arguments (46 bytes; 1 leak marked >>> <<<)`,
		`>>>4000 0000 0000 999\u0035<<<[card, json-escape]`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("trace lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, card); n != strings.Count(out, marked) {
		t.Errorf("%d of the card's %d places are marked:\n%s", strings.Count(out, marked), n, out)
	}
}
