package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"golang.org/x/term"
)

// execute opens the run directory (resuming what it holds), does the
// runs with their progress on standard error, records how the session
// ended in the manifest, and reports. Its error is for exitCode under
// the name run; actors.ErrNoToolCalled says the only run was left
// undone, not recorded, since its agent called no tool (patchbench mcp).
func execute(ctx context.Context, p *runPlan, retryErrors bool, format string, stdout, stderr io.Writer) error {
	d, err := runner.OpenDir(p.dir, p.manifest, retryErrors)
	if err != nil {
		return err
	}
	p.opts.TokensSpent = d.TokensSent
	if len(d.Skip) > 0 && nothingToDo(p, d.Skip) {
		fmt.Fprintf(stderr, "patchbench run: nothing to do: every run of %s is recorded (--retry-errors redoes the error runs); the tables below are the directory's\n", p.dir)
	}
	if len(p.opts.Scales) > 1 {
		fmt.Fprintf(stderr, "patchbench run: %s at the scales %s (a case that does not grow runs once, at 1x)\n",
			report.Plural(len(p.opts.Jobs()), "run"), strings.ReplaceAll(p.manifest.Scale, ",", ", "))
	}
	tty, width := terminal(stderr)
	prog := startProgress(stderr, tty, width, p.progressEvery)
	p.opts.Progress = prog.update
	p.opts.EndpointDown = func(e *actors.EndpointDownError) {
		prog.say("patchbench run: %v; no more requests are sent to it, and no more of its runs are started", e)
	}
	p.cacheFailures.setSay(prog.say)
	sink := &summingSink{d: d, sum: report.NewSummarizer(p.opts.Configs, p.manifest.Actors)}
	runErr := runner.Run(ctx, p.opts, d.Skip, sink)
	prog.finish()
	end, err := d.End(runErr)
	if end.TokenBudgetSpent {
		fmt.Fprintf(stderr, "patchbench run: the token budget (--max-tokens-total %d) is spent; the runs not done are left for a later run\n", p.opts.MaxTokensTotal)
	}
	if err != nil {
		if end.Err != nil && !errors.Is(end.Err, context.Canceled) {
			exitCode(stderr, "run", end.Err) // what failed first
		}
		return fmt.Errorf("%v; %s still marks the session interrupted (as it has since the session started); fix the cause, then run the same command again", err, rundir.ManifestFile)
	}
	if end.NoToolCalled {
		return actors.ErrNoToolCalled // patchbench mcp's client only looked: nothing to report
	}
	var fatal *runner.FatalError
	if errors.As(end.Err, &fatal) {
		return fmt.Errorf("stopped: %s (the run is recorded in %s; fix the cause and run the same command with --retry-errors)", textcut.OneLine(fatal.Error()), p.dir)
	}
	if end.Err != nil && !errors.Is(end.Err, context.Canceled) {
		return fmt.Errorf("%v; the runs recorded so far are kept and the manifest marks the session interrupted; fix the cause, then run the same command again", end.Err)
	}
	return finish(p, sink, end, format, stdout, stderr)
}

// summingSink records each run in the session's directory, then sums it
// for summary.json, in the order of the file.
type summingSink struct {
	mu  sync.Mutex
	d   *runner.DirSession
	sum *report.Summarizer
}

// Write records r (DirSession.Write), then adds it to the summary.
func (s *summingSink) Write(r *rundir.Record) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.d.Write(r); err != nil {
		return err
	}
	s.sum.Add(r)
	return nil
}

// summary sums the directory's runs (the last record of each; read back
// unless every record is this session's), writes summary.json with the
// runs expected and whether every one has an outcome, and returns the
// summary and the totals.
func (s *summingSink) summary(configs []*bench.Config) (report.Summary, runner.Totals, error) {
	d := s.d
	sum, t := s.sum, d.Totals()
	if !d.Fresh() {
		sum, t = report.NewSummarizer(configs, d.Manifest.Actors), runner.Totals{Pending: map[string]int{}}
		err := rundir.Latest(filepath.Join(d.Dir, rundir.RunsFile), func(r *rundir.Record) error {
			sum.Add(r)
			t.Add(r)
			return nil
		})
		if err != nil {
			return report.Summary{}, t, err
		}
	}
	summary := sum.Summary()
	summary.RunsExpected, summary.Complete = d.Manifest.ExpectedRuns, t.Outcomes >= d.Manifest.ExpectedRuns
	if err := rundir.WriteJSON(d.Dir, rundir.SummaryFile, summary); err != nil {
		return report.Summary{}, t, err
	}
	return summary, t, nil
}

// terminal reports whether w is a terminal, and its width in columns.
func terminal(w io.Writer) (bool, int) {
	f, ok := w.(*os.File)
	if !ok || !term.IsTerminal(int(f.Fd())) {
		return false, 0
	}
	width, _, err := term.GetSize(int(f.Fd()))
	if err != nil || width <= 0 {
		width = 80
	}
	return true, width
}

