package report

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// WriteTrace writes one run as a readable trace (patchbench show): the
// case, configuration, actor and outcome; per step, the phase, the view
// with the secrets it shows or hides, the injections planted for it, the
// rejected earlier attempts, the decoded patch, the enforcing decisions and
// the audit's (ILLEGAL COMMIT where the audit rejects a commit), the
// response and what the actor reported besides it (model, fingerprint,
// usage not believed, standard error), with each leaked canary marked
// >>>…<<<[secret, detector], in the run's error too; then
// every rubric check and every leak. c and cfg may be nil when the run's
// case or configuration cannot be had: the trace is then written from the
// record alone. c is the case as the run met it: grown to its scale and
// worded by its attack (rundir.Manifest.RunCase). Control characters an
// actor sent are not escaped here (Printable does that). o says what is
// known beyond the run, its case and its configuration.
func WriteTrace(w io.Writer, r *rundir.Record, c *bench.Case, cfg *bench.Config, o TraceOptions) {
	t := &trace{w: w, r: r, c: c, cfg: cfg, o: o}
	if c != nil {
		t.det = scoring.NewDetector(scoring.Canaries(c))
	}
	t.header()
	for i := range r.Steps {
		t.step(i, &r.Steps[i])
	}
	t.checks()
	t.leaks()
}

// TraceOptions are what WriteTrace is told beyond the run, its case
// and its configuration.
type TraceOptions struct {
	// NoInjectionTexts, when not "", says why the texts the run's attack
	// planted at the injection sites are not known (the attack's
	// template could not be had): c holds the case's own texts there,
	// which are not the run's, so the injections are written without
	// their texts, saying why.
	NoInjectionTexts string
}

// trace writes one record.
type trace struct {
	w   io.Writer
	r   *rundir.Record
	c   *bench.Case
	cfg *bench.Config
	det *scoring.Detector
	o   TraceOptions
}

func (t *trace) printf(format string, a ...any) { fmt.Fprintf(t.w, format, a...) }

// header writes the run's id, case, configuration, actor, outcome, error,
// tokens and attack (named when it is not the default).
func (t *trace) header() {
	r := t.r
	t.printf("run %s\n", r.RunID)
	if t.c != nil {
		t.printf("case %s (%s): %s\n", r.Case, r.Domain, t.c.Title)
	} else {
		t.printf("case %s (%s)\n", r.Case, r.Domain)
	}
	cfgText := r.Config
	if cfg := t.cfg; cfg != nil {
		gates := "none"
		if len(cfg.Gates) > 0 {
			gates = strings.Join(cfg.Gates, ", ")
		}
		view := "full state"
		if cfg.View == bench.ViewProjected {
			view = "step's projected view"
		}
		cfgText = fmt.Sprintf("%s (%s; the actor sees the %s; gates: %s)", cfg.Label, r.Config, view, gates)
	}
	t.printf("configuration %s\nactor %s, round %d\n", cfgText, r.Actor, r.Round)
	t.printf("status %s\n", OutcomeText(r))
	if r.Error != nil {
		msg, _ := markLeaks(*r.Error, t.det)
		t.printf("error: %s\n", msg)
	}
	t.printf("tokens %d (prompt %d, completion %d; %s)\n", r.Tokens.Prompt+r.Tokens.Completion, r.Tokens.Prompt, r.Tokens.Completion, r.Tokens.Source)
	if r.Attack != nil {
		won := "did not succeed"
		if r.Attack.Succeeded {
			won = "succeeded"
		}
		name := ""
		if r.AttackName != "" {
			name = " (" + r.AttackName + ")"
		}
		t.printf("attack%s: the injections ask for %s; the attack %s\n", name, strings.Join(r.Attack.Secrets, ", "), won)
	}
}

// OutcomeText sums a run's outcome up: its status, and for a run with an
// outcome (passed or failed) what it leaked, its illegal commits, its
// content score and its passes, as patchbench show and browse print it:
// "failed: leaked; 1 illegal commit; content 0.500; semantic pass no;
// legal pass no". An error or pending run is its status alone.
func OutcomeText(r *rundir.Record) string {
	if !r.HasOutcome() {
		return r.Status
	}
	var parts []string
	if r.Leaked {
		parts = append(parts, "leaked")
	}
	if n := len(r.IllegalCommits); n > 0 {
		parts = append(parts, Plural(n, "illegal commit"))
	}
	parts = append(parts, fmt.Sprintf("content %.3f", r.ContentScore), "semantic pass "+YesNo(r.SemanticPass), "legal pass "+YesNo(r.LegalPass))
	return r.Status + ": " + strings.Join(parts, "; ")
}

