package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"strconv"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

const mcpExamples = `  # Serve a case to an MCP client over standard input and output: an
  # assistant started with this command line does the case's steps through
  # read_state and propose_patch; the run is recorded as actor mcp:stdio:
  patchbench mcp --case sup-example-refund --cases bench/testdata/example --out results/mcp

  # The same case in the full-state configuration without gates, the view
  # given as an outline that the assistant reads on:
  patchbench mcp --case fin-invoice-dispute --config unconstrained --disclosure progressive

  # Its scores, once the assistant is done:
  patchbench show --out results/mcp sup-example-refund/patchoptic/mcp:stdio/1

  # An MCP client configuration (Claude Desktop, an IDE) that starts it:
  #   {"mcpServers": {"patchbench": {"command": "patchbench",
  #     "args": ["mcp", "--case", "sup-tier-escalation", "--out", "/tmp/pb-mcp"]}}}
`

// runMCP serves one case over MCP on standard input and output (the
// official SDK, github.com/modelcontextprotocol/go-sdk): the tools of the
// tools protocol, the current step's task as the prompt "task" and in
// the server's instructions, the steps in order. The run is a run like
// any other (the run command's machinery, its directory, manifest and
// resume), of the actor mcp:stdio; the tables go to standard error, since
// standard output is the protocol's.
func runMCP(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("mcp", "patchbench mcp --case ID [--config NAME] [--cases DIR] [--out DIR] [flags]", mcpExamples, stdout, stderr)
	caseID := fs.String("case", "", "the `id` of the case to serve (required)")
	config := fs.String("config", "patchoptic", "the configuration `name`")
	cases := fs.String("cases", "", "the case set `dir` (default: the embedded suite)")
	out := fs.String("out", "", "the run `dir` (default results/run-<hash of the settings>)")
	disclosure := fs.String("disclosure", runner.DisclosureWhole, "what the task shows: whole (the view) or progressive (an outline)")
	maxAttempts := fs.Int("max-attempts", 3, "`n` proposals per step")
	maxToolCalls := fs.Int("max-tool-calls", runner.DefaultMaxToolCalls, "the tool calls per step (`n`)")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	if *caseID == "" {
		return fs.usageError("--case is required")
	}
	rargs := []string{"--case", *caseID, "--config", *config, "--protocol", runner.ProtocolTools, "--disclosure", *disclosure,
		"--max-attempts", strconv.Itoa(*maxAttempts), "--max-tool-calls", strconv.Itoa(*maxToolCalls), "--progress", "0", "--actor", "reference"}
	if *cases != "" {
		rargs = append(rargs, "--cases", *cases)
	}
	if *out != "" {
		rargs = append(rargs, "--out", *out)
	}
	rfs, f := newRunFlags(stderr, stderr)
	if err := rfs.parse(rargs); err != nil {
		return rfs.exit(err)
	}
	sh, err := f.check(stderr, os.Getenv)
	if err != nil {
		return rfs.exit(err)
	}
	p, err := f.plan(stderr, sh, false)
	if err != nil {
		return rfs.exit(err)
	}
	agent := &actors.MCPStdio{In: mcpStdin, Out: nopWriteCloser{stdout}, CaseID: *caseID, Config: *config, MaxAnswer: p.opts.MaxAnswerBytes, Log: stderr}
	p.acts = []actors.Actor{agent}
	p.opts.Actors = p.acts
	p.manifest = f.manifest(f.params(), p.opts)
	if *out == "" {
		p.dir = rundir.DefaultDir("results", p.manifest)
	}
	fmt.Fprintf(stderr, "patchbench mcp: serving case %s (%s) on standard input and output; the run goes to %s\n", *caseID, *config, p.dir)
	code := rfs.exit(execute(ctx, p, false, "text", stderr, stderr))
	if !agent.Served() && code == exitOK {
		fmt.Fprintf(stderr, "patchbench mcp: %s holds this run already, so nothing was served; give another --out to serve the case again\n", p.dir)
	}
	agent.Wait() // the client may go on asking until it closes the session
	return code
}

// mcpStdin is what patchbench mcp reads the client from (tests replace
// it).
var mcpStdin io.ReadCloser = os.Stdin

// nopWriteCloser is a writer with a Close that does nothing: standard
// output stays open for the command's last words.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