// cacheFailures counts the answers the response cache could not keep (a
// full disk, a directory that cannot be written): the first is said at
// once, the count at the end. The runs keep those answers in their
// records.
type cacheFailures struct {
	mu    sync.Mutex
	n     int
	first error
	say   func(format string, a ...any)
}

func (c *cacheFailures) setSay(say func(format string, a ...any)) {
	c.mu.Lock()
	c.say = say
	c.mu.Unlock()
}

// add counts one failure (actors.BuildOptions.OnCacheWriteError).
func (c *cacheFailures) add(err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.n++
	if c.n == 1 {
		c.first = err
		if c.say != nil {
			c.say("patchbench run: warning: an answer could not be kept in the response cache (%v); the run records it all the same", err)
		}
	}
}

// finish reads the directory back (the last record of each run), writes
// summary.json, prints the tables and says what the directory holds. It
// returns an error (exit 2) for an interrupted session and an exitErr of
// exitIncomplete while the work is not done: a run ended in an error,
// waits for a file actor's answer, or was not run (an endpoint down, the
// token budget spent); complete in summary.json is true only when every
// expected run has an outcome.
func finish(p *runPlan, s *summingSink, end runner.Ending, format string, stdout, stderr io.Writer) error {
	summary, t, err := s.summary(p.opts.Configs)
	if err != nil {
		return err
	}
	if format == "json" {
		b, _ := json.MarshalIndent(summary, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
	} else {
		o := report.RenderOptions{Width: textWidth(stdout, false)}
		report.RenderText(stdout, report.MainTable(summary), o)
		for _, t := range []report.Table{report.AttackTable(summary), report.ToolsTable(summary)} {
			if len(t.Rows) > 0 {
				fmt.Fprintf(stdout, "\n%s\n", t.Title)
				report.RenderText(stdout, t, o)
			}
		}
	}
	if end.Interrupted() {
		return fmt.Errorf("interrupted; %d runs are in %s; run the same command again to resume", t.Runs, p.dir)
	}
	if t.Errors > 0 {
		fmt.Fprintf(stderr, "patchbench run: %d of %s ended in an error (--retry-errors redoes them); the first: %s\n", t.Errors, report.Plural(t.Runs, "run"), textcut.OneLine(t.FirstError))
	}
	if down := end.Down; down != nil {
		names := make([]string, len(down.Endpoints))
		for i, e := range down.Endpoints {
			names[i] = e.Redacted()
		}
		fmt.Fprintf(stderr, "patchbench run: %s not started (unreachable: %s); once the server answers, run the same command with --retry-errors to do them and redo the error runs\n",
			report.PluralOf(down.NotStarted, "run was", "runs were"), strings.Join(names, ", "))
	}
	if c := p.cacheFailures; c != nil && c.n > 0 {
		fmt.Fprintf(stderr, "patchbench run: %s could not be kept in the response cache (the first: %v); the runs recorded them\n", report.PluralOf(c.n, "answer", "answers"), c.first)
	}
	fmt.Fprintf(stderr, "run directory: %s (%s)\n", p.dir, report.Plural(t.Runs, "run"))
	if t.Runs > t.Settled {
		waiting(p.acts, t, stderr)
	}
	if t.Outcomes < p.manifest.ExpectedRuns {
		return &exitErr{code: exitIncomplete, err: fmt.Errorf("the work is not done: %d of %d expected runs have an outcome (exit %d)", t.Outcomes, p.manifest.ExpectedRuns, exitIncomplete)}
	}
	return nil
}

// waiting says, for each file actor with pending runs, how many requests
// wait for an answer and where the answers go.
func waiting(acts []actors.Actor, t runner.Totals, stderr io.Writer) {
	for _, a := range acts {
		f, ok := actors.Unnamed(a).(*actors.Files)
		if !ok || t.Pending[a.Name()] == 0 {
			continue
		}
		mine := t.Pending[a.Name()]
		n, _, err := actors.PendingRequests(f.Dir())
		if err != nil {
			fmt.Fprintf(stderr, "patchbench run: %v\n", err)
			continue
		}
		verb := "wait"
		if mine == 1 {
			verb = "waits"
		}
		fmt.Fprintf(stderr, "patchbench run: %s of actor %s %s for an answer (%s in %s); write each answer to %s/<key>.txt (\"patchbench pending %s\" lists them), then run the same command again\n",
			report.PluralOf(mine, "run", "runs"), a.Name(), verb, report.Plural(len(n), "request"), filepath.Join(f.Dir(), actors.FilesPending), filepath.Join(f.Dir(), actors.FilesAnswers), f.Dir())
	}
}