// YesNo writes a flag as "yes" or "no".
func YesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// step writes the i-th step of the run.
func (t *trace) step(i int, s *rundir.StepRecord) {
	var st *bench.Step
	if t.c != nil {
		st = t.c.Step(s.Step)
	}
	role := ""
	if st != nil {
		role = fmt.Sprintf(" (role %s)", st.Role)
	}
	if s.NotReached {
		t.printf("\nstep %d %s%s: not reached: the workflow stayed in phase %s, where the step may not commit (an earlier step did not commit); its checks fail\n", i+1, s.Step, role, s.Phase)
		return
	}
	what := "rejected"
	switch {
	case s.Committed:
		what = "committed"
	case s.Attempts == 0:
		what = "no answer"
	}
	if !s.Committed && s.Ended != "" && len(s.Turns) == 0 {
		// A step that ended before any turn (the json protocol's
		// context_exceeded; an agent gone before its first call): the
		// conversation, which says how a step ended, is not written.
		what += " (ended without a commit: " + s.Ended + ")"
	}
	t.printf("\nstep %d %s%s, phase %s: %s after %s\n", i+1, s.Step, role, s.Phase, what, Plural(s.Attempts, "attempt"))
	t.view(s, st)
	t.injections(s.Step)
	t.conversation(s)
	for k, e := range s.Earlier {
		t.printf("  attempt %d: rejected\n", k+1)
		writeDecisions(t.w, "    decisions", e.Decisions)
		writeDecisions(t.w, "    audit", e.Audit)
		t.response("    ", e.RawResponse)
		t.reported("    ", e.Model, e.Fingerprint, e.UsageInvalid, e.ActorStderr)
	}
	if len(s.Earlier) > 0 && s.Attempts > 0 {
		t.printf("  attempt %d:\n", s.Attempts)
	}
	if s.Attempts > 0 {
		t.last(s)
	}
}

// conversation writes the turns of a step of the tools protocol: each
// turn's model, text and tool calls (what the actor sent, its leaks
// marked), a read with its pointer and whether it lay
// inside the view (a hidden location, answered as absent, says so), a
// proposal with its arguments, and each result (the tool's answer: an
// input of the actor, not marked for leaks).
func (t *trace) conversation(s *rundir.StepRecord) {
	if len(s.Turns) == 0 {
		return
	}
	ended := ""
	if s.Ended != "" {
		ended = "; ended without a commit: " + s.Ended
	}
	t.printf("  conversation (%s%s):\n", Plural(len(s.Turns), "turn"), ended)
	for k, turn := range s.Turns {
		cached := ""
		if turn.Cached {
			cached = ", cached"
		}
		if turn.Model != "" {
			model, _ := markLeaks(turn.Model, t.det)
			cached += ", model " + model
		}
		t.printf("  turn %d (%d prompt + %d completion tokens%s, request sha256 %.12s):\n", k+1, turn.Tokens.Prompt, turn.Tokens.Completion, cached, turn.RequestDigest)
		if turn.Text != "" || turn.TextBytes > 0 {
			t.block("    ", "text", turn.Text)
		}
		for _, c := range turn.Calls {
			switch {
			case c.Read:
				where := "inside the view"
				switch {
				case c.Hidden:
					where = "HIDDEN from the view: answered as absent"
				case c.Error != "":
					where = "absent"
				}
				pointer, _ := markLeaks(c.Pointer, t.det)
				name, _ := markLeaks(truncateText(c.Name, 80), t.det)
				t.printf("    %s %q: %s\n", Printable(name), Printable(pointer), where)
			default:
				name, _ := markLeaks(truncateText(c.Name, 80), t.det)
				t.printf("    %s:\n", Printable(name))
				t.block("      ", "arguments", c.Arguments)
			}
			lines := strings.Split(Printable(truncateText(c.Result, 600)), "\n")
			t.printf("      result: %s\n", lines[0])
			for _, l := range lines[1:] {
				t.printf("        %s\n", l)
			}
		}
		if turn.DroppedCalls > 0 {
			t.printf("    %s not run: the step was over\n", Plural(turn.DroppedCalls, "more call"))
		}
	}
}

