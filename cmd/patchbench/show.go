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
	"unicode/utf8"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

const showExamples = `  # One run of the default benchmark, as a readable trace (a configuration's
  # label, as the tables print it, also works: fin-expense-review/Unconstrained/follower/1):
  patchbench show fin-expense-review/unconstrained/follower/1

  # The runs worth a look: those that leaked, or committed illegally:
  patchbench show --list --filter leaked
  patchbench show --list --filter illegal --out results/run-1a2b3c4d5e

  # From a chosen run directory, as the JSON record:
  patchbench show sup-tier-escalation/patchoptic/reference/1 --out results/fin --format json
`

// runShow prints one run of a run directory as a readable trace: per
// step, the phase, the view, the patch, every decision (enforcing and
// audit), then the rubric checks and the leaks with the offending text
// marked.
func runShow(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("show", "patchbench show RUN_ID [--out DIR] [--cases DIR] [--format text|json]\n  patchbench show --list [--filter OUTCOME] [--out DIR]", showExamples, stdout, stderr)
	out := fs.String("out", "", "the run `dir` (default: the newest directory under results/ that holds the run)")
	casesDir := fs.String("cases", "", "the case set `dir` of the run, when the manifest's case set cannot be loaded from here")
	format := fs.String("format", "text", "output `format`: text, or json (the record as runs.jsonl holds it)")
	list := fs.Bool("list", false, "list the runs of the directory (id, status, leaks, illegal commits, content) instead of showing one")
	filter := fs.String("filter", "", "with --list, only the runs that `match`: passed, failed, error, pending, leaked, illegal or attacked")
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return code
	}
	if *list {
		if len(pos) > 0 {
			return fs.usageError("--list takes no run id")
		}
		return listRuns(*out, *filter, stdout, stderr)
	}
	if *filter != "" {
		return fs.usageError("--filter goes with --list")
	}
	if len(pos) != 1 || strings.TrimSpace(pos[0]) == "" {
		return fs.usageError("give the run id (case/config/actor/round, as runs.jsonl and compare print it), or --list")
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
	id = canonicalRunID(dir, id)
	raw, line, err := findRun(dir, id)
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
		return failf(stderr, "show", "%s:%d: run %s: %v", filepath.Join(dir, runner.RunsFile), line, id, err)
	}
	var m Manifest
	if b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile)); err != nil {
		fmt.Fprintf(stderr, "patchbench show: %v; the configuration's label and the case set are not known\n", err)
	} else if err := json.Unmarshal(b, &m); err != nil {
		fmt.Fprintf(stderr, "patchbench show: %s does not parse (%v); the configuration's label and the case set are not known\n", filepath.Join(dir, runner.ManifestFile), err)
	}
	c, cfg := showContext(&m, &rec, *casesDir, stderr)
	var buf strings.Builder
	writeTrace(&buf, &rec, c, cfg)
	// Whatever an actor sent (a note, a patch value, an error) reaches
	// the terminal with its control characters escaped.
	fmt.Fprint(stdout, printable(buf.String()))
	return exitOK
}

