// Command patchbench runs the PatchBench benchmark and the PatchOptic
// verifier from the command line (docs/commands.md).
//
// Usage:
//
//	patchbench <command> [flags]
//
// Run "patchbench help" for the list of commands, and
// "patchbench <command> -h" for one command's flags and examples.
//
// The command holds flags, wiring and exit codes only, one file per
// subcommand; the work is done by the library packages (bench,
// check, actors, runtime, runner, scoring, rundir, report).
package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"
)

func main() {
	os.Exit(runSignals(os.Args[1:], os.Stdout, os.Stderr, interruptGrace))
}

// interruptGrace is how long a command may take to stop cleanly after
// the first SIGINT or SIGTERM (5 s: run writes its manifest, an exec
// actor's programs are killed) before the process ends without it.
const interruptGrace = 5 * time.Second

// runSignals runs a command (run) so that it can be interrupted at any
// point: the first SIGINT or SIGTERM cancels its context, which asks for a
// clean stop; a second signal then ends the process at once (the default
// handling), and so does the end of grace, with exitUsage and a line on
// stderr, if the command has not returned by then (a read that does not
// watch the context).
func runSignals(args []string, stdout, stderr io.Writer, grace time.Duration) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, stdout, stderr) }()
	select {
	case code := <-done:
		return code
	case <-ctx.Done():
	}
	stop()
	select {
	case code := <-done:
		return code
	case <-time.After(grace):
		fmt.Fprintf(stderr, "patchbench: interrupted; the command did not stop within %v, so it is stopped as it is\n", grace)
		return exitUsage
	}
}

// Exit codes, the same for every command (docs/commands.md).
const (
	exitOK       = 0 // success
	exitNegative = 1 // a negative result that was asked for (a rejected patch, a regression)
	exitUsage    = 2 // bad usage or bad input
	// exitIncomplete: run did not get the work done: a run ended in an
	// error, waits for an answer (pending, the file actor) or was not run
	// (an endpoint down, the token budget spent). The same command again
	// continues (with --retry-errors to redo the error runs).
	exitIncomplete = 3
)

// command is one subcommand: a one-line summary and its entry point.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"view":      {"print the projected view of a state under a step contract", runView},
	"verify":    {"check one proposal against a step contract and a state", runVerify},
	"validate":  {"check a case set: format, secrets, reference run, artifacts", runValidate},
	"cases":     {"list the cases of a case set", runCases},
	"footprint": {"footprints, delegations and commutation certificates of the steps", runFootprint},
	"run":       {"run the benchmark: cases x configurations x actors x rounds, then the tables", runRun},
	"stress":    {"the no-model stress test: every artifact against every configuration", runStress},
	"report":    {"tables of a run directory: " + strings.Join(reportFormats, ", ") + " (the runs' pages in one file)", runReport},
	"browse":    {"the runs of run directories in the web browser (a local server)", runBrowse},
	"compare":   {"the regression gate: every figure of two run directories, paired; exit 1 when one got worse", runCompare},
	"merge":     {"merge the shard directories of one run", runMerge},
	"show":      {"one run of a run directory as a readable trace", runShow},
	"pending":   {"the requests of a file actor that wait for an answer", runPending},
	"mcp":       {"serve one case over MCP (stdio) to an agent; the run is recorded as actor mcp:stdio", runMCP},
	"repair":    {"make a damaged run directory readable, keeping every intact record", runRepair},
	"version":   {"the module version and VCS revision of this binary", runVersion},
	"plan":      {"print the plan a run command line amounts to, or check a plan file", runPlanCmd},
}

// run dispatches to a subcommand and returns the process exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return exitUsage
	}
	name := args[0]
	switch name {
	case "help", "-h", "-help", "--help":
		if len(args) > 1 {
			if c, ok := commands[args[1]]; ok {
				return c.run(ctx, []string{"-h"}, stdout, stderr)
			}
		}
		usage(stdout)
		return exitOK
	case "--version", "-version":
		return runVersion(ctx, args[1:], stdout, stderr)
	}
	c, ok := commands[name]
	if !ok {
		fmt.Fprintf(stderr, "patchbench: unknown command %q\n\n", name)
		usage(stderr)
		return exitUsage
	}
	return c.run(ctx, args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprint(w, "patchbench: the PatchBench benchmark and the PatchOptic verifier\n\nUsage:\n  patchbench <command> [flags]\n\nCommands:\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprint(w, `
Examples:
  # The benchmark on the embedded cases with the no-model actors, then the stress test:
  patchbench run
  patchbench stress

  # Check the embedded case suite, list its cases, show their footprints:
  patchbench validate
  patchbench cases --domain finance
  patchbench footprint --case fin-payment-run-approval

  # What a step's actor sees of the state:
  patchbench view --state state.json --contract step.yaml

  # Verify a proposal with PatchOptic's gates (exit 0 committed, 1 rejected):
  patchbench verify --state state.json --contract step.yaml --patch proposal.json --phase review

Run "patchbench <command> -h" for a command's flags and examples;
"patchbench --version" prints the version and VCS revision.
`)
}
