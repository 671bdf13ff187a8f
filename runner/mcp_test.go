package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	neturl "net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/internal/testenv"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/scoring"
	"github.com/patchbench/patchbench/tools"
)

// TestMain lets the test binary be an MCP agent: with
// PATCHBENCH_TEST_MCP_AGENT set it runs mcpAgentMain instead of the tests.
// The tests run with the collector of a test process (testenv.TuneGC).
func TestMain(m *testing.M) {
	if script := os.Getenv("PATCHBENCH_TEST_MCP_AGENT"); script != "" {
		if err := mcpAgentMain(script); err != nil {
			fmt.Fprintln(os.Stderr, "agent:", err)
			os.Exit(3)
		}
		os.Exit(0)
	}
	testenv.Main(m)
}

// bearer adds the token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.next.RoundTrip(r)
}

// mcpAgentMain is an agent written against the SDK's client: it checks
// that a request without the token is refused and that the server's
// instructions name the run's case and configuration, reads the task prompt,
// then follows the script: "refund" reads, proposes a wrong patch, reads
// the feedback's location and proposes the right one; "quit" reads and
// exits; "fail" exits 1 at once.
func mcpAgentMain(script string) error {
	url, token := os.Getenv(actors.EnvMCPURL), os.Getenv(actors.EnvMCPToken)
	if script == "fail" {
		return fmt.Errorf("failing as asked")
	}
	if url == "" || token == "" {
		return fmt.Errorf("no %s or %s", actors.EnvMCPURL, actors.EnvMCPToken)
	}
	resp, err := http.Post(url, "application/json", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		return fmt.Errorf("a request without the token got HTTP %d", resp.StatusCode)
	}
	ctx := context.Background()
	if script == "hostile" {
		return hostileAgent(ctx, url, token)
	}
	if channel, ok := strings.CutPrefix(script, "channel-"); ok {
		return channelAgent(ctx, url, token, channel)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearer{token, http.DefaultTransport}}}, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	// The instructions name the run's case and configuration.
	if !strings.HasPrefix(sess.InitializeResult().Instructions, "PatchBench case sup-example-refund, configuration patchoptic. ") {
		return fmt.Errorf("instructions: %q", sess.InitializeResult().Instructions)
	}
	if !strings.Contains(sess.InitializeResult().Instructions, "Task: Answer the customer's refund request") {
		return fmt.Errorf("instructions: %q", sess.InitializeResult().Instructions)
	}
	p, err := sess.GetPrompt(ctx, &mcp.GetPromptParams{Name: "task"})
	if err != nil {
		return err
	}
	if text := p.Messages[0].Content.(*mcp.TextContent).Text; !strings.Contains(text, "Propose your patch") {
		return fmt.Errorf("task prompt: %q", text)
	}
	call := func(name, args string) (string, error) {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: jsonArgs(args)})
		if err != nil {
			return "", err
		}
		return res.Content[0].(*mcp.TextContent).Text, nil
	}
	if _, err := call(tools.ReadState.Name, `{"pointer": "/ticket", "depth": 1}`); err != nil {
		return err
	}
	if script == "quit" {
		return nil
	}
	res, err := call(tools.ProposePatch.Name, `{"patch": [{"op": "replace", "path": "/order/status", "value": "refunded"}], "note": "x"}`)
	if err != nil || !strings.Contains(res, "write_outside_region") {
		return fmt.Errorf("wrong proposal: %q, %v", res, err)
	}
	if _, err := call(tools.ReadState.Name, `{"pointer": "/audit"}`); err != nil {
		return err
	}
	res, err = call(tools.ProposePatch.Name, rightProposal)
	if err != nil || !strings.Contains(res, "committed") || !strings.Contains(res, "The case is over") {
		return fmt.Errorf("right proposal: %q, %v", res, err)
	}
	return os.WriteFile(os.Getenv("PATCHBENCH_TEST_MCP_OK"), []byte("ok"), 0o644)
}