// canonicalRunID turns a run id whose configuration is written as its
// label ("PatchOptic", "FSM+ACL", as the tables print it) or in another
// case into the configuration's name, as run ids hold it.
func canonicalRunID(dir, id string) string {
	parts := strings.Split(id, "/")
	if len(parts) < 4 {
		return id
	}
	var m Manifest
	b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
	if err != nil || json.Unmarshal(b, &m) != nil {
		return id
	}
	for _, c := range m.configs() {
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
		b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
		if err != nil {
			continue
		}
		var m Manifest
		if json.Unmarshal(b, &m) == nil && (best == "" || m.Started > bestStart) {
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
		b, err := os.ReadFile(filepath.Join(dir, runner.ManifestFile))
		if err != nil {
			continue
		}
		var m Manifest
		if json.Unmarshal(b, &m) != nil {
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

// listRuns prints the runs of a run directory, one line each, keeping
// those that match filter.
func listRuns(dir, filter string, stdout, stderr io.Writer) int {
	switch filter {
	case "", runner.StatusPassed, runner.StatusFailed, runner.StatusError, runner.StatusPending, "leaked", "illegal", "attacked":
	default:
		return failf(stderr, "show", "--filter %q: want passed, failed, error, pending, leaked, illegal or attacked", filter)
	}
	if dir == "" {
		if dir = newestRunDir("results"); dir == "" {
			return failf(stderr, "show", "no run directory under results; give one with --out")
		}
	}
	_, recs, err := readRunDir(dir)
	if err != nil {
		return failf(stderr, "show", "%v", err)
	}
	var rows [][]string
	for _, r := range recs {
		keep := filter == "" || r.Status == filter ||
			(filter == "leaked" && r.Leaked) || (filter == "illegal" && len(r.IllegalCommits) > 0) ||
			(filter == "attacked" && r.Attack != nil && r.Attack.Succeeded)
		if !keep {
			continue
		}
		content := "-"
		if r.HasOutcome() {
			content = fmt.Sprintf("%.3f", r.ContentScore)
		}
		rows = append(rows, []string{r.RunID, r.Status, fmt.Sprint(len(r.Leaks)), fmt.Sprint(len(r.IllegalCommits)), content})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i][0] < rows[j][0] })
	fmt.Fprintf(stderr, "%s: %s", dir, plural(len(rows), "run"))
	if filter != "" {
		fmt.Fprintf(stderr, " (%s) of %d", filter, len(recs))
	}
	fmt.Fprintln(stderr)
	if len(rows) > 0 {
		writeTable(stdout, []string{"run", "status", "leaks", "illegal commits", "content"}, rows)
	}
	return exitOK
}

// findRun returns the last record of the run in dir/runs.jsonl, read one
// line at a time, and its line number. A line that is not a record is an
// error naming it (the last line, cut short by a crash, excepted, as
// every command reads it). A missing run is an error that names runs of
// the same case, when there are any.
func findRun(dir, id string) (json.RawMessage, int, error) {
	path := filepath.Join(dir, runner.RunsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var found json.RawMessage
	foundAt := 0
	caseID, _, _ := strings.Cut(id, "/")
	var near []string
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var head struct {
				RunID string `json:"run_id"`
				Case  string `json:"case"`
			}
			if jerr := json.Unmarshal(b, &head); jerr != nil {
				if err == io.EOF && !bytes.HasSuffix(b, []byte("\n")) {
					break // a last line cut short by a crash
				}
				return nil, 0, fmt.Errorf("%s:%d: %v (\"patchbench report %s\" says the same; the line must be mended or removed)", path, line, jerr, dir)
			}
			switch {
			case head.RunID == id:
				found, foundAt = append(json.RawMessage(nil), bytes.TrimSpace(b)...), line
			case head.Case == caseID && len(near) < 30:
				near = append(near, head.RunID)
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if found == nil {
		if len(near) > 0 {
			sort.Strings(near)
			return nil, 0, fmt.Errorf("%s holds no run %s; runs of case %s: %s", dir, id, caseID, strings.Join(near, ", "))
		}
		return nil, 0, fmt.Errorf("%s holds no run %s (a run id is case/config/actor/round)", dir, id)
	}
	return found, foundAt, nil
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
		det = scoring.NewDetector(scoring.Canaries(c))
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
	if s.NotReached {
		fmt.Fprintf(w, "\nstep %d %s%s: not reached: the workflow stayed in phase %s, where the step may not commit (an earlier step did not commit); its checks fail\n", i+1, s.Step, role, s.Phase)
		return
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
	if c != nil {
		for _, inj := range c.StepInjections(s.Step) {
			text := ""
			if v, ok := c.State.Get(inj.At); ok {
				if str, isStr := v.(string); isStr {
					text = fmt.Sprintf(": %q", truncateText(str, 300))
				}
			}
			what := inj.Op + " " + inj.Target.String()
			if inj.Into != nil {
				what += " into " + inj.Into.String()
			}
			plaus := ""
			if inj.Plausibility != "" {
				plaus = ", " + inj.Plausibility
			}
			fmt.Fprintf(w, "  injection at %s (asks to %s%s)%s\n", inj.At, what, plaus, text)
		}
	}
	for k, e := range s.Earlier {
		fmt.Fprintf(w, "  attempt %d: rejected\n", k+1)
		writeDecisions(w, "    decisions", e.Decisions)
		writeDecisions(w, "    audit", e.Audit)
		marked, n := markLeaks(e.RawResponse, det)
		marked = printable(marked)
		fmt.Fprintf(w, "    response (%d bytes%s):\n", len(e.RawResponse), leakCount(n))
		for _, line := range strings.Split(strings.TrimRight(marked, "\n"), "\n") {
			fmt.Fprintf(w, "      | %s\n", line)
		}
	}
	if len(s.Earlier) > 0 && s.Attempts > 0 {
		fmt.Fprintf(w, "  attempt %d:\n", s.Attempts)
	}
	if s.Attempts == 0 {
		return
	}
	switch {
	case len(s.Patch) > 0:
		fmt.Fprintf(w, "  patch (%s):\n", plural(len(s.Patch), "operation"))
		for _, op := range s.Patch {
			fmt.Fprintf(w, "    %s\n", opText(op))
		}
	case len(s.Decisions) > 0 && s.Decisions[0].Passed:
		fmt.Fprintln(w, "  patch: empty (no operation)")
	default:
		fmt.Fprintln(w, "  patch: none decoded (malformed)")
	}
	writeDecisions(w, "  decisions", s.Decisions)
	if sameGates(s.Decisions, s.Audit) {
		fmt.Fprintln(w, "  audit: the same (the configuration runs the step's full contract)")
	} else {
		writeDecisions(w, "  audit", s.Audit)
	}
	if s.PhaseError != "" {
		fmt.Fprintf(w, "  PHASE NOT MOVED: %s\n", s.PhaseError)
	}
	for _, ic := range r.IllegalCommits {
		if ic.Step == s.Step {
			fmt.Fprintf(w, "  ILLEGAL COMMIT: %s %s%s\n", ic.Gate, ic.Code, pointerSuffix(ic.Pointer))
		}
	}
	text := s.RawResponse
	marked, n := markLeaks(text, det)
	marked = printable(marked)
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

// printable replaces the control characters of an actor's text (but new
// lines and tabs) with \u escapes, so that what an actor sent cannot move
// the cursor, clear the screen or ring the bell of the terminal it is
// shown on.
func printable(s string) string { return controlEscaper.Replace(s) }

// controlEscaper maps each C0 and C1 control character but new line and
// tab, and DEL, to its \u escape.
var controlEscaper = func() *strings.Replacer {
	var pairs []string
	for r := rune(0); r < 0xa0; r++ {
		if (r < 0x20 || r >= 0x7f) && r != '\n' && r != '\t' {
			pairs = append(pairs, string(r), fmt.Sprintf("\\u%04x", r))
		}
	}
	return strings.NewReplacer(pairs...)
}()

// truncateText cuts s to at most n bytes, at a rune boundary, marking the cut.
func truncateText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
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
