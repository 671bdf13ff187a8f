package actors

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/patchbench/patchbench/internal/textcut"
)

// The JSON-RPC 2.0 error codes the MCP transports answer themselves.
const (
	rpcParseError     = jsonrpc.CodeParseError     // -32700: the message is not JSON
	rpcInvalidRequest = jsonrpc.CodeInvalidRequest // -32600: JSON, but not a JSON-RPC message
)

// mcpMessageBound is the longest MCP message a transport reads whole, in
// bytes, for an answer limit of maxAnswer bytes: twice the answer (its
// JSON escapes) and room for the envelope, as a provider's response body
// gets. Past it a message is read no further than counting its length.
func mcpMessageBound(maxAnswer int64) int64 { return bodyBound(maxAnswer) }

// mcpCalls makes the tool calls of one MCP server on its AgentEnv: every
// tools/call a client sends, whatever tool it names, goes to env.Call, so
// that it counts against the step's budgets and its name, arguments and
// id are scanned for leaks.
type mcpCalls struct {
	env       AgentEnv
	maxAnswer int64 // the longest arguments passed on whole, in bytes
	n         atomic.Int64
}

// call makes one tool call of the tool name with the JSON arguments args
// (nil or null: {}). Arguments over the answer limit are cut to their
// first KeptAnswerBytes before the runner sees them (ToolCall.Oversize),
// so that no count works on more; the message they came in has been
// scanned whole up to the transport's bound (mcp_message) already, so a
// canary past the kept part is still counted.
func (c *mcpCalls) call(ctx context.Context, name string, args []byte) (string, bool) {
	return c.callSized(ctx, name, args, int64(len(args)))
}

// callSized is call for arguments of which args is the start and size
// the length.
func (c *mcpCalls) callSized(ctx context.Context, name string, args []byte, size int64) (string, bool) {
	tc := ToolCall{ID: fmt.Sprintf("mcp_%d", c.n.Add(1)), Name: name}
	switch {
	case size > c.maxAnswer || int64(len(args)) < size:
		tc.Arguments, tc.Oversize = textcut.Cut(string(args[:min(len(args), KeptAnswerBytes)]), KeptAnswerBytes), size
	case len(args) == 0 || string(args) == "null":
		tc.Arguments = "{}"
	default:
		tc.Arguments = string(args)
	}
	return c.env.Call(ctx, tc)
}

// oversize answers a message longer than the transport's bound, of which
// prefix is the start (up to the bound) and total the length in bytes.
// When the prefix shows a tools/call (its method, and the tool's name
// before the arguments), the call is made with the arguments' start,
// sized to the rest of the message, so that it counts against the step's
// budgets as any call does and is recorded as over-size; the answer is
// its result. Any other message is answered with an Invalid Request
// error. The answer goes to the prefix's id (null when the prefix shows
// none). isError reports a JSON-RPC error answer.
func (c *mcpCalls) oversize(ctx context.Context, prefix []byte, total, bound int64) (reply []byte, isError bool) {
	h := peekHeader(prefix)
	if h.method == "tools/call" && h.argsAt >= 0 {
		text, isErr := c.callSized(ctx, h.name, prefix[h.argsAt:], total-int64(h.argsAt))
		return rpcResult(h.id, text, isErr), false
	}
	return rpcError(h.id, rpcInvalidRequest, fmt.Sprintf("Invalid Request: the message has %d bytes, more than the %d this server reads", total, bound)), true
}

// badCall makes the call of a tools/call request (msg, valid JSON) whose
// params the SDK would refuse before any handler saw it (none, null, not
// an object, a name that is not a string), so that it counts against the
// step's budgets as any call does: the tool's name is the name's JSON as
// sent, the arguments the arguments' (or the params', when they are not
// an object). The answer is its result, to the request's id; ok is false
// for any other message, which the SDK is to answer.
func (c *mcpCalls) badCall(ctx context.Context, msg []byte) (reply []byte, ok bool) {
	m, err := jsonrpc.DecodeMessage(msg)
	req, isReq := m.(*jsonrpc.Request)
	if err != nil || !isReq || req.Method != "tools/call" || !req.ID.IsValid() {
		return nil, false
	}
	var p struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	params := bytes.TrimSpace(req.Params)
	if len(params) > 0 && string(params) != "null" && json.Unmarshal(params, &p) == nil {
		return nil, false
	}
	var loose struct {
		Name      json.RawMessage `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	args := []byte(params)
	if json.Unmarshal(params, &loose) == nil {
		args = loose.Arguments
	}
	text, isErr := c.call(ctx, string(loose.Name), args)
	return rpcResult(peekHeader(msg).id, text, isErr), true
}

// header is what the start of a JSON-RPC message shows: its id (raw JSON,
// nil when not shown or not a string or number), method, the tool's name
// (params.name) and where the arguments' value starts (params.arguments;
// -1 when not shown).
type header struct {
	id     json.RawMessage
	method string
	name   string
	argsAt int
}

// peekHeader reads what it can of a JSON-RPC message's members from its
// start b, which may be cut anywhere.
func peekHeader(b []byte) header {
	h := header{argsAt: -1}
	d := json.NewDecoder(bytes.NewReader(b))
	if t, err := d.Token(); err != nil || t != json.Delim('{') {
		return h
	}
	for d.More() {
		k, err := d.Token()
		if err != nil {
			return h
		}
		switch k {
		case "id":
			var raw json.RawMessage
			if d.Decode(&raw) != nil {
				return h
			}
			if validID(raw) {
				h.id = raw
			}
		case "method":
			if d.Decode(&h.method) != nil {
				return h
			}
		case "params":
			if t, err := d.Token(); err != nil || t != json.Delim('{') {
				return h
			}
			for d.More() {
				pk, err := d.Token()
				if err != nil {
					return h
				}
				switch pk {
				case "name":
					if d.Decode(&h.name) != nil {
						return h
					}
				case "arguments":
					// The value starts after the colon and any space.
					at := int(d.InputOffset())
					for at < len(b) && (b[at] == ':' || b[at] == ' ' || b[at] == '\t' || b[at] == '\r' || b[at] == '\n') {
						at++
					}
					h.argsAt = at
					return h
				default:
					var skip json.RawMessage
					if d.Decode(&skip) != nil {
						return h
					}
				}
			}
			if _, err := d.Token(); err != nil {
				return h
			}
		default:
			var skip json.RawMessage
			if d.Decode(&skip) != nil {
				return h
			}
		}
	}
	return h
}

// validID reports whether raw is a JSON-RPC id this server answers to: a
// string or a number.
func validID(raw json.RawMessage) bool {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64:
		return true
	}
	return false
}

// rpcError is a JSON-RPC 2.0 error response to id (null when nil), one
// line.
func rpcError(id json.RawMessage, code int64, message string) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int64  `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}{code, message}})
	return b
}