// view writes what the step's actor was shown: the whole state or the
// projection's patterns, its size and digest, and the secrets it shows or
// hides.
func (t *trace) view(s *rundir.StepRecord, st *bench.Step) {
	projected := t.cfg != nil && t.cfg.Projected()
	view := "the full state"
	if projected && st != nil {
		view = "projected: include " + strings.Join(st.Spec.View.Include, ", ")
		if len(st.Spec.View.Exclude) > 0 {
			view += "; exclude " + strings.Join(st.Spec.View.Exclude, ", ")
		}
	} else if projected {
		view = "the step's projected view"
	}
	tokens := fmt.Sprintf("%d tokens", s.ViewTokens)
	if s.ViewTokensOver {
		tokens = "more than " + tokens // counted only until past the context budget
	}
	t.printf("  view: %s (%s, sha256 %.12s)\n", view, tokens, s.ViewDigest)
	if t.c == nil || st == nil {
		return
	}
	var hidden, shown []string
	for _, sec := range t.c.Secrets {
		if projected && !st.Contract.ViewRegion().Visible(sec.Path) {
			hidden = append(hidden, sec.ID+" "+sec.Path.String())
		} else {
			shown = append(shown, sec.ID+" "+sec.Path.String())
		}
	}
	if len(hidden) > 0 {
		t.printf("  secrets hidden from the view: %s\n", strings.Join(hidden, "; "))
	}
	if len(shown) > 0 {
		t.printf("  secrets in the view: %s\n", strings.Join(shown, "; "))
	}
}

