package actors

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/patchbench/patchbench/tools"
)

// MCP environment variables of an mcp:COMMAND agent.
const (
	EnvMCPURL   = "PATCHBENCH_MCP_URL"
	EnvMCPToken = "PATCHBENCH_MCP_TOKEN"
)

// MCPStdioName is the actor name of a run served by patchbench mcp.
const MCPStdioName = "mcp:stdio"

// MCPInstructions is the server's instructions for a client: the run's
// case id and configuration name ("PatchBench case ID, configuration
// NAME."), how the case goes, then the first step's task.
func MCPInstructions(caseID, config, task string) string {
	return fmt.Sprintf("PatchBench case %s, configuration %s. The case is a workflow of steps on a shared JSON state; "+
		"you do each step in turn through %s tools: %s; a verifier checks each proposal before it is committed. "+
		"A commit moves to the next step, whose task the result gives (and the prompt \"task\" always holds the current step's task).\n\n"+
		"The first step's task:\n%s", caseID, config, tools.Count(), tools.Usages(), task)
}

// newMCPServer is the MCP server of one run (github.com/modelcontextprotocol/go-sdk):
// the step's tools (tools.All: read_state, propose_patch), answered by
// calls.env (their arguments are passed on as sent, unknown members and
// malformed values answered by env as error results; arguments over
// calls.maxAnswer bytes are cut to their first KeptAnswerBytes and
// answered as over-size); the prompt "task", the current step's task;
// and instructions. Every tools/call goes to env, whatever tool it
// names: an unknown tool is env's to answer, and counts against the
// step's budgets.
func newMCPServer(calls *mcpCalls, instructions string) *mcp.Server {
	env := calls.env
	srv := mcp.NewServer(&mcp.Implementation{Name: "patchbench", Version: "1"}, &mcp.ServerOptions{Instructions: instructions})
	for _, t := range tools.Specs() {
		srv.AddTool(&mcp.Tool{Name: t.Name, Description: t.Description, InputSchema: t.Parameters},
			func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
				return toolResult(calls.call(ctx, req.Params.Name, req.Params.Arguments)), nil
			})
	}
	// The SDK answers a call of a tool it does not know itself, which
	// neither counted the call nor scanned its name: every tools/call
	// goes to env here instead.
	srv.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			if r, ok := req.(*mcp.CallToolRequest); ok && method == "tools/call" && r.Params != nil {
				return toolResult(calls.call(ctx, r.Params.Name, r.Params.Arguments)), nil
			}
			return next(ctx, method, req)
		}
	})
	srv.AddPrompt(&mcp.Prompt{Name: "task", Description: "the current step's task"},
		func(context.Context, *mcp.GetPromptRequest) (*mcp.GetPromptResult, error) {
			return &mcp.GetPromptResult{Description: "the current step's task",
				Messages: []*mcp.PromptMessage{{Role: "user", Content: &mcp.TextContent{Text: env.Task()}}}}, nil
		})
	return srv
}

// toolResult is a tools/call result of one text.
func toolResult(text string, isErr bool) *mcp.CallToolResult {
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: isErr}
}

// StdoutEnv is an AgentEnv that takes what the agent's process writes to
// standard output (an mcp: agent's, which answers over MCP, not there):
// Stdout is the writer that receives it, whole, as it arrives, from
// another goroutine; it never fails. The runner records an excerpt of it
// and scans it for leaks, as it does standard error (StderrEnv).
type StdoutEnv interface {
	AgentEnv
	Stdout() io.Writer
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
	// maxAnswer bounds a tool call's arguments, in bytes; one HTTP
	// request of the agent is read up to mcpMessageBound(maxAnswer).
	maxAnswer int64
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
	return &MCPAgent{spec: spec, argv: argv, timeout: timeout, maxAnswer: answerLimit(maxAnswer)}, nil
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
	calls := &mcpCalls{env: env, maxAnswer: a.maxAnswer}
	var caseID, config string
	if re, ok := env.(RunEnv); ok {
		caseID, config = re.Run()
	}
	srv := newMCPServer(calls, MCPInstructions(caseID, config, env.Task()))
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, nil)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fmt.Errorf("%s: %w", a.spec, err)
	}
	gate := bearerOnly(path, token, mcpMessageBound(a.maxAnswer), calls, h)
	hs := &http.Server{Handler: gate, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	defer func() {
		// Every request read before Drive returns is handed to the run
		// first: the runner scores the run once Drive returned.
		hs.Close()
		gate.end()
	}()
	cctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, a.argv[0], a.argv[1:]...)
	cmd.Env = append(os.Environ(), EnvMCPURL+"=http://"+ln.Addr().String()+path, EnvMCPToken+"="+token)
	var tee io.Writer
	if se, ok := env.(StderrEnv); ok {
		tee = se.Stderr()
	}
	stderr := NewExcerpt(KeptStderrBytes, tee)
	var stdout io.Writer = io.Discard
	if so, ok := env.(StdoutEnv); ok {
		stdout = so.Stdout()
	}
	cmd.Stdout, cmd.Stderr = stdout, stderr
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
// 50 s.
const maxMCPSessions = 8

