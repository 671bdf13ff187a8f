package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/patchbench/patchbench/internal/testenv"
	"github.com/patchbench/patchbench/rundir"
)

// TestMain lets the test binary be patchbench itself (for a client that
// starts the command): with PATCHBENCH_TEST_MAIN set it runs main.
func TestMain(m *testing.M) {
	if os.Getenv("PATCHBENCH_TEST_MAIN") != "" {
		main()
	}
	os.Exit(m.Run())
}

// TestMCPCommand: patchbench mcp serves the example case over its
// standard input and output to the SDK's client (instructions, the task
// prompt, the tools), and records the run as actor mcp:stdio; show reads
// it back.
func TestMCPCommand(t *testing.T) {
	cr, sw := io.Pipe()
	sr, cw := io.Pipe()
	old := mcpStdin
	mcpStdin = sr
	defer func() { mcpStdin = old }()
	out := filepath.Join(t.TempDir(), "mcp")
	var stderr bytes.Buffer
	code := make(chan int, 1)
	go func() {
		code <- runMCP(context.Background(), []string{"--case", "sup-example-refund", "--cases", exampleCases, "--out", out}, sw, &stderr)
		sw.Close()
	}()
	ctx := context.Background()
	sess, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ins := sess.InitializeResult().Instructions; !strings.Contains(ins, "case sup-example-refund, configuration patchoptic") || !strings.Contains(ins, "Task: Answer the customer's refund request") {
		t.Errorf("instructions: %s", ins)
	}
	p, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "task"})
	if err != nil || !strings.Contains(p.Messages[0].Content.(*mcp.TextContent).Text, "You may write") {
		t.Fatalf("prompt %v, %v", p, err)
	}
	call := func(name, args string) string {
		var m map[string]any
		json.Unmarshal([]byte(args), &m)
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: m})
		if err != nil {
			t.Fatal(err)
		}
		return res.Content[0].(*mcp.TextContent).Text
	}
	if got := call("read_state", `{"pointer": "/customer/card_number"}`); !strings.HasPrefix(got, "error: absent") {
		t.Errorf("a hidden read: %q", got)
	}
	got := call("propose_patch", `{"patch": [{"op": "replace", "path": "/ticket/reply", "value": "Dear Ada, a refund of 42.50 EUR is on its way."},
		{"op": "replace", "path": "/ticket/status", "value": "resolved"}, {"op": "add", "path": "/audit/-", "value": "refund confirmed"}], "note": "Refund confirmed."}`)
	if !strings.Contains(got, "committed") || !strings.Contains(got, "The case is over") {
		t.Errorf("proposal: %q", got)
	}
	if after := call("read_state", `{"pointer": ""}`); !strings.Contains(after, "the case is over") {
		t.Errorf("a call after the case: %q", after)
	}
	sess.Close()
	if c := <-code; c != 0 {
		t.Fatalf("exit %d\n%s", c, stderr.String())
	}
	if m, err := rundir.ReadManifest(out); err != nil || m.Actors[0] != "mcp:stdio" || m.Protocol != "tools" {
		t.Fatalf("manifest %+v, %v", m, err)
	}
	// The same command again: the directory holds the run, nothing is
	// served, and it says so.
	mcpStdin = io.NopCloser(strings.NewReader(""))
	var again bytes.Buffer
	if c := runMCP(context.Background(), []string{"--case", "sup-example-refund", "--cases", exampleCases, "--out", out}, io.Discard, &again); c != 0 || !strings.Contains(again.String(), "holds this run already") {
		t.Errorf("again: exit %d\n%s", c, again.String())
	}
	stdout, errOut, c := runCLI(t, cliCase{args: []string{"show", "--out", out, "sup-example-refund/patchoptic/mcp:stdio/1"}})
	if c != 0 || !strings.Contains(stdout, "status passed") || !strings.Contains(stdout, `read_state "/customer/card_number": HIDDEN from the view: answered as absent`) {
		t.Errorf("show: exit %d\n%s%s", c, stdout, errOut)
	}
}

// TestMCPCommandTypeScript: patchbench mcp against a client no one here
// wrote, the official TypeScript SDK's stdio client (scripts/mcp-ts-sdk.sh
// installs it into .mcp-ts/), which starts the command itself (the test
// binary, as patchbench through PATCHBENCH_TEST_MAIN). It skips with one
// visible line without node or the SDK (and fails then where
// PATCHBENCH_REQUIRE_MCP_TS is set).
func TestMCPCommandTypeScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", "node is not installed, so the TypeScript MCP client was not run", "Debian: apt-get install nodejs npm; then scripts/mcp-ts-sdk.sh")
	}
	dir, err := filepath.Abs("../../.mcp-ts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", "the MCP TypeScript SDK is not in .mcp-ts/, so its client was not run", "scripts/mcp-ts-sdk.sh installs it")
	}
	src, err := os.ReadFile("testdata/mcp-ts-stdio.mjs")
	if err != nil {
		t.Fatal(err)
	}
	client := filepath.Join(dir, fmt.Sprintf("stdio-%d.mjs", os.Getpid()))
	if err := os.WriteFile(client, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(client)
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cases, _ := filepath.Abs(exampleCases)
	out := filepath.Join(t.TempDir(), "mcp")
	command, _ := json.Marshal([]string{self, "mcp", "--case", "sup-example-refund", "--cases", cases, "--out", out})
	cmd := exec.Command(node, client)
	cmd.Env = append(os.Environ(), "PATCHBENCH_TEST_MAIN=1", "PATCHBENCH_MCP_COMMAND="+string(command))
	got, err := cmd.CombinedOutput()
	if err != nil || strings.TrimSpace(string(got)) != "ok" {
		t.Fatalf("client: %v\n%s", err, got)
	}
	stdout, _, c := runCLI(t, cliCase{args: []string{"show", "--out", out, "sup-example-refund/patchoptic/mcp:stdio/1"}})
	if c != 0 || !strings.Contains(stdout, "status passed") {
		t.Errorf("show: exit %d\n%s", c, stdout)
	}
}
