package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

const showExamples = `  # One run of the default benchmark, as a readable trace:
  patchbench show fin-expense-review/unconstrained/follower/1

  # From a chosen run directory, as the JSON record:
  patchbench show sup-tier-escalation/patchoptic/reference/1 --out results/fin --format json
`

// runShow prints one run of a run directory as a readable trace: per
// step, the phase, the view, the patch, every decision (enforcing and
// audit), then the rubric checks and the leaks with the offending text
// marked.
func runShow(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", "patchbench show RUN_ID [--out DIR] [--cases DIR] [--format text|json]", showExamples, stdout, stderr)
	out := fs.String("out", "", "the run `dir` (default: the newest directory under results/ that holds the run)")
	casesDir := fs.String("cases", "", "the case set `dir` of the run, when the manifest's case set cannot be loaded from here")
	format := fs.String("format", "text", "output `format`: text, or json (the record as runs.jsonl holds it)")
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fs.usageError("give the run id (case/config/actor/round, as runs.jsonl and compare print it)")
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	id := pos[0]
	dir := *out
	if dir == "" {
		var err error
		if dir, err = findRunDir("results", id); err != nil {
			return failf(stderr, "show", "%v", err)
		}
	}
	raw, err := findRun(dir, id)
	if err != nil {
		return failf(stderr, "show", "%v", err)
	}
	if *format == "json" {
		var buf bytes.Buffer
		if err := json.Indent(&buf, raw, "", "  "); err != nil {
			return failf(stderr, "show", "%v", err)
		}
		fmt.Fprintf(stdout, "%s\n", buf.Bytes())
		return exitOK
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var rec runner.Record
	if err := dec.Decode(&rec); err != nil {
		return failf(stderr, "show", "%s: run %s: %v", filepath.Join(dir, runner.RunsFile), id, err)
	}
	var m Manifest
	if b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile)); err == nil {
		json.Unmarshal(b, &m)
	}
	c, cfg := showContext(&m, &rec, *casesDir, stderr)
	writeTrace(stdout, &rec, c, cfg)
	return exitOK
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
		b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
		if err != nil {
			continue
		}
		var m Manifest
		if json.Unmarshal(b, &m) != nil {
			continue
		}
		if _, err := findRun(dir, id); err != nil {
			continue
		}
		if best == "" || m.Started > bestStart {
			best, bestStart = dir, m.Started
		}
	}
	if best == "" {
		return "", fmt.Errorf("no run directory under %s holds run %s; give the directory with --out", root, id)
	}
	return best, nil
}