// bearerOnly serves h at path to requests that carry the bearer token,
// opening at most maxMCPSessions sessions (a POST without an
// Mcp-Session-Id header opens one; past the bound it gets 429); anything
// else is refused. Every request the agent sends is its output, whatever
// its method, path, token or session: before it is routed or its token
// checked, its head (request line, every header but the right
// Authorization, requestHead) and its body, read up to bound bytes, are
// handed to the run (AgentEnv.Message), what was read of a body whose
// client went away too. A longer body does not reach h: what was read of
// it is handed on, the rest only counted (a POST's up to maxDrainBytes),
// and a POST is answered by calls (mcpCalls.oversize: a tools/call is
// made, over-size, and answered; anything else gets HTTP 413 with a
// JSON-RPC error), any other method with HTTP 413. A tools/call whose
// params the SDK would refuse is made and answered here too
// (mcpCalls.badCall), so that it counts. Once end was called, requests
// are no longer handed on (the run is scored) and get HTTP 503.
func bearerOnly(path, token string, bound int64, calls *mcpCalls, h http.Handler) *bearerGate {
	return &bearerGate{path: path, want: []byte("Bearer " + token), bound: bound, calls: calls, h: h}
}

// bearerGate is the handler bearerOnly makes.
type bearerGate struct {
	path     string
	want     []byte // the right Authorization header
	bound    int64
	calls    *mcpCalls
	h        http.Handler
	sessions atomic.Int64
	// mu is held for reading while a request is read and handed to the
	// run; end takes it for writing, so that it waits for those under
	// way, and sets ended.
	mu    sync.RWMutex
	ended bool
}

// end waits for the requests being read and handed to the run, and
// hands on none after them. The server is closed first, so that none
// waits on a client.
func (g *bearerGate) end() {
	g.mu.Lock()
	g.ended = true
	g.mu.Unlock()
}

// take reads r's body up to bound+1 bytes and hands r's head and what
// was read of its body to the run; ok is false once end was called. The
// run is not given the request's context: a message whose client went
// away is the agent's all the same.
func (g *bearerGate) take(r *http.Request) (body []byte, ok bool, err error) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.ended {
		return nil, false, nil
	}
	ctx := context.WithoutCancel(r.Context())
	g.calls.env.Message(ctx, requestHead(r, g.want))
	body, err = io.ReadAll(io.LimitReader(r.Body, g.bound+1))
	if len(bytes.TrimSpace(body)) > 0 {
		g.calls.env.Message(ctx, string(body[:min(int64(len(body)), g.bound)]))
	}
	if err == nil && int64(len(body)) <= g.bound && len(r.Trailer) > 0 {
		g.calls.env.Message(ctx, headerLines(r.Trailer, nil))
	}
	return body, true, err
}

