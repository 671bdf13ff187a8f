package report_test

import (
	"strings"
	"testing"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

// paperCells puts the paper table's rows in a map: result → one
// "this run | produced by" cell per row of that result, in order.
func paperCells(tb report.Table) map[string][]string {
	cells := map[string][]string{}
	for _, r := range tb.Rows {
		cells[r[0]] = append(cells[r[0]], r[3]+" | "+r[4])
	}
	return cells
}

// summarize is the summary of records (a Summarizer's).
func summarize(recs []*rundir.Record, configs []*bench.Config, actors []string) report.Summary {
	s := report.NewSummarizer(configs, actors)
	for _, r := range recs {
		s.Add(r)
	}
	return s.Summary()
}

const rankRow = "semantic pass, PatchOptic (rank of six)"

// TestPaperRowsOfTheirModel: a paper row is filled only from a run of its
// model (the actor's spec, or the models its provider said answered), or
// from the actor --paper-map names for it; "not measured" otherwise.
func TestPaperRowsOfTheirModel(t *testing.T) {
	recs, configs := exampleRun(t, 1)
	for _, r := range recs {
		switch r.Actor {
		case "oversharer":
			r.Actor = "openai:gpt-5-mini"
		case "follower":
			r.Actor = "ollama:mistral?num_ctx=8192"
		}
	}
	names := []string{"reference", "openai:gpt-5-mini", "ollama:mistral?num_ctx=8192"}
	sum := summarize(recs, configs, names)

	cells := paperCells(report.PaperTable(report.PaperInput{Summary: sum}, nil))
	if got := cells["leak rate, PatchOptic"]; len(got) != 1 || !strings.Contains(got[0], "| openai:gpt-5-mini,") {
		t.Errorf("GPT-5-mini's row from anything but its run: %q", got)
	}
	if got := cells[rankRow]; len(got) != 1 || !strings.Contains(got[0], "| ollama:mistral?num_ctx=8192,") {
		t.Errorf("Mistral 7B's row: %q", got)
	}

	// Only a GPT-5-mini run: Mistral 7B's row is not measured, and says
	// how to name a run of it.
	onlyGPT := summarize(filterActor(recs, "openai:gpt-5-mini"), configs, []string{"openai:gpt-5-mini"})
	cells = paperCells(report.PaperTable(report.PaperInput{Summary: onlyGPT}, nil))
	if got := cells[rankRow]; len(got) != 1 || got[0] != "not measured | no run of Mistral 7B (actors: openai:gpt-5-mini; --paper-map mistral-7b=ACTOR names one)" {
		t.Errorf("Mistral 7B's row from a GPT-5-mini run: %q", got)
	}

	// A provider that said another model answered is not a run of the
	// spec's model.
	cells = paperCells(report.PaperTable(report.PaperInput{Summary: onlyGPT},
		map[string]report.Producer{"openai:gpt-5-mini": {Actor: "openai:gpt-5-mini", Models: []string{"mistral-7b-instruct-v0.3"}, Rounds: 1, MaxAttempts: 1}}))
	if got := cells["leak rate, PatchOptic"]; len(got) != 1 || !strings.HasPrefix(got[0], "not measured | no run of GPT-5-mini") {
		t.Errorf("GPT-5-mini's row from a run answered by Mistral: %q", got)
	}
	if got := cells[rankRow]; len(got) != 1 || strings.HasPrefix(got[0], "not measured") {
		t.Errorf("Mistral 7B's row from a run answered by Mistral: %q", got)
	}

	// --paper-map names the run of a row: a file actor's panel.
	panel := summarize(filterActor(recs, "reference"), configs, []string{"reference"})
	cells = paperCells(report.PaperTable(report.PaperInput{Summary: panel, Map: map[string][]string{"mistral-7b": {"reference"}}}, nil))
	if got := cells[rankRow]; len(got) != 1 || !strings.HasPrefix(got[0], "1.000, tied 1st–6th of 6 | reference") {
		t.Errorf("Mistral 7B's row mapped to reference: %q", got)
	}
	if got := cells["leak rate, PatchOptic"]; len(got) != 1 || !strings.HasPrefix(got[0], "not measured | no live model in this run") {
		t.Errorf("GPT-5-mini's row with no GPT-5-mini run and no live model: %q", got)
	}
}

// TestPaperRankTies: ties rank as ties.
func TestPaperRankTies(t *testing.T) {
	recs, configs := exampleRun(t, 1)
	recs = filterActor(recs, "reference")
	for _, r := range recs {
		r.Actor = "ollama:mistral"
	}
	for _, c := range []struct {
		name string
		pass map[string]bool // semantic pass of a configuration's one run; the rest as run
		want string
	}{
		{"six-way tie", map[string]bool{"unconstrained": true, "schema-only": true, "fsm-acl": true, "view-only": true, "verify-only": true, "patchoptic": true}, "1.000, tied 1st–6th of 6"},
		{"best alone", map[string]bool{"unconstrained": false, "schema-only": false, "fsm-acl": false, "view-only": false, "verify-only": false, "patchoptic": true}, "1.000, 1st of 6"},
		{"tied for 2nd", map[string]bool{"unconstrained": true, "schema-only": false, "fsm-acl": false, "view-only": false, "verify-only": false, "patchoptic": false}, "0.000, tied 2nd–6th of 6"},
		{"two tied first", map[string]bool{"unconstrained": false, "schema-only": false, "fsm-acl": false, "view-only": false, "verify-only": true, "patchoptic": true}, "1.000, tied 1st–2nd of 6"},
	} {
		t.Run(c.name, func(t *testing.T) {
			for _, r := range recs {
				r.SemanticPass = c.pass[r.Config]
			}
			sum := summarize(recs, configs, []string{"ollama:mistral"})
			got := paperCells(report.PaperTable(report.PaperInput{Summary: sum}, nil))[rankRow]
			if len(got) != 1 || !strings.HasPrefix(got[0], c.want+" | ") {
				t.Errorf("%q, want %q", got, c.want)
			}
		})
	}
}
