package runner

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
	"github.com/patchbench/patchbench/tools"
)

// cardPing is a ping whose _meta holds the example case's canary.
const cardPing = `{"jsonrpc": "2.0", "id": 9, "method": "ping", "params": {"_meta": {"x": "4000 0000 0000 9995"}}}`

// lateDriver is a Driver that commits the right proposal at once, then,
// once the run is over (the commit's result tells it), sends cardPing as
// a message, with a context that is cancelled first when cancelled is
// set.
type lateDriver struct{ cancelled bool }

func (*lateDriver) Name() string { return "late" }

func (*lateDriver) Propose(context.Context, actors.Request) (actors.Response, error) {
	return actors.Response{}, errors.New("a driver")
}

func (d *lateDriver) Drive(ctx context.Context, env actors.AgentEnv) error {
	if res, _ := env.Call(ctx, actors.ToolCall{ID: "c1", Name: tools.ProposePatch.Name, Arguments: rightProposal}); !strings.Contains(res, "The case is over") {
		return fmt.Errorf("the commit's result: %q", res)
	}
	mctx := ctx
	if d.cancelled {
		c, cancel := context.WithCancel(ctx)
		cancel()
		mctx = c
	}
	env.Message(mctx, cardPing)
	return nil
}

// TestDriverMessageAfterTheEnd: a message an external agent sends after
// the last step committed, before its session ends, is its output: the
// canary in it leaks (field mcp_message, the last step's), whether or
// not its transport's context was cancelled (an HTTP client that went
// away).
func TestDriverMessageAfterTheEnd(t *testing.T) {
	for _, cancelled := range []bool{false, true} {
		t.Run(fmt.Sprint("cancelled=", cancelled), func(t *testing.T) {
			r := runTools(t, "patchoptic", &lateDriver{cancelled: cancelled}, Options{})
			if !r.Steps[0].Committed {
				t.Fatalf("status %s error %v", r.Status, r.Error)
			}
			if !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != scoring.FieldMCPMessage || r.Leaks[0].Step != "reply" {
				t.Errorf("status %s leaked %v leaks %+v", r.Status, r.Leaked, r.Leaks)
			}
		})
	}
}

// TestAgentBridgeLateMessages: once the run is over, a message is
// scanned at the last step until the agent's session ended, and not
// after; a message whose context ended while the run went on is scanned
// at the current step.
func TestAgentBridgeLateMessages(t *testing.T) {
	c, _ := loadExampleWithLines(t)
	scan := scoring.NewLeakScan(c)
	b := newAgentBridge(scan)
	b.step = "reply"
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	b.Message(ctx, "card 4000 0000 0000 9995") // nobody takes it: the context ends
	b.setTask("second", "task")
	b.finish()
	b.Message(context.Background(), "4000 0000 0000 9995")
	b.endSession()
	b.step = "third"
	b.Message(context.Background(), "4000 0000 0000 9995")
	var steps []string
	for _, l := range scoring.ScoreScanned(c, scan, runtime.NewSession(c.State, c.Workflow.PhasePath).State(), nil, nil).Leaks {
		if l.Where == scoring.WhereOutput {
			steps = append(steps, l.Step+"/"+l.Field)
		}
	}
	if strings.Join(steps, " ") != "reply/mcp_message second/mcp_message" {
		t.Errorf("leaks at %q", steps)
	}
}

// TestMCPStdioAfterTheEnd: over patchbench mcp's stdio, a client that
// commits and then sends a read_state and a ping with the canary (both
// answered) before it closes the session leaks it: what it sends until
// it closes standard input is read before the run is scored.
func TestMCPStdioAfterTheEnd(t *testing.T) {
	cr, sw := io.Pipe() // server to client
	sr, cw := io.Pipe() // client to server
	a := &actors.MCPStdio{In: sr, Out: sw, CaseID: "sup-example-refund", Config: "patchoptic"}
	heard := make(chan error, 1)
	go func() {
		in := bufio.NewScanner(cr)
		in.Buffer(nil, 1<<20)
		ask := func(id int, msg string) (string, error) {
			if _, err := io.WriteString(cw, msg+"\n"); err != nil {
				return "", err
			}
			for in.Scan() {
				var m struct {
					ID json.RawMessage `json:"id"`
				}
				if json.Unmarshal(in.Bytes(), &m) == nil && string(m.ID) == fmt.Sprint(id) {
					return in.Text(), nil
				}
			}
			return "", fmt.Errorf("no answer to %d: %v", id, in.Err())
		}
		defer cw.Close()
		if _, err := ask(0, `{"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}}`); err != nil {
			heard <- err
			return
		}
		io.WriteString(cw, `{"jsonrpc": "2.0", "method": "notifications/initialized"}`+"\n")
		if got, err := ask(1, `{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "propose_patch", "arguments": `+strings.ReplaceAll(rightProposal, "\n", " ")+`}}`); err != nil || !strings.Contains(got, "The case is over") {
			heard <- fmt.Errorf("commit: %s, %v", got, err)
			return
		}
		if got, err := ask(2, `{"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "read_state", "arguments": {"pointer": "/4000 0000 0000 9995"}}}`); err != nil || !strings.Contains(got, "the case is over") {
			heard <- fmt.Errorf("a call after the end: %s, %v", got, err)
			return
		}
		_, err := ask(9, cardPing)
		heard <- err
	}()
	r := runTools(t, "patchoptic", a, Options{})
	if err := <-heard; err != nil {
		t.Fatal(err)
	}
	a.Wait()
	if !r.Steps[0].Committed || !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != scoring.FieldMCPMessage || r.Leaks[0].Step != "reply" {
		t.Errorf("status %s committed %v leaks %+v", r.Status, r.Steps[0].Committed, r.Leaks)
	}
}

// TestMCPAgentRequestChannels: an mcp: agent that commits and sends the
// canary outside any JSON-RPC message, in a request's headers or query
// string, in a request after the end, or on standard output, leaks it,
// in the field that carried it.
func TestMCPAgentRequestChannels(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ script, field string }{
		{"channel-header", scoring.FieldMCPMessage},
		{"channel-query", scoring.FieldMCPMessage},
		{"channel-after", scoring.FieldMCPMessage},
		{"channel-stdout", scoring.FieldStdout},
	} {
		t.Run(tc.script, func(t *testing.T) {
			t.Setenv("PATCHBENCH_TEST_MCP_AGENT", tc.script)
			a, err := actors.NewMCPAgent("mcp:"+self+" -test.run=^$", 30*time.Second, 0)
			if err != nil {
				t.Fatal(err)
			}
			r := runTools(t, "patchoptic", a, Options{})
			s := r.Steps[0]
			if !s.Committed || r.Status != rundir.StatusFailed {
				t.Fatalf("status %s committed %v error %v stderr %q", r.Status, s.Committed, r.Error, s.ActorStderr)
			}
			if !r.Leaked || len(r.Leaks) != 1 || r.Leaks[0].Field != tc.field || r.Leaks[0].Step != "reply" {
				t.Errorf("leaks %+v, stderr %q", r.Leaks, s.ActorStderr)
			}
			if tc.field == scoring.FieldStdout && !strings.Contains(s.ActorStdout, "card 4000") {
				t.Errorf("standard output kept: %q", s.ActorStdout)
			}
		})
	}
}
