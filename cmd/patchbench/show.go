package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
)

const showExamples = `  # One run of the default benchmark, as a readable trace (a configuration's
  # label, as the tables print it, also works: fin-expense-review/Unconstrained/follower/1):
  patchbench show fin-expense-review/unconstrained/follower/1

  # The runs worth a look: those that leaked, or committed illegally:
  patchbench show --list --filter leaked
  patchbench show --list --filter illegal results/run-1a2b3c4d5e

  # From a chosen run directory, as the JSON record:
  patchbench show sup-tier-escalation/patchoptic/reference/1 --out results/fin --format json
`

// runShow prints one run of a run directory as a readable trace: per
// step, the phase, the view, the patch, every decision (enforcing and
// audit), then the rubric checks and the leaks with the offending text
// marked.
func runShow(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", "patchbench show RUN_ID [--out DIR] [--cases DIR] [--format text|json]\n  patchbench show --list [--filter OUTCOME] [DIR | --out DIR]", showExamples, stdout, stderr)
	out := fs.String("out", "", "the run `dir` (default: the newest directory under results/ that holds the run)")
	casesDir := fs.String("cases", "", "the case set `dir` of the run, when the manifest's case set cannot be loaded from here")
	format := fs.choice("format", "text", "output `format`: text, or json (the record as runs.jsonl holds it)", "text", "json")
	list := fs.Bool("list", false, "list the runs of the directory (id, status, leaks, illegal commits, content) instead of showing one")
	filter := fs.String("filter", "", "with --list, only the runs that `match`: passed, failed, error, pending, leaked, illegal or attacked")
	pos, err := fs.parseWithArgs(args, 1)
	if err != nil {
		return fs.exit(err)
	}
	if *list {
		dir := *out
		switch {
		case len(pos) > 1:
			return fs.usageError("--list takes one run directory")
		case len(pos) == 1 && dir != "":
			return fs.usageError("give the run directory once: as an argument or with --out")
		case len(pos) == 1 && strings.TrimSpace(pos[0]) == "":
			return fs.usageError("the run directory argument is empty: give a run directory, or none for the newest under results")
		case len(pos) == 1:
			dir = pos[0]
		}
		return fs.exit(listRuns(dir, *filter, stdout, stderr))
	}
	if *filter != "" {
		return fs.usageError("--filter goes with --list")
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return fs.usageError("give the run id (case/config/actor/round, as runs.jsonl and compare print it), or --list")
	}
	return fs.exit(showRun(pos[0], *out, *casesDir, *format, stdout, stderr))
}

// showRun prints one run: the record as JSON, or its trace
// (report.WriteTrace) with its case and configuration when they can be
// had.
func showRun(id, dir, casesDir, format string, stdout, stderr io.Writer) error {
	if dir == "" {
		var err error
		if dir, err = findRunDir("results", id); err != nil {
			return err
		}
	}
	// The manifest is checked first, as every reader checks it: a
	// directory whose manifest was edited or damaged is refused, with the
	// repair that mends it.
	m, err := rundir.ReadManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	if err != nil {
		return err
	}
	id = canonicalRunID(dir, id)
	raw, line, err := findRun(dir, id)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "patchbench show: run %s, line %d of %s\n", id, line, filepath.Join(dir, rundir.RunsFile))
	if format == "json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s\n", buf.Bytes())
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rec rundir.Record
	if err := dec.Decode(&rec); err != nil {
		return fmt.Errorf("%s:%d: run %s: %v", filepath.Join(dir, rundir.RunsFile), line, id, err)
	}
	c, cfg, opts := showContext(m, &rec, casesDir, stderr)
	var buf strings.Builder
	report.WriteTrace(&buf, &rec, c, cfg, opts)
	// Whatever an actor sent (a note, a patch value, an error) reaches
	// the terminal with its control characters escaped.
	fmt.Fprint(stdout, report.Printable(buf.String()))
	return nil
}

// findRun finds the last record of run id in dir (rundir.Find); a line
// that is not JSON is a *rundir.LineError, which names the line, its byte
// offset and patchbench repair.
func findRun(dir, id string) (json.RawMessage, int, error) {
	return rundir.Find(dir, id)
}

// canonicalRunID turns a run id whose configuration is written as its
// label ("PatchOptic", "FSM+ACL", as the tables print it) or in another
// case into the configuration's name, as run ids hold it.
func canonicalRunID(dir, id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 4 {
		return id
	}
	m, err := rundir.ReadManifest(dir)
	if err != nil {
		return id
	}
	for _, c := range m.Configurations() {
		if strings.EqualFold(parts[1], c.Label) || strings.EqualFold(parts[1], c.Name) {
			parts[1] = c.Name
			return strings.Join(parts, "/")
		}
	}
	return id
}

// newestRunDir returns the run directory under root whose manifest
// started last, or "".
func newestRunDir(root string) string {
	entries, _ := os.ReadDir(root)
	best, bestStart := "", ""
	for _, e := range entries {
		dir := filepath.Join(root, e.Name())
		m, err := rundir.ReadManifest(dir)
		if err == nil && (best == "" || m.Started > bestStart) {
			best, bestStart = dir, m.Started
		}
	}
	return best
}

