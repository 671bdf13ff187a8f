package runner

import (
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/bench"
)

// extractQuadratic is ExtractProposal as it was before it was made
// linear: a decode from every '{' in turn. It is the reference the linear
// search must agree with.
func extractQuadratic(raw string) []byte {
	trimmed := strings.TrimSpace(raw)
	if json.Valid([]byte(trimmed)) {
		return []byte(trimmed)
	}
	if i := strings.Index(trimmed, "```"); i >= 0 {
		rest := trimmed[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			block := strings.TrimSpace(rest[:j])
			if json.Valid([]byte(block)) {
				return []byte(block)
			}
		}
	}
	for i := 0; i < len(trimmed); i++ {
		if trimmed[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(trimmed[i:]))
		var m json.RawMessage
		if dec.Decode(&m) == nil && len(m) > 0 && m[0] == '{' {
			return m
		}
	}
	return []byte(raw)
}

func extract(t testing.TB, raw string) []byte {
	t.Helper()
	got, err := ExtractProposal(context.Background(), raw)
	if err != nil {
		t.Fatalf("%.60q: %v", raw, err)
	}
	return got
}

func TestExtractProposal(t *testing.T) {
	p := `{"patch":[{"op":"remove","path":"/a"}],"note":"x"}`
	for _, raw := range []string{
		p,
		"  " + p + "\n",
		"Here you go:\n```json\n" + p + "\n```",
		"Here you go:\n```\n" + p + "\n```\nbye",
		"The answer is " + p + " as asked.",
		`He said "{oops" and then ` + p,
		`{"draft": {"patch": [}, retry: ` + p,
		"{not json} {\"a\": [1, {\"b\": 2}] " + p,
	} {
		got := extract(t, raw)
		if string(got) != p && !strings.Contains(raw, "{not json}") && !strings.Contains(raw, `"draft"`) {
			t.Errorf("%q: extracted %q", raw, got)
		}
		if want := extractQuadratic(raw); string(got) != string(want) {
			t.Errorf("%q: extracted %q, the decode from every brace %q", raw, got, want)
		}
	}
	if got := string(extract(t, "no json here")); got != "no json here" {
		t.Errorf("prose: %q", got)
	}
}

// The linear search finds what a decode from every brace finds, on the
// suite's reference proposals wrapped as a model wraps them, on answers
// that break off, and on random text made of JSON's punctuation.
func TestExtractProposalAgreesWithDecodingFromEveryBrace(t *testing.T) {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	if raceDetector {
		cases = sample(cases, 4)
	}
	var answers []string
	for _, c := range cases {
		for _, s := range c.Steps {
			ref := string(referenceOf(t, c, s))
			answers = append(answers, ref,
				"Sure. Here is the patch:\n\n```json\n"+ref+"\n```\n\nLet me know.",
				"I reviewed the {ticket} first. "+ref+" That covers it.",
				"Draft: "+ref[:len(ref)/2]+"\nFinal: "+ref,
				`Note the "quote {`+ref+"} and more {",
				ref[:len(ref)/3],
			)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	const alphabet = `{}[]":,\ a1`
	n := 5000
	if raceDetector {
		n = 500
	}
	for range n {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		answers = append(answers, string(b))
	}
	for _, raw := range answers {
		if got, want := extract(t, raw), extractQuadratic(raw); string(got) != string(want) {
			t.Fatalf("%q: extracted %q, the decode from every brace %q", raw, got, want)
		}
	}
}

// hostile answers that made the decode from every brace quadratic: each
// brace starts a decode that runs to the end.
func hostile(n int) string {
	return strings.Repeat(`{"a":[`, n/6)
}

func TestExtractProposalHostile(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes answers of up to 256 KiB")
	}
	t.Parallel() // pure: decodes its own strings
	p := `{"patch":[],"note":"ok"}`
	big := 256 << 10 // the longest
	if raceDetector {
		big = 64 << 10
	}
	for _, tt := range []struct {
		raw  string
		want string // "" for the answer as it is
	}{
		{raw: hostile(32 << 10)},
		{raw: hostile(big)},
		{raw: strings.Repeat("{", big)},
		{raw: strings.Repeat(`{"a":"{`, big/6)},
		{raw: strings.Repeat(`[{"a":`, big/6) + p, want: p},
		{raw: hostile(12<<10) + "\n" + p, want: p},
		// Deeper than encoding/json's limit of 10000 levels: the first
		// brace a decode can take whole is the one 10000 levels deep.
		{raw: hostile(64<<10) + "\n" + p, want: p},
		{raw: strings.Repeat(`{"a":`, 20000) + "1" + strings.Repeat("}", 20000),
			want: strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)},
	} {
		got := extract(t, tt.raw)
		want := tt.want
		if want == "" {
			want = tt.raw
		}
		if string(got) != want {
			t.Errorf("%.30q: extracted %.40q, want %.40q", tt.raw, got, want)
		}
		if len(tt.raw) < 16<<10 && !raceDetector {
			if ref := extractQuadratic(tt.raw); string(got) != string(ref) {
				t.Errorf("%.30q: extracted %.40q, the decode from every brace %.40q", tt.raw, got, ref)
			}
		}
	}
}

// Text that would need more decoding than the budget stops the search
// with ErrExtractLimit.
func TestExtractProposalBudget(t *testing.T) {
	raw := strings.Repeat(`{"a":"{`, 100)
	if _, _, err := searchObject(context.Background(), raw, 100); !errors.Is(err, ErrExtractLimit) {
		t.Errorf("error %v", err)
	}
	if s, _, err := searchObject(context.Background(), raw, len(raw)*4); err != nil || s != -1 {
		t.Errorf("with the budget: %v %d", err, s)
	}
}

// The search stops when its context ends: at once when it has ended
// already, and at the deadline the runner gives it.
func TestExtractProposalCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := ExtractProposal(ctx, hostile(256<<10)); !errors.Is(err, context.Canceled) {
		t.Errorf("a cancelled search: %v", err)
	}
	ctx, cancel = context.WithDeadline(context.Background(), time.Now().Add(-time.Second))
	defer cancel()
	if _, err := ExtractProposal(ctx, hostile(1<<10)); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("a search past its deadline: %v", err)
	}
}

// BenchmarkExtractHostile is the extraction of hostile answers (32, 128
// and 256 KB of `{"a":[`, as scripts/hostile-answers.sh sends), and of a
// reference answer.
func BenchmarkExtractHostile(b *testing.B) {
	for _, kb := range []int{32, 128, 256} {
		raw := hostile(kb << 10)
		b.Run(strconv.Itoa(kb)+"KB", func(b *testing.B) {
			b.SetBytes(int64(len(raw)))
			for b.Loop() {
				ExtractProposal(context.Background(), raw)
			}
		})
	}
	raw := "Here is the patch:\n```json\n" + `{"patch":[{"op":"replace","path":"/ticket/status","value":"resolved"}],"note":"done"}` + "\n```"
	b.Run("reference", func(b *testing.B) {
		for b.Loop() {
			ExtractProposal(context.Background(), raw)
		}
	})
}
