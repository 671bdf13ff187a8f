package actors

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// MCP environment variables of an mcp:COMMAND agent.
const (
	EnvMCPURL   = "PATCHBENCH_MCP_URL"
	EnvMCPToken = "PATCHBENCH_MCP_TOKEN"
)

// MCPStdioName is the actor name of a run served by patchbench mcp.
const MCPStdioName = "mcp:stdio"

// MCPInstructions is the server's instructions for a client: how the
// case goes, then the first step's task.
func MCPInstructions(caseID, config, task string) string {
	return fmt.Sprintf("PatchBench case %s, configuration %s. The case is a workflow of steps on a shared JSON state; "+
		"you do each step in turn through two tools: read_state(pointer, depth) shows the state at a JSON Pointer as you may see it, "+
		"propose_patch(patch, note) proposes an RFC 6902 JSON Patch, which a verifier checks before it is committed. "+
		"A commit moves to the next step, whose task the result gives (and the prompt \"task\" always holds the current step's task).\n\n"+
		"The first step's task:\n%s", caseID, config, task)
}

// NewMCPServer is the MCP server of one run (github.com/modelcontextprotocol/go-sdk):
// the step's tools, read_state and propose_patch, answered by env (their
// arguments are passed on as sent, unknown members and malformed values
// answered by env as error results); the prompt "task", the current
// step's task; and instructions.
func NewMCPServer(env AgentEnv, instructions string) *mcp.Server {
	srv := mcp.NewServer(&mcp.Implementation{Name: "patchbench", Version: "1"}, &mcp.ServerOptions{Instructions: instructions})
	var n atomic.Int64
	for _, t := range StepTools {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				args := string(req.Params.Arguments)
				if args == "" || args == "null" {
					args = "{}"
				}
				text, isErr := env.Call(ctx, ToolCall{ID: fmt.Sprintf("mcp_%d", n.Add(1)), Name: req.Params.Name, Arguments: args})
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}, nil
			})
	}
	srv.AddPrompt(&mcp.Prompt{Name: "task", Description: "the current step's task"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "the current step's task",
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: env.Task()}}}}, nil
		})
	return srv
}

// MCPAgent is the actor "mcp:COMMAND": an external agent that reaches the
// step's tools over MCP. For each run it serves them over streamable HTTP
// on 127.0.0.1, at a fresh URL with a fresh bearer token (given to
// COMMAND as PATCHBENCH_MCP_URL and PATCHBENCH_MCP_TOKEN; every request
// must send Authorization: Bearer TOKEN), and runs COMMAND (split as the
// exec actor splits it, in a process group of its own that is killed when
// the run ends or --timeout passes). The run's outcome is what the agent
// did through the tools.
type MCPAgent struct {
	spec    string
	argv    []string
	timeout time.Duration
	// maxBody bounds one HTTP request of the agent, in bytes.
	maxBody int64
}

// NewMCPAgent makes the actor of a spec "mcp:COMMAND"; timeout bounds a
// run (0: 2 minutes), maxAnswer an answer (0: DefaultMaxAnswerBytes; a
// request of the agent may hold twice that).
func NewMCPAgent(spec string, timeout time.Duration, maxAnswer int64) (*MCPAgent, error) {
	cmd := strings.TrimPrefix(spec, "mcp:")
	if cmd == "stdio" {
		return nil, fmt.Errorf("actor %q: mcp:stdio is the actor of patchbench mcp, which serves a case over standard input and output", spec)
	}
	argv, err := splitWords(cmd)
	if err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("actor %q: give the command, mcp:COMMAND", spec)
	}
	if err := checkProgram(argv); err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	if maxAnswer <= 0 {
		maxAnswer = DefaultMaxAnswerBytes
	}
	return &MCPAgent{spec: spec, argv: argv, timeout: timeout, maxBody: 2*maxAnswer + envelopeBytes}, nil
}

// Name implements Actor.
func (a *MCPAgent) Name() string { return a.spec }

// SpeaksTools implements ToolSpeaker.
func (a *MCPAgent) SpeaksTools() bool { return true }

// Propose implements Actor; an MCP agent is never asked turn by turn (it
// is a Driver).
func (a *MCPAgent) Propose(context.Context, Request) (Response, error) {
	return Response{}, errors.New("an mcp: actor drives its own loop (the tools protocol)")
}

