package runner

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
)

// TestCountSplit checks that the counter's figure (pieces split at
// splitPoint, memoised) is the encoding's count of the whole text, for
// every prompt and view of the embedded suite (whole and projected, with
// and without feedback) and for random texts built from the characters
// the pre-tokenizers treat apart.
func TestCountSplit(t *testing.T) {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	var texts []string
	for _, c := range cases {
		for _, s := range c.Steps {
			for _, view := range []any{c.State.Value(), s.Contract.View(c.State)} {
				v, err := runtime.EncodeIndent(view, "  ")
				if err != nil {
					t.Fatal(err)
				}
				texts = append(texts, string(v))
				for _, fb := range [][]string{nil, {"scope: write_outside_region: /x\n/y", "schema: schema_violation: bad"}} {
					msgs, err := DefaultPrompt.Render(s, "draft", c.Now, view, fb)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range msgs {
						texts = append(texts, m.Content)
					}
				}
			}
		}
	}
	alphabet := []string{"\n", "\n", "\n\n", " ", "  ", "\r", "\t", "/", "}", "{", "]", "\"", ":", "-", "a", "Ab", "x'", "'s", "12345",
		"é", "\u00a0", "\u0085", "\u2028", "中", "\x80", "*", "!"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 3000 {
		var b strings.Builder
		for range 1 + rng.IntN(40) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	// A case's whole state is the view of each of its steps in the
	// configurations that show it whole: each text is checked once.
	seen := map[string]bool{}
	texts = slices.DeleteFunc(texts, func(s string) bool {
		dup := seen[s]
		seen[s] = true
		return dup
	})
	encodings := Tokenizers
	if testing.Short() {
		// The default encoding; the full run checks every encoding.
		encodings = Tokenizers[:1]
	}
	// Each encoding's texts are checked in two halves, each with a
	// counter of its own, in parallel: the texts are only read.
	const parts = 2
	for _, enc := range encodings {
		for part := range parts {
			t.Run(fmt.Sprintf("%s/%d", enc, part), func(t *testing.T) {
				t.Parallel()
				tc, err := newCounter(enc)
				if err != nil {
					t.Fatal(err)
				}
				for i := part; i < len(texts); i += parts {
					s := texts[i]
					want, err := tc.codec.Count(s)
					if err != nil {
						want = 0
					}
					for range 2 { // counted, then from the memo
						if got := tc.count(s); got != want {
							t.Fatalf("%s text %d %q: count %d, whole %d", enc, i, s, got, want)
						}
					}
				}
				if len(tc.memo) > maxMemo {
					t.Errorf("%s: the memo holds %d entries, more than %d", enc, len(tc.memo), maxMemo)
				}
			})
		}
	}
}

// TestRunsShareTheCounter checks that every Run of the process counts
// through one memo per encoding: a second Run of the same jobs finds
// every text the first counted there (the memo does not grow) and
// records the same token figures.
func TestRunsShareTheCounter(t *testing.T) {
	c, cfgs := loadExample(t)
	o := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}, actors.Oversharer{}}, Concurrency: 2,
		Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}}
	tc, err := sharedCounter(o.Tokenizer)
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := sharedCounter("o200k_base"); again != tc {
		t.Fatal("the default encoding and o200k_base have counters of their own")
	}
	memo := func() int {
		tc.mu.Lock()
		defer tc.mu.Unlock()
		return len(tc.memo)
	}
	// What earlier tests counted is forgotten, so that the memo cannot
	// fill (and start again empty) during the two runs.
	tc.mu.Lock()
	clear(tc.memo)
	tc.mu.Unlock()
	run := func() map[string]rundir.Usage {
		sink := &memSink{}
		if err := Run(context.Background(), o, nil, sink); err != nil {
			t.Fatal(err)
		}
		usage := map[string]rundir.Usage{}
		for _, r := range sink.recs {
			usage[r.RunID] = r.Tokens
		}
		return usage
	}
	first := run()
	n := memo()
	if n == 0 {
		t.Fatal("the run counted nothing through the process's counter")
	}
	second := run()
	if m := memo(); m != n {
		t.Errorf("the second run added %d texts to the memo, want none", m-n)
	}
	if len(first) == 0 || !maps.Equal(first, second) {
		t.Errorf("token figures: first run %v, second %v", first, second)
	}
}

