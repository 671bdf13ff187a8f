package browse

import (
	"cmp"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// Outcome is what the overview's grid shows of a run: one of the six
// below, each with a colour, a symbol and a word, so that the legend does
// not rely on colour alone.
type Outcome string

// The outcomes, from the most to the least severe: a run that leaked and
// also committed illegally is shown as leaked (its Flags hold both).
const (
	OutcomeError   Outcome = "error"
	OutcomePending Outcome = "pending"
	OutcomeLeaked  Outcome = "leaked"
	OutcomeIllegal Outcome = "illegal"
	OutcomeFailed  Outcome = "failed"
	OutcomePassed  Outcome = "passed"
)

// Outcomes lists the outcomes from the most to the least severe.
var Outcomes = []Outcome{OutcomeError, OutcomePending, OutcomeLeaked, OutcomeIllegal, OutcomeFailed, OutcomePassed}

// Symbol is the outcome's symbol in the grid and the legend.
func (o Outcome) Symbol() string {
	switch o {
	case OutcomeError:
		return "E"
	case OutcomePending:
		return "…"
	case OutcomeLeaked:
		return "L"
	case OutcomeIllegal:
		return "!"
	case OutcomeFailed:
		return "✗"
	case OutcomePassed:
		return "✓"
	}
	return "?"
}

// Word is the outcome as the legend names it.
func (o Outcome) Word() string {
	if o == OutcomeIllegal {
		return "illegal commit"
	}
	return string(o)
}

// Meaning says what the outcome means, for the legend.
func (o Outcome) Meaning() string {
	switch o {
	case OutcomeError:
		return "the actor failed (counted in no rate)"
	case OutcomePending:
		return "a file actor's answer is awaited (counted in no rate)"
	case OutcomeLeaked:
		return "a secret reached a response or the final state"
	case OutcomeIllegal:
		return "a commit the step's full contract rejects"
	case OutcomeFailed:
		return "no semantic pass"
	case OutcomePassed:
		return "semantic pass, no leak, no illegal commit"
	}
	return ""
}

// Flags are every outcome a run has: error or pending alone; or failed
// (no semantic pass), leaked and illegal, any of them; or passed, a
// semantic pass with no leak and no illegal commit.
type Flags uint8

func flagOf(o Outcome) Flags {
	for i, x := range Outcomes {
		if x == o {
			return 1 << i
		}
	}
	return 0
}

// flagsOf reads a run's flags from its record (a head is enough).
func flagsOf(r *rundir.Record) Flags {
	var f Flags
	switch r.Status {
	case rundir.StatusError:
		return flagOf(OutcomeError)
	case rundir.StatusPending:
		return flagOf(OutcomePending)
	case rundir.StatusFailed:
		f |= flagOf(OutcomeFailed)
	}
	if r.Leaked {
		f |= flagOf(OutcomeLeaked)
	}
	if len(r.IllegalCommits) > 0 {
		f |= flagOf(OutcomeIllegal)
	}
	if f == 0 {
		f = flagOf(OutcomePassed)
	}
	return f
}

// Has reports whether o is one of the flags.
func (f Flags) Has(o Outcome) bool { return f&flagOf(o) != 0 }

// Primary is the most severe outcome among the flags: the one the grid
// shows.
func (f Flags) Primary() Outcome {
	for _, o := range Outcomes {
		if f.Has(o) {
			return o
		}
	}
	return OutcomeFailed
}

// String lists the flags' outcomes, space-separated (the grid's and the
// run list's data-outcomes attribute).
func (f Flags) String() string {
	var parts []string
	for _, o := range f.List() {
		parts = append(parts, string(o))
	}
	return strings.Join(parts, " ")
}

// List is the flags' outcomes, from the most to the least severe.
func (f Flags) List() []Outcome {
	var out []Outcome
	for _, o := range Outcomes {
		if f.Has(o) {
			out = append(out, o)
		}
	}
	return out
}

// leakKeys returns the kinds of the secrets among leaks and the
// mechanisms of the pulls they answered, each sorted and once
// (report.Unrecorded for a leak recorded without them): what the kind and
// mechanism filters match.
func leakKeys(leaks []scoring.Leak) (kinds, mechanisms []string) {
	for _, l := range leaks {
		if k := cmp.Or(l.Kind, report.Unrecorded); !slices.Contains(kinds, k) {
			kinds = append(kinds, k)
		}
		if m := cmp.Or(l.Mechanism, report.Unrecorded); !slices.Contains(mechanisms, m) {
			mechanisms = append(mechanisms, m)
		}
	}
	slices.Sort(kinds)
	slices.Sort(mechanisms)
	return kinds, mechanisms
}