// rpcResult is a JSON-RPC 2.0 response to id (null when nil) holding a
// tools/call result of one text, one line.
func rpcResult(id json.RawMessage, text string, isError bool) []byte {
	if id == nil {
		id = json.RawMessage("null")
	}
	type content struct {
		Type string `json:"type"`
		Text string `json:"text"`
	}
	type result struct {
		Content []content `json:"content"`
		IsError bool      `json:"isError,omitempty"`
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  result          `json:"result"`
	}{"2.0", id, result{[]content{{"text", text}}, isError}})
	return b
}

// lockedWriter serialises the writes of the SDK's transport and of the
// gate (one whole message per Write).
type lockedWriter struct {
	mu sync.Mutex
	w  io.WriteCloser
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return l.w.Close() }

// stdioGate stands between an MCP client's stream of newline-delimited
// messages and the SDK's transport, which ends the session at the first
// line it cannot read. Each line is read up to the bound (the rest only
// counted), handed to the run (AgentEnv.Message) and then: a message
// over the bound is answered here (mcpCalls.oversize); a line that is not
// JSON is answered with a Parse error (-32700, id null), and JSON that is
// not one JSON-RPC 2.0 message (a batch among them, which MCP no longer
// has) with an Invalid Request error (-32600); a tools/call whose params
// the SDK would refuse is made here (mcpCalls.badCall); the session goes
// on. Only valid messages reach the SDK, through sdk.
type stdioGate struct {
	in    *bufio.Reader
	out   io.Writer // the locked writer the SDK writes through too
	sdk   *io.PipeWriter
	bound int64
	calls *mcpCalls
	env   AgentEnv
}

// run reads the client until its stream ends or the SDK stops reading,
// and returns why: io.EOF when the client closed its stream, else the
// read or write error. The caller closes sdk.
func (g *stdioGate) run(ctx context.Context) error {
	for {
		line, total, rerr := readBoundedLine(g.in, g.bound)
		if line = bytes.TrimSpace(line); len(line) > 0 {
			if err := g.handle(ctx, line, total); err != nil {
				return err
			}
		}
		if rerr != nil {
			return rerr
		}
	}
}

// handle passes on or answers one line (line: its start, up to the bound,
// without surrounding space; total: its length).
func (g *stdioGate) handle(ctx context.Context, line []byte, total int64) error {
	g.env.Message(ctx, string(line))
	var reply []byte
	switch {
	case total > g.bound:
		reply, _ = g.calls.oversize(ctx, line, total, g.bound)
	case !json.Valid(line):
		reply = rpcError(nil, rpcParseError, "Parse error: the line is not one JSON value")
	case line[0] == '[':
		reply = rpcError(nil, rpcInvalidRequest, "Invalid Request: batches are not supported; send one message per line")
	default:
		if _, err := jsonrpc.DecodeMessage(line); err != nil {
			reply = rpcError(peekHeader(line).id, rpcInvalidRequest, "Invalid Request: "+err.Error())
			break
		}
		var ok bool
		if reply, ok = g.calls.badCall(ctx, line); ok {
			break
		}
		_, err := g.sdk.Write(append(line, '\n'))
		return err
	}
	_, err := g.out.Write(append(reply, '\n'))
	return err
}

// readBoundedLine reads one line of r (up to '\n' or the stream's end):
// its first bound+1 bytes at most, without the newline, and its length;
// the rest of a longer line is read and dropped. The error is the
// stream's (io.EOF at its end), with what was read before it.
func readBoundedLine(r *bufio.Reader, bound int64) ([]byte, int64, error) {
	var line []byte
	var total int64
	for {
		chunk, err := r.ReadSlice('\n')
		total += int64(len(chunk))
		if room := bound + 1 - int64(len(line)); room > 0 {
			line = append(line, chunk[:min(int64(len(chunk)), room)]...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil {
			total--
			if int64(len(line)) <= bound {
				line = line[:len(line)-1]
			}
		}
		return line[:min(int64(len(line)), bound)], total, err
	}
}
