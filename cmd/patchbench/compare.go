package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"sort"

	"github.com/patchbench/patchbench/rundir"
)

const compareExamples = `  # Runs that passed before a verifier change and fail after it:
  patchbench compare results/before results/after

  # As JSON:
  patchbench compare results/before results/after --format json
`

// Regression is a run that passed in A and did not pass in B.
type Regression struct {
	RunID   string `json:"run_id"`
	StatusA string `json:"status_a"`
	StatusB string `json:"status_b"`
	LeakedB bool   `json:"leaked_b"`
}

// outcome is what compare keeps of a run of B.
type outcome struct {
	status string
	leaked bool
}

// comparison pairs the runs of A with those of B by run id.
type comparison struct {
	paired, fixed, onlyA, onlyB int
	regs                        []Regression
}

// runCompare pairs the runs of two run directories by run id and lists
// those that passed in A and fail (or error, or are missing) in B. Exit 1
// if any.
func runCompare(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("compare", "patchbench compare A B [--format text|json]", compareExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	pos, code, ok := fs.parseWithArgs(args, 2)
	if !ok {
		return code
	}
	if len(pos) != 2 {
		return fs.usageError("give two run directories")
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	c, err := compareDirs(pos[0], pos[1])
	if err != nil {
		return failf(stderr, "compare", "%v", err)
	}
	if c.paired == 0 {
		return failf(stderr, "compare", "%s and %s share no run: nothing to compare", pos[0], pos[1])
	}
	if *format == "json" {
		out, _ := json.MarshalIndent(map[string]any{"paired": c.paired, "fixed": c.fixed, "only_a": c.onlyA, "only_b": c.onlyB, "regressions": c.regs}, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
	} else {
		for _, r := range c.regs {
			leak := ""
			if r.LeakedB {
				leak = " (leaked)"
			}
			fmt.Fprintf(stdout, "regression: %s: %s in A, %s in B%s\n", r.RunID, r.StatusA, r.StatusB, leak)
		}
		fmt.Fprintf(stdout, "%d paired runs: %d passed in A and not in B, %d the other way; %d runs only in A, %d only in B\n",
			c.paired, len(c.regs), c.fixed, c.onlyA, c.onlyB)
	}
	if len(c.regs) > 0 {
		return exitNegative
	}
	return exitOK
}

// compareDirs reads B's outcomes (run id, status, leaked), then streams A
// against them. A run that passed in A and is missing from B (B stopped
// early) is a regression too. The regressions come sorted by run id.
func compareDirs(dirA, dirB string) (*comparison, error) {
	a, err := rundir.Read(dirA)
	if err != nil {
		return nil, err
	}
	b, err := rundir.Read(dirB)
	if err != nil {
		return nil, err
	}
	inB := map[string]outcome{}
	if err := b.Each(func(r *rundir.Record) error {
		inB[r.RunID] = outcome{r.Status, r.Leaked}
		return nil
	}); err != nil {
		return nil, err
	}
	c := &comparison{regs: []Regression{}}
	err = a.Each(func(r *rundir.Record) error {
		o, ok := inB[r.RunID]
		switch {
		case !ok && r.Status == rundir.StatusPassed:
			c.regs = append(c.regs, Regression{RunID: r.RunID, StatusA: r.Status, StatusB: "missing"})
		case !ok:
		case r.Status == rundir.StatusPassed && o.status != rundir.StatusPassed:
			c.regs = append(c.regs, Regression{RunID: r.RunID, StatusA: r.Status, StatusB: o.status, LeakedB: o.leaked})
		case r.Status != rundir.StatusPassed && o.status == rundir.StatusPassed:
			c.fixed++
		}
		if ok {
			c.paired++
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	c.onlyA, c.onlyB = a.Runs()-c.paired, len(inB)-c.paired
	sort.Slice(c.regs, func(i, j int) bool { return c.regs[i].RunID < c.regs[j].RunID })
	return c, nil
}
