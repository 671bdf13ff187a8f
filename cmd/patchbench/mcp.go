package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/tools"
)

const mcpExamples = `  # Serve a case to an MCP client over standard input and output: an
  # assistant started with this command line does the case's steps through
  # the tools (read_state, query_state, search_state, propose_patch); the run
  # is recorded as actor mcp:stdio:
  patchbench mcp --case sup-example-refund --cases bench/testdata/example --out results/mcp

  # The same case in the full-state configuration without gates, the view
  # given as an outline that the assistant reads on:
  patchbench mcp --case fin-invoice-dispute --config unconstrained --disclosure progressive

  # Its scores, once the assistant is done:
  patchbench show --out results/mcp sup-example-refund/patchoptic/mcp:stdio/1

  # An MCP client configuration (Claude Desktop, an IDE) that starts it:
  #   {"mcpServers": {"patchbench": {"command": "patchbench",
  #     "args": ["mcp", "--case", "sup-tier-escalation", "--out", "/tmp/pb-mcp"]}}}
  # A session in which the client calls no tool (it only lists them)
  # records nothing. Once /tmp/pb-mcp holds the run the command refuses
  # (exit 2): give another --out, or remove the directory, to serve the
  # case again.
`

// runMCP serves one case over MCP on standard input and output (the
// official SDK, github.com/modelcontextprotocol/go-sdk): the tools of the
// tools protocol, the current step's task as the prompt "task" and in
// the server's instructions, the steps in order. The run is a run like
// any other (the run command's machinery, its directory, manifest and
// resume), of the actor mcp:stdio; the tables go to standard error, since
// standard output is the protocol's. A session in which the client called
// no tool records nothing (exit 0), so that a client that starts the
// server only to list its tools does not use the run up; a directory that
// holds the run already is refused before anything is served (exit 2).
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", "patchbench mcp --case ID [--config NAME] [--cases DIR] [--out DIR] [flags]", mcpExamples, stdout, stderr)
	caseID := fs.String("case", "", "the `id` of the case to serve (required)")
	config := fs.String("config", "patchoptic", "the configuration `name`")
	cases := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	out := fs.String("out", "", "the run `dir` (default results/run-<hash of the settings>)")
	disclosure := fs.String("disclosure", runner.DisclosureWhole, "what the task shows: whole (the view) or progressive (an outline)")
	maxAttempts := fs.Int("max-attempts", 3, "`n` proposals per step")
	maxToolCalls := fs.Int("max-tool-calls", runner.DefaultMaxToolCalls, "the tool calls per step (`n`)")
	scale := fs.String("scale", "1x", "the `size` the case's state is grown to: 1x (as written) or 1MB, 10MB, ... (see docs/cases.md)")
	scaleSeed := fs.Int64("scale-seed", 1, "the `seed` the grown state is generated from")
	maxResult := fs.Int("max-result-bytes", tools.DefaultResultBytes, "the longest tool result in `bytes`; a longer one is a page that says how to read on")
	contextTokens := fs.Int("context-tokens", runner.DefaultContextTokens, "the client's context budget in `tokens`: a result that would pass it is refused and the step ends context_exceeded")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	if *caseID == "" {
		return fs.usageError("--case is required")
	}
	rargs := []string{"--case", *caseID, "--config", *config, "--protocol", runner.ProtocolTools, "--disclosure", *disclosure,
		"--max-attempts", strconv.Itoa(*maxAttempts), "--max-tool-calls", strconv.Itoa(*maxToolCalls), "--progress", "0", "--actor", "reference",
		"--scale", *scale, "--scale-seed", strconv.FormatInt(*scaleSeed, 10),
		"--max-result-bytes", strconv.Itoa(*maxResult), "--context-tokens", strconv.Itoa(*contextTokens)}
	if *cases != "" {
		rargs = append(rargs, "--cases", *cases)
	}
	if *out != "" {
		rargs = append(rargs, "--out", *out)
	}
	rfs, f := newRunFlags(stderr, stderr)
	f.cmd = fs.Name()
	// A refusal names this command and its -h: the run flags are mcp's.
	if err := rfs.parse(rargs); err != nil {
		return fs.exit(err)
	}
	sh, err := f.check(stderr, os.Getenv)
	if err != nil {
		return fs.exit(err)
	}
	p, err := f.plan(stderr, sh, false)
	if err != nil {
		return fs.exit(err)
	}
	agent := &actors.MCPStdio{In: mcpStdin, Out: nopWriteCloser{stdout}, CaseID: *caseID, Config: *config, MaxAnswer: p.opts.MaxAnswerBytes, Log: stderr}
	p.acts = []actors.Actor{agent}
	p.opts.Actors = p.acts
	p.manifest = f.manifest(f.params(), p.opts)
	if *out == "" {
		p.dir = rundir.DefaultDir("results", p.manifest)
	}
	// A directory that holds the run has nothing to serve: say so before
	// a client waits on a session that answers nothing.
	if held := recordedRuns(p.dir, p.opts.Jobs()); held != "" {
		return failf(stderr, "mcp", "%s", heldRun(p.dir, held))
	}
	fmt.Fprintf(stderr, "patchbench mcp: serving case %s (%s) on standard input and output; the run goes to %s\n", *caseID, *config, p.dir)
	err = execute(ctx, p, false, "text", stderr, stderr)
	switch {
	case errors.Is(err, actors.ErrNoToolCalled):
		fmt.Fprintf(stderr, "patchbench mcp: no tool was called; nothing recorded (the run stays to do in %s)\n", p.dir)
		err = nil
	case err == nil && !agent.Served():
		err = errors.New(heldRun(p.dir, p.opts.Jobs()[0].RunID())) // recorded by another process meanwhile
	}
	code := fs.exit(err)
	agent.Wait() // the client may go on asking until it closes the session
	return code
}

// recordedRuns returns the id of the first of jobs that the run directory
// dir holds a record of, or "" when it holds none of them (or cannot be
// read: the session that opens it then says why).
func recordedRuns(dir string, jobs []runner.Job) string {
	want := map[string]bool{}
	for _, j := range jobs {
		want[j.RunID()] = true
	}
	found := ""
	rundir.Latest(filepath.Join(dir, rundir.RunsFile), func(r *rundir.Record) error {
		if want[r.RunID] {
			found = r.RunID
			return errStopReading
		}
		return nil
	})
	return found
}

// errStopReading ends a read of a directory's records early.
var errStopReading = errors.New("stop")

// heldRun says that dir holds run id already, so that patchbench mcp
// has nothing to serve, and what to do instead.
func heldRun(dir, id string) string {
	return fmt.Sprintf("%s holds run %s already (an earlier session recorded it), so there is nothing to serve; give another --out, or remove %s, to serve the case again", dir, id, dir)
}

// mcpStdin is what patchbench mcp reads the client from (tests replace
// it).
var mcpStdin io.ReadCloser = os.Stdin

// nopWriteCloser is a writer with a Close that does nothing: standard
// output stays open for the command's last words.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
