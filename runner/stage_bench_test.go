package runner

import (
	"context"
	"strconv"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// The stages of one step of a suite case under PatchOptic with the
// reference actor: the prompt, the token counts (cold: a new counter, as
// the first run of a benchmark meets each text; warm: the counter of a
// benchmark that has met it), verification and commit, and scoring. This
// file uses only what the runner had before the harness was made faster,
// so that scripts/bench-harness.sh runs it at both revisions.

func stageCase(b *testing.B) (*bench.Case, *bench.Step, *bench.Config, any) {
	b.Helper()
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil || len(ps) > 0 {
		b.Fatal(err, ps)
	}
	cfgs, err := bench.LoadConfigs(bench.EmbeddedConfigs(), nil)
	if err != nil {
		b.Fatal(err)
	}
	var c *bench.Case
	for _, x := range cases {
		if x.ID == "fin-payment-run-approval" {
			c = x
		}
	}
	var po *bench.Config
	for _, cfg := range cfgs {
		if cfg.Name == "patchoptic" {
			po = cfg
		}
	}
	s := c.Steps[0]
	return c, s, po, s.Contract.View(c.State)
}

func BenchmarkStagePrompt(b *testing.B) {
	c, s, _, view := stageCase(b)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := DefaultPrompt.Render(s, "draft", c.Now, view, nil); err != nil {
			b.Fatal(err)
		}
	}
}

func benchTokens(b *testing.B, warm bool) {
	c, s, _, view := stageCase(b)
	msgs, err := DefaultPrompt.Render(s, "draft", c.Now, view, nil)
	if err != nil {
		b.Fatal(err)
	}
	v, _ := runtime.EncodeIndent(view, "  ")
	tc, _ := newCounter("")
	b.ReportAllocs()
	for b.Loop() {
		if !warm {
			tc, _ = newCounter("")
		}
		n := tc.count(string(v))
		for _, m := range msgs {
			n += tc.count(m.Content)
		}
		n += tc.count(string(referenceOf(b, c, s)))
		if n == 0 {
			b.Fatal("no tokens")
		}
	}
}

func BenchmarkStageTokensCold(b *testing.B) { benchTokens(b, false) }
func BenchmarkStageTokensWarm(b *testing.B) { benchTokens(b, true) }

func BenchmarkStageVerify(b *testing.B) {
	c, s, po, _ := stageCase(b)
	b.ReportAllocs()
	for b.Loop() {
		sess := runtime.NewSession(c.State, c.Workflow.PhasePath)
		res, err := sess.Step(context.Background(), s.Contract, referenceOf(b, c, s),
			runtime.StepOptions{Gates: po.GateSet, Audit: bench.AllGates, AdvanceTo: s.AdvanceTo})
		if err != nil || !res.Committed {
			b.Fatal(err, res.Committed)
		}
	}
}

func BenchmarkStageScore(b *testing.B) { benchScore(b, false) }

// BenchmarkStageScoreNewAnswers is the score stage on answers it has not
// met (a live actor's differ from run to run, so the detector's memo of
// prepared texts does not hold them): each iteration's answers end with a
// new number. The final state is the same each time, as most of a live
// run's final state is.
func BenchmarkStageScoreNewAnswers(b *testing.B) { benchScore(b, true) }

func benchScore(b *testing.B, newAnswers bool) {
	c, _, po, _ := stageCase(b)
	tc, _ := newCounter("")
	rec, err := runOne(context.Background(), Options{Spec: runspec.Spec{MaxAttempts: 1, PassThreshold: 0.8}}, tc, Job{Case: c, Config: po, Actor: actors.Reference{}, Round: 1})
	if err != nil {
		b.Fatal(err)
	}
	final, err := runtime.ParseDocument(rec.FinalState)
	if err != nil {
		b.Fatal(err)
	}
	var outputs []scoring.Output
	committed := map[string]bool{}
	for _, s := range c.Steps {
		outputs = append(outputs, scoring.Output{Step: s.ID, Text: string(referenceOf(b, c, s))})
		committed[s.ID] = true
	}
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		if newAnswers {
			n++
			for i, s := range c.Steps {
				outputs[i].Text = string(referenceOf(b, c, s)) + " " + strconv.Itoa(n)
			}
		}
		scan := scoring.NewLeakScan(c)
		for _, out := range outputs {
			scan.Add(out)
		}
		scoring.ScoreScanned(c, scan, final, committed, nil)
	}
}
