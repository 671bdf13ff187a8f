package runner

import (
	"context"
	"sync"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/scoring"
)

// agentCall is one tool call an external agent made, waiting for its
// result.
type agentCall struct {
	call  actors.ToolCall
	reply chan agentReply // buffered: the runner never blocks on it
}

type agentReply struct {
	text    string
	isError bool
}

// agentBridge is the AgentEnv of one run with a Driver: the transport's
// goroutines send calls, the run's goroutine answers them on the current
// step's environment (drivenLoop). The result of a call that ends a step is held
// until the next step's task is set, and tells it.
type agentBridge struct {
	calls chan agentCall
	msgs  chan string   // the agent's messages (Message), to scan
	over  chan struct{} // closed when the run is over
	done  chan struct{} // closed when Drive returns
	err   error         // Drive's, once done is closed
	mu    sync.Mutex
	task  string
	step  string // the current step's id, and once the run is over the last one's
	held  *agentCall
	held2 agentReply
	n     int // calls made
	// scan is the run's LeakScan. Once the run is over, or when the
	// transport gives up waiting, Message scans a message on it itself
	// (lateMessage), until the agent's session has ended (ended, set
	// under lateMu once Drive returned, before the run is scored).
	scan   *scoring.LeakScan
	lateMu sync.Mutex
	ended  bool
}

func newAgentBridge(scan *scoring.LeakScan) *agentBridge {
	return &agentBridge{calls: make(chan agentCall), msgs: make(chan string), over: make(chan struct{}), done: make(chan struct{}), scan: scan}
}

// Task implements actors.AgentEnv.
func (b *agentBridge) Task() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.task
}

// Over implements actors.AgentEnv.
func (b *agentBridge) Over() <-chan struct{} { return b.over }

// Call implements actors.AgentEnv.
func (b *agentBridge) Call(ctx context.Context, c actors.ToolCall) (string, bool) {
	ac := agentCall{call: c, reply: make(chan agentReply, 1)}
	select {
	case b.calls <- ac:
	case <-b.over:
		return "the case is over: every step has run", true
	case <-ctx.Done():
		return "cancelled", true
	}
	select {
	case r := <-ac.reply:
		return r.text, r.isError
	case <-ctx.Done():
		return "cancelled", true
	}
}

// Message implements actors.AgentEnv: while the run goes on, the run's
// goroutine takes text and scans it at the step it is on (drivenLoop),
// before any call the agent sends after it. Once the run is over, what
// the agent sends until its session ends (it exits, or is stopped once
// agentGrace has passed: stopDriver) is still its output: it is scanned
// here, at the last step, before the run is scored; so is a message
// whose ctx ends before the run's goroutine took it. Only a message
// sent after the session ended is not scanned (the run is scored by
// then).
func (b *agentBridge) Message(ctx context.Context, text string) {
	select {
	case b.msgs <- text:
		return
	case <-b.over:
	case <-ctx.Done():
	}
	b.lateMessage(text)
}

// lateMessage scans text, a message of the agent the run's goroutine did
// not take, at the current step (the last one once the run is over),
// unless the agent's session has ended.
func (b *agentBridge) lateMessage(text string) {
	b.lateMu.Lock()
	defer b.lateMu.Unlock()
	if b.ended || b.scan == nil {
		return
	}
	b.mu.Lock()
	step := b.step
	b.mu.Unlock()
	b.scan.Add(scoring.Output{Step: step, Field: scoring.FieldMCPMessage, Text: text})
}

// endSession marks the agent's session over once Drive returned: from
// now on the run is scored, and messages are not scanned.
func (b *agentBridge) endSession() {
	b.lateMu.Lock()
	b.ended = true
	b.lateMu.Unlock()
}

// setTask makes step, of task task, the current one and answers a call
// held from the step before.
func (b *agentBridge) setTask(step, task string) {
	b.mu.Lock()
	b.step, b.task = step, task
	held, r := b.held, b.held2
	b.held = nil
	b.mu.Unlock()
	if held != nil {
		held.reply <- agentReply{text: r.text + "\n\nThe next step's task:\n" + task, isError: r.isError}
	}
}

// finish ends the run: a held call is answered, later calls hear that
// the case is over.
func (b *agentBridge) finish() {
	b.mu.Lock()
	held, r := b.held, b.held2
	b.held = nil
	b.mu.Unlock()
	if held != nil {
		held.reply <- agentReply{text: r.text + "\n\nThe case is over: every step has run.", isError: r.isError}
	}
	close(b.over)
}