// hostileAgent sends the example case's canary where no tool's arguments
// are (its clientInfo), calls a tool that does not exist, then posts a
// tools/call of 3 MiB, more than the server reads of a request, with the
// canary at its start; it checks that the call is answered as over-size.
func hostileAgent(ctx context.Context, url, token string) error {
	hc := &http.Client{Transport: bearer{token, http.DefaultTransport}}
	client := mcp.NewClient(&mcp.Implementation{Name: "4000 0000 0000 9995", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: hc}, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	if _, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: "no_such_tool", Arguments: map[string]any{}}); err != nil {
		return fmt.Errorf("an unknown tool: %v", err)
	}
	body := `{"jsonrpc": "2.0", "id": 99, "method": "tools/call", "params": {"name": "read_state", "arguments": {"pointer": "4000 0000 0000 9995` +
		strings.Repeat("x", 3<<20) + `"}}}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Mcp-Session-Id", sess.ID())
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	got, _ := io.ReadAll(resp.Body)
	if !strings.Contains(string(got), "oversized_arguments") {
		return fmt.Errorf("an over-size call: HTTP %d %.300s", resp.StatusCode, got)
	}
	return nil
}

// testCard is the example case's canary.
const testCard = "4000 0000 0000 9995"

// withHeader adds a header to every request.
type withHeader struct {
	name, value string
	next        http.RoundTripper
}

func (h withHeader) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set(h.name, h.value)
	return h.next.RoundTrip(r)
}

// channelAgent commits the right proposal and sends the example case's
// canary through one channel outside the JSON-RPC messages before the
// commit: "header" (a header X-Card on every request), "query" (the
// endpoint's query string), "stdout" (standard output); or after it:
// "after" (a read_state of the canary once the case is over).
func channelAgent(ctx context.Context, url, token, channel string) error {
	var rt http.RoundTripper = bearer{token, http.DefaultTransport}
	switch channel {
	case "header":
		rt = withHeader{"X-Card", testCard, rt}
	case "query":
		url += "?card=" + neturl.QueryEscape(testCard)
	case "stdout":
		fmt.Println("card " + testCard)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "test-agent", Version: "1"}, nil)
	sess, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: rt}}, nil)
	if err != nil {
		return err
	}
	defer sess.Close()
	res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tools.ProposePatch.Name, Arguments: jsonArgs(rightProposal)})
	if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "The case is over") {
		return fmt.Errorf("right proposal: %v, %v", res, err)
	}
	if channel == "after" {
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tools.ReadState.Name, Arguments: map[string]any{"pointer": "/" + testCard}})
		if err != nil || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "the case is over") {
			return fmt.Errorf("a call after the end: %v, %v", res, err)
		}
	}
	return nil
}

// jsonArgs decodes a JSON object for CallToolParams.
func jsonArgs(s string) map[string]any {
	var m map[string]any
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		panic(err)
	}
	return m
}

// TestMCPAgent: an agent written against the SDK's client, run as
// mcp:COMMAND, reaches the tools over streamable HTTP with the run's URL
// and bearer token; the run's outcome is what it did. An agent that
// stops early ends its step with agent_exited; one that fails before any
// call is an error run.
func TestMCPAgent(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		script, status, ended string
		turns                 int
	}{
		{"refund", rundir.StatusPassed, "", 4},
		{"quit", rundir.StatusFailed, EndedAgentExited, 1},
		{"fail", rundir.StatusError, "", 0},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Setenv("PATCHBENCH_TEST_MCP_AGENT", tc.script)
			ok := t.TempDir() + "/ok"
			t.Setenv("PATCHBENCH_TEST_MCP_OK", ok)
			a, err := actors.NewMCPAgent("mcp:"+self+" -test.run=^$", 30*time.Second, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := runTools(t, "patchoptic", a, Options{Spec: runspec.Spec{MaxAttempts: 2}})
			s := r.Steps[0]
			if r.Status != tc.status || s.Ended != tc.ended || len(s.Turns) != tc.turns {
				t.Fatalf("status %s (want %s), ended %q (want %q), turns %d (want %d), error %v, stderr %q", r.Status, tc.status, s.Ended, tc.ended, len(s.Turns), tc.turns, r.Error, s.ActorStderr)
			}
			if tc.script == "refund" {
				if !s.Committed || s.Attempts != 2 || r.Tokens.Prompt == 0 {
					t.Errorf("committed %v attempts %d tokens %+v", s.Committed, s.Attempts, r.Tokens)
				}
				if _, err := os.Stat(ok); err != nil {
					t.Errorf("the agent did not hear that the case is over: %v", err)
				}
			}
		})
	}
}

// TestMCPStdio: the stdio server of patchbench mcp, driven by the SDK's
// client over a pipe: the task prompt, the tools, a commit that ends the
// case, and the run recorded as actor mcp:stdio.
func TestMCPStdio(t *testing.T) {
	cr, sw := io.Pipe() // server to client
	sr, cw := io.Pipe() // client to server
	a := &actors.MCPStdio{In: sr, Out: sw, CaseID: "sup-example-refund", Config: "patchoptic"}
	type result struct {
		text string
		err  error
	}
	done := make(chan result, 1)
	go func() {
		ctx := context.Background()
		client := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
		sess, err := client.Connect(ctx, &mcp.IOTransport{Reader: cr, Writer: cw}, nil)
		if err != nil {
			done <- result{err: err}
			return
		}
		defer sess.Close()
		listed, err := sess.ListTools(ctx, nil)
		if err != nil || len(listed.Tools) != len(tools.All) {
			done <- result{err: fmt.Errorf("tools %v, %v", listed, err)}
			return
		}
		res, err := sess.CallTool(ctx, &mcp.CallToolParams{Name: tools.ProposePatch.Name, Arguments: jsonArgs(rightProposal)})
		if err != nil {
			done <- result{err: err}
			return
		}
		done <- result{text: res.Content[0].(*mcp.TextContent).Text}
	}()
	r := runTools(t, "patchoptic", a, Options{})
	got := <-done
	if got.err != nil || !strings.Contains(got.text, "committed") {
		t.Fatalf("client: %q, %v", got.text, got.err)
	}
	a.Wait()
	if r.Actor != actors.MCPStdioName || r.Status != rundir.StatusPassed {
		t.Errorf("actor %s status %s error %v", r.Actor, r.Status, r.Error)
	}
}

// TestMCPAgentHostile: over the mcp: actor's streamable HTTP, the canary
// in a client's clientInfo leaks (field mcp_message), a call of a tool
// that does not exist is a call of the step, and a request over the
// bound is not dropped: its canary before the bound leaks and its
// tools/call is made, over-size.
func TestMCPAgentHostile(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("PATCHBENCH_TEST_MCP_AGENT", "hostile")
	a, err := actors.NewMCPAgent("mcp:"+self+" -test.run=^$", 30*time.Second, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := runTools(t, "patchoptic", a, Options{Spec: runspec.Spec{MaxAttempts: 2}})
	s := r.Steps[0]
	if r.Status != rundir.StatusFailed || len(s.Turns) != 2 {
		t.Fatalf("status %s, turns %d, error %v, stderr %q", r.Status, len(s.Turns), r.Error, s.ActorStderr)
	}
	if c := s.Turns[0].Calls[0]; c.Error != tools.CodeUnknown {
		t.Errorf("first call: %+v", c)
	}
	if c := s.Turns[1].Calls[0]; c.Error != tools.CodeOversized || c.ArgumentsBytes < 3<<20 || len(c.Arguments) > keptToolBytes {
		t.Errorf("the over-size call: error %q, %d bytes, %d kept", c.Error, c.ArgumentsBytes, len(c.Arguments))
	}
	fields := map[string]bool{}
	for _, l := range r.Leaks {
		fields[l.Field] = true
	}
	if !fields[scoring.FieldMCPMessage] || !fields[scoring.FieldToolCall] {
		t.Errorf("leaks %+v", r.Leaks)
	}
}

// TestMCPTypeScriptClient: the MCP server of mcp:COMMAND against a client
// no one here wrote, the official TypeScript SDK (scripts/mcp-ts-sdk.sh
// installs it into .mcp-ts/), run by the machine's node: tools, the task
// prompt, a hidden read answered as absent, a wrong then a right proposal.
// It skips with one visible line when node or the SDK is missing, and
// fails then when PATCHBENCH_REQUIRE_MCP_TS is set.
func TestMCPTypeScriptClient(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", "node is not installed, so the TypeScript MCP client was not run", "Debian: apt-get install nodejs npm; then scripts/mcp-ts-sdk.sh")
	}
	dir, err := filepath.Abs("../.mcp-ts")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json")); err != nil {
		testenv.Missing(t, "PATCHBENCH_REQUIRE_MCP_TS", "the MCP TypeScript SDK is not in .mcp-ts/, so its client was not run", "scripts/mcp-ts-sdk.sh installs it")
	}
	src, err := os.ReadFile("testdata/mcp-ts-agent.mjs")
	if err != nil {
		t.Fatal(err)
	}
	// Beside node_modules, where node resolves the SDK's imports.
	agent := filepath.Join(dir, fmt.Sprintf("agent-%d.mjs", os.Getpid()))
	if err := os.WriteFile(agent, src, 0o644); err != nil {
		t.Fatal(err)
	}
	defer os.Remove(agent)
	ok := filepath.Join(t.TempDir(), "ok")
	t.Setenv("PATCHBENCH_TEST_MCP_OK", ok)
	a, err := actors.NewMCPAgent("mcp:"+node+" "+agent, time.Minute, 0)
	if err != nil {
		t.Fatal(err)
	}
	r := runTools(t, "patchoptic", a, Options{Spec: runspec.Spec{MaxAttempts: 2}})
	s := r.Steps[0]
	if r.Status != rundir.StatusPassed || !s.Committed || s.Attempts != 2 || len(s.Turns) != 3 || !s.Turns[0].Calls[0].Hidden {
		t.Fatalf("status %s error %v committed %v attempts %d turns %d stderr %q", r.Status, r.Error, s.Committed, s.Attempts, len(s.Turns), s.ActorStderr)
	}
	if _, err := os.Stat(ok); err != nil {
		t.Errorf("the TypeScript agent did not hear that the case is over: %v", err)
	}
}