// ServeHTTP implements http.Handler.
func (g *bearerGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, ok, err := g.take(r)
	switch {
	case !ok:
		http.Error(w, "the run is over", http.StatusServiceUnavailable)
		return
	case err != nil:
		http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
		return
	}
	if r.URL.Path != g.path {
		http.NotFound(w, r)
		return
	}
	if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), g.want) != 1 {
		w.Header().Set("WWW-Authenticate", "Bearer")
		http.Error(w, "a bearer token is required (PATCHBENCH_MCP_TOKEN)", http.StatusUnauthorized)
		return
	}
	if r.Method == http.MethodPost && r.Header.Get("Mcp-Session-Id") == "" && g.sessions.Add(1) > maxMCPSessions {
		http.Error(w, fmt.Sprintf("more than %d MCP sessions in one run", maxMCPSessions), http.StatusTooManyRequests)
		return
	}
	if int64(len(body)) > g.bound {
		if r.Method != http.MethodPost {
			http.Error(w, fmt.Sprintf("the request's body has more than the %d bytes this server reads", g.bound), http.StatusRequestEntityTooLarge)
			return
		}
		rest, _ := io.Copy(io.Discard, io.LimitReader(r.Body, maxDrainBytes))
		reply, isErr := g.calls.oversize(r.Context(), body[:g.bound], int64(len(body))+rest, g.bound)
		w.Header().Set("Content-Type", "application/json")
		if isErr {
			w.WriteHeader(http.StatusRequestEntityTooLarge)
		}
		w.Write(reply)
		return
	}
	if r.Method == http.MethodPost {
		if reply, ok := g.calls.badCall(r.Context(), bytes.TrimSpace(body)); ok {
			w.Header().Set("Content-Type", "application/json")
			w.Write(reply)
			return
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	g.h.ServeHTTP(w, r)
}

// requestHead is r's head as one text, as the agent sent it but for the
// case of header names: the request line (method, the URL as sent,
// protocol), Host, Transfer-Encoding and every header, each value on a
// line of its own, but for an Authorization value equal to want (the
// run's own token, which is no canary).
func requestHead(r *http.Request, want []byte) string {
	uri := r.RequestURI
	if uri == "" {
		uri = r.URL.String()
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s\n", r.Method, uri, r.Proto)
	if r.Host != "" {
		fmt.Fprintf(&b, "Host: %s\n", r.Host)
	}
	for _, te := range r.TransferEncoding {
		fmt.Fprintf(&b, "Transfer-Encoding: %s\n", te)
	}
	b.WriteString(headerLines(r.Header, want))
	return b.String()
}

// headerLines is h as lines "Name: value", names sorted, leaving out an
// Authorization value equal to skip.
func headerLines(h http.Header, skip []byte) string {
	var b strings.Builder
	for _, name := range slices.Sorted(maps.Keys(h)) {
		for _, v := range h[name] {
			if name == "Authorization" && skip != nil && subtle.ConstantTimeCompare([]byte(v), skip) == 1 {
				continue
			}
			fmt.Fprintf(&b, "%s: %s\n", name, v)
		}
	}
	return b.String()
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
// client ends the session (closes standard input) or ctx ends (the
// runner ends it a grace period after the run is over: what the client
// sent until then is scanned as the run's); the session then goes on
// answering (every call hears that the case is over) until the client
// goes, which Wait waits for. Every line the client sends is read up to a bound
// (twice MaxAnswer, 0 meaning DefaultMaxAnswerBytes, and room for the
// envelope) and handed to the run before it is acted on; a line that is
// not a JSON-RPC message is answered with a JSON-RPC error and the
// session goes on (stdioGate). Why the session ended goes to Log, when
// set. A session that ends without a tools/call (a client that only
// initialised and listed the tools) makes Drive return ErrNoToolCalled,
// so that the run is not recorded and stays to do (NoToolCalled).
type MCPStdio struct {
	In           io.ReadCloser
	Out          io.WriteCloser
	CaseID       string
	Config       string
	MaxAnswer    int64
	Log          io.Writer
	sessionEnded chan struct{}
	noCall       bool
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
	limit := answerLimit(a.MaxAnswer)
	calls := &mcpCalls{env: env, maxAnswer: limit}
	srv := newMCPServer(calls, MCPInstructions(a.CaseID, a.Config, env.Task()))
	a.sessionEnded = make(chan struct{})
	out := &lockedWriter{w: a.Out}
	pr, pw := io.Pipe()
	gate := &stdioGate{in: bufio.NewReaderSize(a.In, 64<<10), out: out, sdk: pw, bound: mcpMessageBound(limit), calls: calls, env: env}
	sctx := context.WithoutCancel(ctx)
	sess, err := srv.Connect(sctx, &mcp.IOTransport{Reader: pr, Writer: out, MaxLineLength: -1}, nil)
	if err != nil {
		close(a.sessionEnded)
		return err
	}
	why := make(chan error, 1)
	go func() {
		err := gate.run(sctx)
		why <- err
		pw.CloseWithError(err)
	}()
	go func() {
		werr := sess.Wait()
		a.In.Close()
		if a.Log != nil {
			select {
			case err := <-why:
				if errors.Is(err, io.EOF) {
					fmt.Fprintln(a.Log, "patchbench mcp: the session ended: the client closed standard input (EOF)")
				} else {
					fmt.Fprintf(a.Log, "patchbench mcp: the session ended: %v\n", err)
				}
			default:
				fmt.Fprintf(a.Log, "patchbench mcp: the session ended: %v\n", sessionError(werr))
			}
		}
		close(a.sessionEnded)
	}()
	// Drive goes on past the run's end: what the client sends until it
	// ends the session, or the runner ends Drive (its grace once the run
	// is over), is the run's output, scanned before the run is scored.
	select {
	case <-a.sessionEnded:
		if calls.n.Load() == 0 {
			a.noCall = true
			return ErrNoToolCalled // the client only looked: the run stays to do
		}
	case <-ctx.Done():
	}
	return nil
}

// sessionError says why the SDK ended a session that its client did not
// end.
func sessionError(err error) string {
	if err == nil {
		return "the server closed it"
	}
	return "the transport failed: " + err.Error()
}

// Served reports whether Drive ran: false when the run directory held the
// run already, so that nothing was served.
func (a *MCPStdio) Served() bool { return a.sessionEnded != nil }

// NoToolCalled reports whether Drive ran and the client ended the
// session without calling a tool (Drive returned ErrNoToolCalled). It is
// read once Drive has returned.
func (a *MCPStdio) NoToolCalled() bool { return a.noCall }

// Wait waits for the client to end the session (when Drive ran).
func (a *MCPStdio) Wait() {
	if a.sessionEnded != nil {
		<-a.sessionEnded
	}
}

// The MCP agent's kind: mcp:COMMAND, a run bounded by Params.Timeout and
// an answer by Params.MaxAnswerBytes.
func init() {
	Register(Kind{Spec: "mcp:", Usage: "mcp:COMMAND", New: func(spec string, p Params) (Actor, error) {
		return asActor(NewMCPAgent(spec, p.Timeout, p.MaxAnswerBytes))
	}})
}
