package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/internal/testenv"
	"github.com/patchbench/patchbench/rundir"
)

// exampleAgentCase is the case the example agents of examples/agents
// are written for (examples/agents/README.md): one step, in the
// embedded suite.
const exampleAgentCase = "sup-address-change"

// TestExampleAgents runs the three example agents of examples/agents
// (Python on the standard library, TypeScript on the official SDK, Go on
// the MCP Go SDK) on their example case in the configuration patchoptic,
// each over both transports: as the actor mcp:COMMAND of patchbench run
// (streamable HTTP), and as the client of patchbench mcp (standard input
// and output; the agent starts the test binary as patchbench). Each run
// must commit the case's step and pass (semantic and legal pass), and the
// agent's standard error must show the server's instructions naming the
// case and the configuration. Python and node are outside the module: a
// subtest without them skips with one visible line, and fails where
// PATCHBENCH_REQUIRE_PYTHON or PATCHBENCH_REQUIRE_MCP_TS is set (.ci/run
// sets both).
func TestExampleAgents(t *testing.T) {
	if testing.Short() {
		t.Skip("starts the example agents in Python, TypeScript and Go")
	}
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	examples := filepath.Join(root, "examples", "agents")
	t.Run("python", func(t *testing.T) {
		python, err := exec.LookPath("python3")
		if err != nil {
			testenv.Missing(t, "PATCHBENCH_REQUIRE_PYTHON", "python3 is not installed, so the Python example agent was not run", "Debian: apt-get install python3")
		}
		checkExampleAgent(t, []string{python, filepath.Join(examples, "python", "agent.py")})
	})
	t.Run("typescript", func(t *testing.T) {
		checkExampleAgent(t, typeScriptAgent(t, root, filepath.Join(examples, "typescript", "agent.ts")))
	})
	t.Run("go", func(t *testing.T) {
		goCmd, err := exec.LookPath("go")
		if err != nil {
			goCmd = filepath.Join(runtime.GOROOT(), "bin", "go")
		}
		bin := filepath.Join(t.TempDir(), "go-agent")
		build := exec.Command(goCmd, "build", "-o", bin, "./examples/agents/go")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("go build ./examples/agents/go: %v\n%s", err, out)
		}
		checkExampleAgent(t, []string{bin})
	})
}

// typeScriptAgent makes the TypeScript example agent at src runnable by
// node: transpiled to JavaScript (types stripped, no type check) by the
// typescript package in .mcp-ts/, and written there, beside the
// node_modules where node finds the SDK. It returns the command line, and
// skips (or fails where PATCHBENCH_REQUIRE_MCP_TS is set) without node,
// the SDK or typescript.
func typeScriptAgent(t *testing.T, root, src string) []string {
	t.Helper()
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", "node is not installed, so the TypeScript example agent was not run", "Debian: apt-get install nodejs npm; then scripts/mcp-ts-sdk.sh")
	}
	dir := filepath.Join(root, ".mcp-ts")
	for _, pkg := range []string{"@modelcontextprotocol/sdk", "typescript"} {
		if _, err := os.Stat(filepath.Join(dir, "node_modules", pkg, "package.json")); err != nil {
			testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", pkg+" is not in .mcp-ts/, so the TypeScript example agent was not run", "scripts/mcp-ts-sdk.sh installs it")
		}
	}
	out := filepath.Join(dir, fmt.Sprintf("example-agent-%d.mjs", os.Getpid()))
	t.Cleanup(func() { os.Remove(out) })
	const transpile = `const ts = require("typescript"), fs = require("fs");
const r = ts.transpileModule(fs.readFileSync(process.argv[1], "utf8"), {
  compilerOptions: {target: ts.ScriptTarget.ES2022, module: ts.ModuleKind.ESNext}, reportDiagnostics: true});
if (r.diagnostics.length) { console.error(ts.formatDiagnostics(r.diagnostics, {getCanonicalFileName: f => f, getCurrentDirectory: () => "", getNewLine: () => "\n"})); process.exit(1); }
fs.writeFileSync(process.argv[2], r.outputText);`
	cmd := exec.Command(node, "-e", transpile, src, out)
	cmd.Dir = dir
	if got, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("transpiling %s: %v\n%s", src, err, got)
	}
	return []string{node, out}
}

// checkExampleAgent runs the agent of command line agent on the example
// case as mcp:AGENT, then as the client of patchbench mcp, and checks
// that each run passed with the case's step committed and that the
// agent saw the case and configuration named.
func checkExampleAgent(t *testing.T, agent []string) {
	t.Helper()
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	// patchbench, for the agent, is the test binary with PATCHBENCH_TEST_MAIN
	// set, by a script: an agent's client may start it with an environment
	// of its own (the TypeScript SDK passes a few variables only), and the
	// test binary without it would run these tests again.
	patchbench := filepath.Join(t.TempDir(), "patchbench")
	script := fmt.Sprintf("#!/bin/sh\nPATCHBENCH_TEST_MAIN=1 exec '%s' \"$@\"\n", self)
	if err := os.WriteFile(patchbench, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, transport := range []string{"http", "stdio"} {
		out := filepath.Join(t.TempDir(), "run")
		var id, agentStderr string
		if transport == "http" {
			args := []string{"run", "--case", exampleAgentCase, "--config", "patchoptic", "--protocol", "tools", "--progress", "0",
				"--actor", "mcp:" + strings.Join(agent, " "), "--out", out}
			stdout, stderr, code := runCLI(t, cliCase{args: args})
			if code != 0 {
				t.Fatalf("%s: exit %d\nstdout:\n%s\nstderr:\n%s", transport, code, stdout, stderr)
			}
			id = rundir.RunID(exampleAgentCase, "patchoptic", "mcp:"+strings.Join(agent, " "), 1)
		} else {
			cmd := exec.Command(agent[0], append(agent[1:], patchbench, "mcp", "--case", exampleAgentCase, "--out", out)...)
			got, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", transport, err, got)
			}
			id, agentStderr = rundir.RunID(exampleAgentCase, "patchoptic", "mcp:stdio", 1), string(got)
		}
		var rec *rundir.Record
		rundir.Latest(filepath.Join(out, rundir.RunsFile), func(r *rundir.Record) error {
			if r.RunID == id {
				rec = r
			}
			return nil
		})
		if rec == nil {
			t.Fatalf("%s: %s holds no run %s", transport, out, id)
		}
		if rec.Status != rundir.StatusPassed || !rec.SemanticPass || !rec.LegalPass || len(rec.Steps) != 1 || !rec.Steps[0].Committed {
			t.Fatalf("%s: status %s, semantic pass %v, legal pass %v, steps %+v", transport, rec.Status, rec.SemanticPass, rec.LegalPass, rec.Steps)
		}
		if transport == "http" {
			agentStderr = rec.Steps[0].ActorStderr
		}
		if !strings.Contains(agentStderr, "PatchBench case "+exampleAgentCase+", configuration patchoptic.") {
			t.Errorf("%s: the instructions did not name the case and configuration; the agent's standard error:\n%s", transport, agentStderr)
		}
	}
}