// Drive implements Driver: it serves the run's tools and runs the agent
// until it exits, the timeout passes or ctx ends.
func (a *MCPAgent) Drive(ctx context.Context, env AgentEnv) error {
	token, path := randomHex(32), "/mcp/"+randomHex(16)
	srv := NewMCPServer(env, MCPInstructions("", "", env.Task()))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("%s: %w", a.spec, err)
	}
	hs := &http.Server{Handler: bearerOnly(path, token, a.maxBody, h), ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer hs.Close()
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, a.argv[0], a.argv[1:]...)
	cmd.Env = append(os.Environ(), EnvMCPURL+"=http://"+ln.Addr().String()+path, EnvMCPToken+"="+token)
	var tee io.Writer
	if se, ok := env.(StderrEnv); ok {
		tee = se.Stderr()
	}
	stderr := NewExcerpt(KeptStderrBytes, tee)
	cmd.Stdout, cmd.Stderr = io.Discard, stderr
	cmd.WaitDelay = execWaitDelay
	_, runErr := runProgram(cmd, nil, nil) // what the agent left running dies with it (even out of its group)
	switch {
	case ctx.Err() != nil:
		return nil // the run is over: the agent was ended
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return &ExecError{Err: fmt.Errorf("%s: still running after %v (--timeout); killed", a.spec, a.timeout), Stderr: stderr.String()}
	case runErr != nil:
		return &ExecError{Err: fmt.Errorf("%s: %w", a.spec, runErr), Stderr: stderr.String()}
	}
	return nil
}

// maxMCPSessions bounds the MCP sessions an agent may open in one run
// (8; it needs one): every session the SDK keeps until the run ends, so
// an agent that opened sessions without end grew patchbench by 4 GB in
// 50 s (issue 23's fifth attack).
const maxMCPSessions = 8

// bearerOnly serves h at path to requests that carry the bearer token,
// with bodies of at most maxBody bytes, opening at most maxMCPSessions
// sessions (a POST without an Mcp-Session-Id header opens one; past the
// bound it gets 429); anything else is refused.
func bearerOnly(path, token string, maxBody int64, h http.Handler) http.Handler {
	want := []byte("Bearer " + token)
	var sessions atomic.Int64
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", "Bearer")
			http.Error(w, "a bearer token is required (PATCHBENCH_MCP_TOKEN)", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && sessions.Add(1) > maxMCPSessions {
			http.Error(w, fmt.Sprintf("more than %d MCP sessions in one run", maxMCPSessions), http.StatusTooManyRequests)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxBody)
		h.ServeHTTP(w, r)
	})
}

// randomHex is n random bytes in hex.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

// MCPStdio is the actor of patchbench mcp: it serves one run's tools over
// a stream (the command's standard input and output) to an MCP client,
// such as an assistant a person points at a case. Drive returns when the
// run is over or the client goes; the session then goes on answering
// (every call hears that the case is over) until the client goes, which
// Wait waits for.
type MCPStdio struct {
	In           io.ReadCloser
	Out          io.WriteCloser
	CaseID       string
	Config       string
	sessionEnded chan struct{}
}

// Name implements Actor: "mcp:stdio".
func (a *MCPStdio) Name() string { return MCPStdioName }

// SpeaksTools implements ToolSpeaker.
func (a *MCPStdio) SpeaksTools() bool { return true }

// Propose implements Actor; the stdio agent drives its own loop.
func (a *MCPStdio) Propose(context.Context, Request) (Response, error) {
	return Response{}, errors.New("mcp:stdio drives its own loop (the tools protocol)")
}

// Drive implements Driver. It is called once (patchbench mcp serves one
// run).
func (a *MCPStdio) Drive(ctx context.Context, env AgentEnv) error {
	srv := NewMCPServer(env, MCPInstructions(a.CaseID, a.Config, env.Task()))
	a.sessionEnded = make(chan struct{})
	sess, err := srv.Connect(context.WithoutCancel(ctx), &mcp.IOTransport{Reader: a.In, Writer: a.Out}, nil)
	if err != nil {
		close(a.sessionEnded)
		return err
	}
	go func() {
		sess.Wait()
		close(a.sessionEnded)
	}()
	select {
	case <-a.sessionEnded:
	case <-env.Over():
	case <-ctx.Done():
	}
	return nil
}

// Served reports whether Drive ran: false when the run directory held the
// run already, so that nothing was served.
func (a *MCPStdio) Served() bool { return a.sessionEnded != nil }

// Wait waits for the client to end the session (when Drive ran).
func (a *MCPStdio) Wait() {
	if a.sessionEnded != nil {
		<-a.sessionEnded
	}
}