// grownViews are the indented texts of every growing case's state grown
// to size, whole and as each step's projected view, with their prompts
// in the tools protocol.
func grownViews(t *testing.T, size string) []string {
	t.Helper()
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		t.Fatal(err, ps)
	}
	scale, err := bench.ParseScale(size)
	if err != nil {
		t.Fatal(err)
	}
	var texts []string
	for _, c := range cases {
		if len(c.Grow) == 0 {
			continue
		}
		g, err := c.Grown(scale, bench.DefaultScaleSeed)
		if err != nil {
			t.Fatal(err)
		}
		s := g.Steps[0]
		for _, view := range []any{g.State.Value(), s.Contract.View(g.State)} {
			v, err := runtime.EncodeIndent(view, "  ")
			if err != nil {
				t.Fatal(err)
			}
			texts = append(texts, string(v), "Here is the state:\n"+string(v)+"\nPropose a patch.\n")
		}
	}
	return texts
}

// TestCountPastChunks checks that countPast, which counts a long piece
// in chunks cut at indentBreak, gives the encoding's count of the whole
// text when it is within the limit (grown views, whose indented JSON has
// no split point of splitPoint's below its first level, and random
// texts), and that it stops soon after the limit: a view of about
// 200,000 tokens checked against 1,000 is counted as over 1,000 but far
// from whole.
func TestCountPastChunks(t *testing.T) {
	defer func(n int) { pastChunk = n }(pastChunk)
	pastChunk = 512
	// The inner loop (-short) checks fewer and smaller texts; the full
	// run checks views of 300 KB and 300 random texts.
	size, random := "300KB", 300
	if testing.Short() {
		size, random = "100KB", 60
	}
	texts := grownViews(t, size)
	if testing.Short() && len(texts) > 8 {
		texts = texts[:8] // two cases: the state and the view, each alone and in a prompt
	}
	alphabet := []string{"\n", "\n ", "\n  ", "  ", " ", "\r\n ", "\t", "/", "}", "{", "\"", ":", ",", "a", "Ab", "'s", "123", "é", "\u00a0", "\u2028", "x"}
	rng := rand.New(rand.NewPCG(3, 4))
	for range random {
		var b strings.Builder
		for b.Len() < 3000 {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		texts = append(texts, b.String())
	}
	for _, enc := range []string{"o200k_base", "cl100k_base"} {
		tc, err := newCounter(enc)
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range texts {
			want, err := tc.codec.Count(s)
			if err != nil {
				want = 0
			}
			if got := tc.countPast(s, want); got != want {
				t.Fatalf("%s text %d (%d bytes): countPast %d, whole %d", enc, i, len(s), got, want)
			}
			if got := tc.count(s); got != want {
				t.Fatalf("%s text %d: count %d, whole %d", enc, i, got, want)
			}
		}
	}
	tc, _ := newCounter("")
	view := texts[0]
	whole, _ := tc.codec.Count(view)
	if got := tc.countPast(view, 1000); got <= 1000 || got > 1000+pastChunk {
		t.Errorf("countPast(%d-token view, 1000) = %d; want over 1,000 and within a chunk of it", whole, got)
	}
}

// TestViewTokensOverBudget checks a step's record of a view over the
// context budget: the budget and view_tokens_over, while a view within
// it has its exact count and no flag.
func TestViewTokensOverBudget(t *testing.T) {
	c, cfgs := loadExample(t)
	tc, err := sharedCounter("")
	if err != nil {
		t.Fatal(err)
	}
	view, err := runtime.EncodeIndent(c.State.Value(), "  ")
	if err != nil {
		t.Fatal(err)
	}
	exact := tc.count(string(view))
	for _, budget := range []int{exact - 1, exact, 100_000} {
		r := &run{o: Options{Spec: runspec.Spec{ContextTokens: budget}}, tc: tc, j: Job{Case: c, Config: cfgs[0]}, rec: &rundir.Record{}}
		r.countView(view)
		r.appendStep(&rundir.StepRecord{Step: "s"})
		got := r.rec.Steps[0]
		if budget < exact {
			if got.ViewTokens != budget || !got.ViewTokensOver {
				t.Errorf("budget %d, view of %d tokens: recorded %d over=%v; want %d over", budget, exact, got.ViewTokens, got.ViewTokensOver, budget)
			}
		} else if got.ViewTokens != exact || got.ViewTokensOver {
			t.Errorf("budget %d, view of %d tokens: recorded %d over=%v; want %d", budget, exact, got.ViewTokens, got.ViewTokensOver, exact)
		}
	}
}