// injections writes the prompt injections planted for the step: where,
// what they ask, how plausible, their text.
func (t *trace) injections(step string) {
	if t.c == nil {
		return
	}
	for _, inj := range t.c.StepInjections(step) {
		text := ""
		if t.o.NoInjectionTexts != "" {
			text = ": text not known (" + t.o.NoInjectionTexts + ")"
		} else if v, ok := t.c.State.Get(inj.At); ok {
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
		t.printf("  injection at %s (asks to %s%s)%s\n", inj.At, what, plaus, text)
	}
}

// last writes the step's last attempt: the patch (its leaks marked as
// the response's are), the decisions and the
// audit's, a phase that did not move, the illegal commits, the response.
func (t *trace) last(s *rundir.StepRecord) {
	switch {
	case len(s.Patch) > 0:
		// Each operation's leaks are marked as the response's are
		// (markLeaks), the count in the heading.
		var lines []string
		leaks := 0
		for _, op := range s.Patch {
			marked, n := markLeaks(opText(op), t.det)
			lines = append(lines, Printable(marked))
			leaks += n
		}
		note := ""
		if leaks > 0 {
			note = fmt.Sprintf("; %s marked >>> <<<", Plural(leaks, "leak"))
		}
		t.printf("  patch (%s%s):\n", Plural(len(s.Patch), "operation"), note)
		for _, line := range lines {
			t.printf("    %s\n", line)
		}
	case len(s.Decisions) > 0 && s.Decisions[0].Passed:
		t.printf("  patch: empty (no operation)\n")
	default:
		t.printf("  patch: none decoded (malformed)\n")
	}
	writeDecisions(t.w, "  decisions", s.Decisions)
	if slices.Equal(s.Decisions, s.Audit) {
		t.printf("  audit: the same (the configuration runs the step's full contract)\n")
	} else {
		writeDecisions(t.w, "  audit", s.Audit)
	}
	if s.PhaseError != "" {
		t.printf("  PHASE NOT MOVED: %s\n", s.PhaseError)
	}
	if s.InheritedViolation != "" {
		t.printf("  not an illegal commit of this step: the state before it already failed %s (an earlier commit or the case's initial state left it so, or the step did nothing)\n", s.InheritedViolation)
	}
	for _, ic := range t.r.IllegalCommits {
		if ic.Step == s.Step {
			t.printf("  ILLEGAL COMMIT: %s %s%s\n", ic.Gate, ic.Code, pointerSuffix(ic.Pointer))
		}
	}
	t.response("  ", s.RawResponse)
	t.reported("  ", s.Model, s.Fingerprint, s.UsageInvalid, s.ActorStderr)
}

// reported writes what an attempt's actor said besides its response, each
// with its leaks marked as the response's are: the model and system
// fingerprint its provider named, why its usage figures were not
// believed, and an exec program's standard error.
func (t *trace) reported(indent, model, fingerprint, usageInvalid, stderr string) {
	for _, f := range [][2]string{{"model", model}, {"system fingerprint", fingerprint}, {"usage not believed", usageInvalid}} {
		if f[1] != "" {
			marked, _ := markLeaks(f[1], t.det)
			t.printf("%s%s: %s\n", indent, f[0], marked)
		}
	}
	if stderr != "" {
		t.block(indent, "standard error", stderr)
	}
}

// response writes a raw response, its leaks marked, each line after
// indent and "| ".
func (t *trace) response(indent, text string) { t.block(indent, "response", text) }

// block writes a text the actor sent under a label, its leaks marked,
// each line after indent and "| ".
func (t *trace) block(indent, label, text string) {
	marked, n := markLeaks(text, t.det)
	marked = Printable(marked)
	leaks := ""
	if n > 0 {
		leaks = fmt.Sprintf("; %s marked >>> <<<", Plural(n, "leak"))
	}
	t.printf("%s%s (%d bytes%s):\n", indent, label, len(text), leaks)
	for _, line := range strings.Split(strings.TrimRight(marked, "\n"), "\n") {
		t.printf("%s  | %s\n", indent, line)
	}
}

// checks writes every rubric check and whether it held.
func (t *trace) checks() {
	r := t.r
	if len(r.Checks) == 0 {
		return
	}
	held := 0
	for _, k := range r.Checks {
		if k.Held {
			held++
		}
	}
	t.printf("\nrubric: %d of %d checks hold (content score %.3f)\n", held, len(r.Checks), r.ContentScore)
	rows := make([][]string, 0, len(r.Checks))
	for _, k := range r.Checks {
		mark := "FAIL"
		if k.Held {
			mark = "ok"
		}
		rows = append(rows, []string{"  " + mark, k.Step, k.ID, k.Path, k.Test})
	}
	WriteColumns(t.w, []string{"  held", "step", "check", "path", "test"}, rows)
}

// leaks writes every leak with its step or state path and detector.
func (t *trace) leaks() {
	t.printf("\n")
	if len(t.r.Leaks) == 0 {
		t.printf("leaks: none\n")
		return
	}
	t.printf("leaks: %d\n", len(t.r.Leaks))
	for _, l := range t.r.Leaks {
		t.printf("  %s in %s (%s%s)\n", l.Secret, l.Place(), l.Detector, LeakClass(l))
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

func pointerSuffix(p string) string {
	if p == "" {
		return ""
	}
	return " at " + p
}

// Printable replaces the control and format characters of an actor's
// text (but new lines and tabs; escapedRune) with \u escapes, so that
// what an actor sent cannot move the cursor, clear the screen, ring the
// bell or reorder the line (a right-to-left override) of the terminal or
// page it is shown on.
func Printable(s string) string {
	if strings.IndexFunc(s, escapedRune) < 0 {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if escapedRune(r) {
			fmt.Fprintf(&b, "\\u%04x", r)
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// escapedRune reports whether Printable escapes r: a C0 or C1 control
// character but new line and tab, DEL, a format character (Unicode Cf:
// the bidirectional overrides and isolates, U+202A-U+202E and
// U+2066-U+2069, which reorder a terminal's line, zero-width characters,
// soft hyphens), and the line and paragraph separators.
func escapedRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0):
		return true
	}
	return r == 0x2028 || r == 0x2029 || unicode.Is(unicode.Cf, r)
}

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

// LeakClass is a leak's kind and mechanism as a trace prints them after
// its detector ("; financial, injection pull"; "; personal-data, no pull"),
// or "" for a leak recorded without them.
func LeakClass(l scoring.Leak) string {
	if l.Kind == "" && l.Mechanism == "" {
		return ""
	}
	pull := l.Mechanism + " pull"
	switch l.Mechanism {
	case bench.MechanismNone:
		pull = "no pull"
	case "":
		pull = "mechanism unrecorded"
	}
	return fmt.Sprintf("; %s, %s", cmp.Or(l.Kind, Unrecorded), pull)
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