// findRunDir returns the directory under root that holds the run, the
// newest by its manifest's start time when several do.
func findRunDir(root, id string) (string, error) {
	entries, err := os.ReadDir(root)
	if err != nil {
		return "", fmt.Errorf("no --out given and %s cannot be read (%v); give the run directory with --out", root, err)
	}
	best, bestStart := "", ""
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(root, e.Name())
		m, err := rundir.ReadManifest(dir)
		if err != nil {
			continue
		}
		if _, _, err := findRun(dir, canonicalRunID(dir, id)); err != nil {
			continue
		}
		if best == "" || m.Started > bestStart {
			best, bestStart = dir, m.Started
		}
	}
	if best == "" {
		if newest := newestRunDir(root); newest != "" {
			// Say what the newest directory holds of the same case.
			if _, _, err := findRun(newest, canonicalRunID(newest, id)); err != nil {
				return "", fmt.Errorf("no run directory under %s holds run %s; in the newest, %v", root, id, err)
			}
		}
		return "", fmt.Errorf("no run directory under %s holds run %s; give the directory with --out", root, id)
	}
	return best, nil
}

// listRuns prints the runs of a run directory, one line each, sorted by
// id, keeping those that match filter.
func listRuns(dir, filter string, stdout, stderr io.Writer) error {
	switch filter {
	case "", rundir.StatusPassed, rundir.StatusFailed, rundir.StatusError, rundir.StatusPending, "leaked", "illegal", "attacked":
	default:
		return fmt.Errorf("--filter %q: want passed, failed, error, pending, leaked, illegal or attacked", filter)
	}
	if dir == "" {
		if dir = newestRunDir("results"); dir == "" {
			return fmt.Errorf("no run directory under results; give one with --out")
		}
	}
	d, err := rundir.Read(dir)
	if err != nil {
		return err
	}
	var rows [][]string
	err = d.EachHead(func(r *rundir.Record) error {
		keep := filter == "" || r.Status == filter ||
			(filter == "leaked" && r.Leaked) || (filter == "illegal" && len(r.IllegalCommits) > 0) ||
			(filter == "attacked" && r.Attack != nil && r.Attack.Succeeded)
		if !keep {
			return nil
		}
		content := "-"
		if r.HasOutcome() {
			content = fmt.Sprintf("%.3f", r.ContentScore)
		}
		rows = append(rows, []string{r.RunID, r.Status, fmt.Sprint(len(r.Leaks)), fmt.Sprint(len(r.IllegalCommits)), content})
		return nil
	})
	if err != nil {
		return err
	}
	slices.SortFunc(rows, func(a, b []string) int { return strings.Compare(a[0], b[0]) })
	fmt.Fprintf(stderr, "%s: %s", dir, report.Plural(len(rows), "run"))
	if filter != "" {
		fmt.Fprintf(stderr, " (%s) of %d", filter, d.Runs())
	}
	fmt.Fprintln(stderr)
	if len(rows) > 0 {
		report.WriteColumns(stdout, []string{"run", "status", "leaks", "illegal commits", "content"}, rows)
	}
	return nil
}

// showContext loads the run's case and configuration, for the views'
// regions, the canaries and the injections' texts; either may be nil
// when they cannot be had (the trace is then printed from the record
// alone). The case is the one the run met: grown to its scale and its
// injections worded by its attack (rundir.Manifest.RunCase); when the
// attack cannot be had, the options say so and the injections' texts
// are not shown.
func showContext(m *rundir.Manifest, rec *rundir.Record, casesDir string, stderr io.Writer) (*bench.Case, *bench.Config, report.TraceOptions) {
	var cfg *bench.Config
	for _, c := range m.ConfigDetails {
		if c.Name == rec.Config {
			cfg = c
		}
	}
	var opts report.TraceOptions
	dir := casesDir
	if dir == "" && m.CaseSet != displayDir("") {
		dir = m.CaseSet
	}
	cases, _, err := loadCases(dir)
	if err != nil {
		fmt.Fprintf(stderr, "patchbench show: the case set %s does not load (%v); the views' regions are not shown (give --cases)\n", displayDir(dir), err)
		return nil, cfg, opts
	}
	for _, c := range cases {
		if c.ID != rec.Case {
			continue
		}
		rc, err := m.RunCase(c, rec)
		switch {
		case rc == nil:
			fmt.Fprintf(stderr, "patchbench show: case %s as run %s met it cannot be made (%v); the views' regions are not shown\n", rec.Case, rec.RunID, err)
		case err != nil:
			fmt.Fprintf(stderr, "patchbench show: %v; the injections' texts are not shown\n", err)
			opts.NoInjectionTexts = "the run's attack " + rec.AttackName + " could not be applied; standard error says why"
		}
		return rc, cfg, opts
	}
	fmt.Fprintf(stderr, "patchbench show: case %s is not in %s; the views' regions are not shown (give --cases)\n", rec.Case, displayDir(dir))
	return nil, cfg, opts
}
