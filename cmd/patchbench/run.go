package main

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

const runExamples = `  # The benchmark on the embedded cases, every configuration, the no-model actors:
  patchbench run

  # Three rounds of one domain with the reference actor, into a chosen directory:
  patchbench run --domain finance --actor reference --rounds 3 --out results/fin

  # The same command again resumes an interrupted run; --retry-errors also
  # redoes the runs that ended in an error:
  patchbench run --domain finance --actor reference --rounds 3 --out results/fin --retry-errors

  # A model behind an OpenAI-compatible server (OPENAI_BASE_URL, OPENAI_API_KEY):
  OPENAI_BASE_URL=http://localhost:8000/v1 patchbench run --actor openai:my-model --temperature 0

  # Two models sharing a multi-agent case, by role:
  patchbench run --actor 'release-manager=ollama:mistral,openai:gpt-5-mini' --rps 2

  # A model behind Anthropic's Messages API (ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL),
  # as a tool-using agent (native tool use) reading the state progressively:
  patchbench run --actor anthropic:claude-sonnet-4-5 --protocol tools --disclosure progressive

  # A model on an Ollama server (OLLAMA_HOST; ollama pull mistral first):
  patchbench run --actor ollama:mistral --temperature 0

  # Your own agent: a program that reads the request (JSON) on stdin and
  # writes {"text": "...", "usage": {...}} on stdout:
  patchbench run --actor 'exec:python3 my_agent.py' --timeout 10m

  # An external agent over MCP: for each run the tools are served over streamable
  # HTTP on 127.0.0.1 (PATCHBENCH_MCP_URL, PATCHBENCH_MCP_TOKEN) and the command runs:
  patchbench run --protocol tools --actor 'mcp:python3 my_mcp_agent.py' --timeout 10m

  # The tools protocol: each step an agent loop with read_state, query_state,
  # search_state and propose_patch, the first message holding an outline of the
  # view (the actor reads the rest):
  patchbench run --protocol tools --disclosure progressive --max-attempts 3

  # The growing cases at 1x and with their states grown to 10 MB, in one
  # directory (a scale column in every table): the view no longer fits a
  # context, so the actor navigates:
  patchbench run --protocol tools --disclosure progressive --scale 1x,10MB --actor reference --actor bulk

  # Half of the runs on this machine, the other half elsewhere:
  patchbench run --shard 1/2

  # One shard of a Kubernetes Indexed Job or a CI matrix (the index from
  # JOB_COMPLETION_INDEX or PATCHBENCH_SHARD_INDEX, the count from
  # PATCHBENCH_SHARD_COUNT; scripts/k8s and scripts/github show both):
  patchbench run --shard env --out /results/shard-$JOB_COMPLETION_INDEX

  # A person (or a model called elsewhere) answers: requests go to panel/pending,
  # answers come from panel/answers; exit 3 while some wait, the same command continues:
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel
  patchbench pending panel

  # A provider that cannot be reached: after 5 consecutive connection failures
  # no more of its runs start (exit 3); once it answers, go on:
  OPENAI_BASE_URL=http://localhost:8000/v1 patchbench run --actor openai:my-model --retry-errors

Exit status:
  0  every expected run has an outcome (passed or failed)
  2  bad usage or input, an interrupted session (Ctrl-C), a write that failed
     (a full disk), or a stop on a bad key or model (HTTP 401, 403, 404)
  3  the work is not done: a run ended in an error, waits for a file actor's
     answer, or was not run (an endpoint down, the token budget spent); the
     same command continues, with --retry-errors to redo the error runs
`

// runPlan is what a run does, once its flags are checked and its inputs
// loaded.
type runPlan struct {
	opts          runner.Options
	manifest      rundir.Manifest
	dir           string
	acts          []actors.Actor
	progressEvery time.Duration
	cacheFailures *cacheFailures
}

// runRun runs the benchmark: flags, actors, configurations and cases,
// the run directory, the runs, then the tables.
func runRun(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs, f := newRunFlags(stdout, stderr)
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	// Provenance first: a run whose manifest cannot say what built it
	// should be known before it is spent.
	if w := readBuildInfo().warning(); w != "" {
		fmt.Fprintf(stderr, "patchbench run: warning: %s\n", w)
	}
	p, err := f.prepare(fs, stderr, false)
	if err != nil {
		return fs.exit(err)
	}
	return fs.exit(execute(ctx, p, *f.retryErrors, *f.format, stdout, stderr))
}
