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
