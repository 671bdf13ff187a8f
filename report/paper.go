package report

import (
	"fmt"
	"slices"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/scoring"
)

// Rows selects the summary rows a paper figure is computed over: those of
// the configuration named Config, or, when Config is empty, those whose
// configuration shows the actor View ("full" or "projected"). Only rows
// with a measured run count.
type Rows struct {
	Config string
	View   string
}

func (s Rows) match(r Row) bool {
	if r.Measured() == 0 {
		return false
	}
	if s.Config != "" {
		return r.Config == s.Config
	}
	return r.View == s.View
}

// PaperFigure is one result the paper reports (PatchBench design §1) and
// how this run's figure for it is computed: Measure over the rows Of
// selects and, for a comparison, the rows Against selects, of one actor.
// Measure returns the cell, or false when the rows cannot give it.
type PaperFigure struct {
	Result  string
	Paper   string
	Of      Rows
	Against *Rows
	Measure func(of, against []Row) (string, bool)
}

// PaperFigures are the paper's figures (GPT-5-mini; PatchBench design
// §1) that a run directory's summary can be set beside, in report order.
// The configurations each compares are data here: the tables' code names
// none.
var PaperFigures = []PaperFigure{
	{Result: "leak rate, full-state configurations", Paper: "31.5 % (14.5 per round of 46)",
		Of: Rows{View: bench.ViewFull}, Measure: leakPerRound},
	{Result: "leak rate, PatchOptic", Paper: "0.2 % (0.1 per round)",
		Of: Rows{Config: "patchoptic"}, Measure: leakRate},
	{Result: "tokens per run, projected vs full-state", Paper: "11 to 13 % fewer",
		Of: Rows{View: bench.ViewProjected}, Against: &Rows{View: bench.ViewFull}, Measure: fewerTokens},
	{Result: "content score of accepted outputs", Paper: "about 0.927",
		Of: Rows{Config: "patchoptic"}, Measure: contentAccepted},
	{Result: "semantic pass, Unconstrained → PatchOptic", Paper: "0.61 → 0.78 to 0.80",
		Of: Rows{Config: "patchoptic"}, Against: &Rows{Config: "unconstrained"}, Measure: semanticChange},
}

// leakPerRound is the mean leak rate of the rows, with their mean leaked
// runs per round.
func leakPerRound(of, _ []Row) (string, bool) {
	if len(of) == 0 {
		return "", false
	}
	rate, perRound := make([]float64, len(of)), make([]float64, len(of))
	for i, r := range of {
		rate[i], perRound[i] = r.LeakRate, r.LeakedPerRound
	}
	return fmt.Sprintf("%.1f %% (%.1f per round)", 100*scoring.Mean(rate), scoring.Mean(perRound)), true
}

// leakRate is the leak rate of the row.
func leakRate(of, _ []Row) (string, bool) {
	if len(of) == 0 {
		return "", false
	}
	return fmt.Sprintf("%.1f %%", 100*of[0].LeakRate), true
}

// fewerTokens is how much fewer tokens per run the rows use than the rows
// against, on their means.
func fewerTokens(of, against []Row) (string, bool) {
	tokens := func(rows []Row) float64 {
		xs := make([]float64, len(rows))
		for i, r := range rows {
			xs[i] = r.TokensMean
		}
		return scoring.Mean(xs)
	}
	if len(of) == 0 || len(against) == 0 || !(tokens(against) > 0) {
		return "", false
	}
	return fmt.Sprintf("%.1f %% fewer", 100*(1-tokens(of)/tokens(against))), true
}

// contentAccepted is the row's content score of accepted runs.
func contentAccepted(of, _ []Row) (string, bool) {
	if len(of) == 0 || of[0].ContentScoreAccepted == nil {
		return "", false
	}
	return fmt.Sprintf("%.3f", *of[0].ContentScoreAccepted), true
}

// semanticChange is the semantic pass of the row against, then of the
// row.
func semanticChange(of, against []Row) (string, bool) {
	if len(of) == 0 || len(against) == 0 {
		return "", false
	}
	return fmt.Sprintf("%.2f → %.2f", against[0].SemanticPass, of[0].SemanticPass), true
}

// PaperTable puts the paper's figures (PaperFigures) beside the same
// figures of this run, per actor (sorted), leaving out the figures the
// run's rows cannot give.
func PaperTable(s Summary) Table {
	t := Table{Name: "paper", Title: "The paper's figures beside this run's",
		Header: []string{"Result", "Paper (GPT-5-mini)", "This run", "Actor"}}
	var actors []string
	for _, r := range s.Rows {
		if !slices.Contains(actors, r.Actor) {
			actors = append(actors, r.Actor)
		}
	}
	slices.Sort(actors)
	for _, a := range actors {
		for _, f := range PaperFigures {
			of := selectRows(s.Rows, a, f.Of)
			var against []Row
			if f.Against != nil {
				against = selectRows(s.Rows, a, *f.Against)
			}
			if cell, ok := f.Measure(of, against); ok {
				t.Rows = append(t.Rows, []string{f.Result, f.Paper, cell, a})
			}
		}
	}
	return t
}

// selectRows returns the rows of actor a that sel selects, in order.
func selectRows(rows []Row, a string, sel Rows) []Row {
	var out []Row
	for _, r := range rows {
		if r.Actor == a && sel.match(r) {
			out = append(out, r)
		}
	}
	return out
}