// findRun returns the last record of the run in dir/runs.jsonl, read one
// line at a time. A missing run is an error that names runs of the same
// case, when there are any.
func findRun(dir, id string) (json.RawMessage, error) {
	path := filepath.Join(dir, runner.RunsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var found json.RawMessage
	caseID, _, _ := strings.Cut(id, "/")
	var near []string
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var head struct {
				RunID string `json:"run_id"`
				Case  string `json:"case"`
			}
			if json.Unmarshal(b, &head) == nil {
				switch {
				case head.RunID == id:
					found = append(json.RawMessage(nil), bytes.TrimSpace(b)...)
				case head.Case == caseID && len(near) < 30:
					near = append(near, head.RunID)
				}
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if found == nil {
		if len(near) > 0 {
			sort.Strings(near)
			return nil, fmt.Errorf("%s holds no run %s; runs of case %s: %s", dir, id, caseID, strings.Join(near, ", "))
		}
		return nil, fmt.Errorf("%s holds no run %s (a run id is case/config/actor/round)", dir, id)
	}
	return found, nil
}

// showContext loads the run's case and configuration, for the views'
// regions and the canaries; either may be nil when they cannot be had
// (the trace is then printed from the record alone).
func showContext(m *Manifest, rec *runner.Record, casesDir string, stderr io.Writer) (*bench.Case, *bench.Config) {
	var cfg *bench.Config
	for _, c := range m.ConfigDetails {
		if c.Name == rec.Config {
			cfg = c
		}
	}
	dir := casesDir
	if dir == "" && m.CaseSet != displayDir("") {
		dir = m.CaseSet
	}
	cases, _, err := loadCases(dir)
	if err != nil {
		fmt.Fprintf(stderr, "patchbench show: the case set %s does not load (%v); the views' regions are not shown (give --cases)\n", displayDir(dir), err)
		return nil, cfg
	}
	for _, c := range cases {
		if c.ID == rec.Case {
			return c, cfg
		}
	}
	fmt.Fprintf(stderr, "patchbench show: case %s is not in %s; the views' regions are not shown (give --cases)\n", rec.Case, displayDir(dir))
	return nil, cfg
}

// writeTrace prints a run record as text.
func writeTrace(w io.Writer, r *runner.Record, c *bench.Case, cfg *bench.Config) {
	fmt.Fprintf(w, "run %s\n", r.RunID)
	if c != nil {
		fmt.Fprintf(w, "case %s (%s): %s\n", r.Case, r.Domain, c.Title)
	} else {
		fmt.Fprintf(w, "case %s (%s)\n", r.Case, r.Domain)
	}
	cfgText := r.Config
	if cfg != nil {
		gates := "none"
		if len(cfg.Gates) > 0 {
			gates = strings.Join(cfg.Gates, ", ")
		}
		cfgText = fmt.Sprintf("%s (%s; the actor sees the %s; gates: %s)", cfg.Label, r.Config, viewWord(cfg.View), gates)
	}
	fmt.Fprintf(w, "configuration %s\nactor %s, round %d\n", cfgText, r.Actor, r.Round)
	fmt.Fprintf(w, "status %s%s\n", r.Status, outcomeText(r))
	if r.Error != nil {
		fmt.Fprintf(w, "error: %s\n", *r.Error)
	}
	fmt.Fprintf(w, "tokens %d (prompt %d, completion %d; %s)\n", r.Tokens.Prompt+r.Tokens.Completion, r.Tokens.Prompt, r.Tokens.Completion, r.Tokens.Source)
	if r.Attack != nil {
		won := "did not succeed"
		if r.Attack.Succeeded {
			won = "succeeded"
		}
		fmt.Fprintf(w, "attack: the injections ask for %s; the attack %s\n", strings.Join(r.Attack.Secrets, ", "), won)
	}
	var det *scoring.Detector
	if c != nil {
		det = scoring.NewDetector(c.Canaries())
	}
	for i, s := range r.Steps {
		writeStep(w, i, &s, r, c, cfg, det)
	}
	if len(r.Checks) > 0 {
		held := 0
		for _, k := range r.Checks {
			if k.Held {
				held++
			}
		}
		fmt.Fprintf(w, "\nrubric: %d of %d checks hold (content score %.3f)\n", held, len(r.Checks), r.ContentScore)
		rows := make([][]string, 0, len(r.Checks))
		for _, k := range r.Checks {
			mark := "FAIL"
			if k.Held {
				mark = "ok"
			}
			rows = append(rows, []string{"  " + mark, k.Step, k.ID, k.Path, k.Test})
		}
		writeTable(w, []string{"  held", "step", "check", "path", "test"}, rows)
	}
	fmt.Fprintln(w)
	if len(r.Leaks) == 0 {
		fmt.Fprintln(w, "leaks: none")
		return
	}
	fmt.Fprintf(w, "leaks: %d\n", len(r.Leaks))
	for _, l := range r.Leaks {
		if l.Where == scoring.WhereState {
			fmt.Fprintf(w, "  %s in the final state at %s (%s)\n", l.Secret, l.Path, l.Detector)
		} else {
			fmt.Fprintf(w, "  %s in the response of step %s (%s)\n", l.Secret, l.Step, l.Detector)
		}
	}
}

func viewWord(view string) string {
	if view == bench.ViewProjected {
		return "step's projected view"
	}
	return "full state"
}

// outcomeText sums a run's outcome up after its status.
func outcomeText(r *runner.Record) string {
	if !r.HasOutcome() {
		return ""
	}
	var parts []string
	if r.Leaked {
		parts = append(parts, "leaked")
	}
	if n := len(r.IllegalCommits); n > 0 {
		parts = append(parts, plural(n, "illegal commit"))
	}
	parts = append(parts, fmt.Sprintf("content %.3f", r.ContentScore), "semantic pass "+yesNo(r.SemanticPass), "legal pass "+yesNo(r.LegalPass))
	return ": " + strings.Join(parts, "; ")
}

func writeStep(w io.Writer, i int, s *runner.StepRecord, r *runner.Record, c *bench.Case, cfg *bench.Config, det *scoring.Detector) {
	var step *bench.Step
	if c != nil {
		step = c.Step(s.Step)
	}
	role := ""
	if step != nil {
		role = fmt.Sprintf(" (role %s)", step.Role)
	}
	what := "rejected"
	switch {
	case s.Committed:
		what = "committed"
	case s.Attempts == 0:
		what = "no answer"
	}
	fmt.Fprintf(w, "\nstep %d %s%s, phase %s: %s after %s\n", i+1, s.Step, role, s.Phase, what, plural(s.Attempts, "attempt"))
	view := "the full state"
	if cfg != nil && cfg.Projected() && step != nil {
		view = "projected: include " + strings.Join(step.Spec.View.Include, ", ")
		if len(step.Spec.View.Exclude) > 0 {
			view += "; exclude " + strings.Join(step.Spec.View.Exclude, ", ")
		}
	} else if cfg != nil && cfg.Projected() {
		view = "the step's projected view"
	}
	fmt.Fprintf(w, "  view: %s (%d tokens, sha256 %.12s)\n", view, s.ViewTokens, s.ViewDigest)
	if c != nil && step != nil {
		var hidden, shown []string
		for _, sec := range c.Secrets {
			if cfg != nil && cfg.Projected() && !step.Contract.ViewRegion().Visible(sec.Path) {
				hidden = append(hidden, sec.ID+" "+sec.Path.String())
			} else {
				shown = append(shown, sec.ID+" "+sec.Path.String())
			}
		}
		if len(hidden) > 0 {
			fmt.Fprintf(w, "  secrets hidden from the view: %s\n", strings.Join(hidden, "; "))
		}
		if len(shown) > 0 {
			fmt.Fprintf(w, "  secrets in the view: %s\n", strings.Join(shown, "; "))
		}
	}
	for k, e := range s.Earlier {
		fmt.Fprintf(w, "  attempt %d: rejected\n", k+1)
		writeDecisions(w, "    decisions", e.Decisions)
		writeDecisions(w, "    audit", e.Audit)
	}
	if s.Attempts == 0 {
		return
	}
	if len(s.Patch) > 0 {
		fmt.Fprintf(w, "  patch (%s):\n", plural(len(s.Patch), "operation"))
		for _, op := range s.Patch {
			fmt.Fprintf(w, "    %s\n", opText(op))
		}
	} else {
		fmt.Fprintln(w, "  patch: none decoded (malformed)")
	}
	writeDecisions(w, "  decisions", s.Decisions)
	if sameGates(s.Decisions, s.Audit) {
		fmt.Fprintln(w, "  audit: the same (the configuration runs the step's full contract)")
	} else {
		writeDecisions(w, "  audit", s.Audit)
	}
	for _, ic := range r.IllegalCommits {
		if ic.Step == s.Step {
			fmt.Fprintf(w, "  ILLEGAL COMMIT: %s %s%s\n", ic.Gate, ic.Code, pointerSuffix(ic.Pointer))
		}
	}
	text := s.RawResponse
	marked, n := markLeaks(text, det)
	fmt.Fprintf(w, "  response (%d bytes%s):\n", len(text), leakCount(n))
	for _, line := range strings.Split(strings.TrimRight(marked, "\n"), "\n") {
		fmt.Fprintf(w, "    | %s\n", line)
	}
}

// opText is an operation as one line of JSON with its members in the
// order RFC 6902 writes them: op, from, path, value.
func opText(op runtime.Operation) string {
	q := func(v any) string {
		b, err := runtime.EncodeIndent(v, "")
		if err != nil {
			return fmt.Sprint(v)
		}
		return string(b)
	}
	s := `{"op":` + q(op.Op)
	if op.Op == runtime.OpMove || op.Op == runtime.OpCopy {
		s += `,"from":` + q(op.From.String())
	}
	s += `,"path":` + q(op.Path.String())
	switch op.Op {
	case runtime.OpAdd, runtime.OpReplace, runtime.OpTest:
		s += `,"value":` + q(op.Value)
	}
	return s + "}"
}

func leakCount(n int) string {
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("; %s marked >>> <<<", plural(n, "leak"))
}

func pointerSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " at " + p
}

// sameGates reports whether two lists of gate results are equal.
func sameGates(a, b []runtime.GateResult) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// writeDecisions prints gate results on one line: gate ok, or gate CODE
// at pointer: message.
func writeDecisions(w io.Writer, label string, gs []runtime.GateResult) {
	if len(gs) == 0 {
		return
	}
	var parts []string
	var fails []string
	for _, g := range gs {
		if g.Passed {
			parts = append(parts, g.Gate+" ok")
			continue
		}
		parts = append(parts, g.Gate+" "+g.Code)
		fails = append(fails, fmt.Sprintf("%s %s%s: %s", g.Gate, g.Code, pointerSuffix(g.Pointer), g.Message))
	}
	fmt.Fprintf(w, "%s: %s\n", label, strings.Join(parts, ", "))
	for _, f := range fails {
		fmt.Fprintf(w, "%s    %s\n", strings.Repeat(" ", len(label)-len(strings.TrimLeft(label, " "))), f)
	}
}

// markLeaks surrounds each place a canary is found with >>> and <<<,
// naming the secret and the detector, and returns the marked text and the
// number of places.
func markLeaks(text string, det *scoring.Detector) (string, int) {
	if det == nil {
		return text, 0
	}
	spans := det.Spans(text)
	var b strings.Builder
	at, n := 0, 0
	for _, sp := range spans {
		if sp.Start < at {
			continue // overlaps a span already marked
		}
		b.WriteString(text[at:sp.Start])
		fmt.Fprintf(&b, ">>>%s<<<[%s, %s]", text[sp.Start:sp.End], sp.Secret, sp.Detector)
		at = sp.End
		n++
	}
	b.WriteString(text[at:])
	return b.String(), n
}
