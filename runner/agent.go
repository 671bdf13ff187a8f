package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// agentGrace is how long a driven agent has, once its run is over, to
// take its last result and end on its own before Drive's context is
// cancelled (which kills an external agent's processes).
const agentGrace = 2 * time.Second

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
// step's StepEnv (driven). The result of a call that ends a step is held
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

// startDriver starts the run's Driver on a bridge whose step is the
// first, step, of task task. stopDriver ends the run for it, gives it
// agentGrace to end on its own, then cancels Drive's context and waits
// for Drive: what the agent sent until then has been scanned.
func (r *run) startDriver(ctx context.Context, d actors.Driver, step, task string) {
	b := newAgentBridge(r.scan())
	b.step, b.task = step, task
	r.bridge = b
	dctx, cancel := context.WithCancel(ctx)
	r.stopDriver = func() {
		b.finish()
		select {
		case <-b.done:
		case <-time.After(agentGrace):
		}
		cancel()
		<-b.done
		b.endSession()
	}
	go func() {
		b.err = d.Drive(dctx, r.agentEnv(b))
		close(b.done)
	}()
}

// taskText is a step's first messages as one text, for an external
// agent.
func taskText(msgs []actors.Message) string {
	var parts []string
	for _, m := range msgs {
		parts = append(parts, strings.TrimSpace(m.Content))
	}
	return strings.Join(parts, "\n\n")
}

// drivenLoop runs step s in the tools protocol with a Driver: the calls
// the external agent makes go to the step's StepEnv until the step
// commits or ends (a budget spent, the proposals spent, the agent gone).
// Each call is recorded as a turn, its tokens counted by the tokenizer
// (prompt: the result, and the task on the first call; completion: the
// call). The error is ctx's, a *DriverError when the agent ended
// without calling a tool at all (an error run), or actors.ErrNoToolCalled
// when the agent said so and sent nothing that leaked: the run is not
// recorded (Run returns the error).
func (r *run) drivenLoop(ctx context.Context, d actors.Driver, s *bench.Step, sr *rundir.StepRecord, view any, viewJSON, submit string) (bool, error) {
	env := r.newEnv(s, sr, view, submit)
	msgs, err := r.toolsMessages(s, sr.Phase, view, viewJSON)
	if err != nil {
		return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
	}
	env.prompt = msgs
	sr.Prompt = recordMessages(msgs)
	task := taskText(msgs)
	if r.bridge == nil {
		r.startDriver(ctx, d, s.ID, task)
	} else {
		r.bridge.setTask(s.ID, task)
	}
	b := r.bridge
	first := true
	for !env.Over() {
		select {
		case ac := <-b.calls:
			b.n++
			text, rec, err := env.Call(ctx, ac.call)
			if err != nil {
				return false, err
			}
			prompt := r.tc.count(text)
			if first {
				prompt += r.tc.count(task)
				first = false
			}
			u := actors.Usage{Prompt: prompt, Completion: r.tc.count(ac.call.Name) + r.tc.count(ac.call.Arguments), Source: r.tc.source}
			r.add(&u, false)
			sr.Turns = append(sr.Turns, rundir.Turn{RequestDigest: requestDigest(append(msgs, actors.Message{Role: "assistant", ToolCalls: []actors.ToolCall{ac.call}})),
				Calls: []rundir.ToolCall{rec}, Tokens: recordUsage(u)})
			reply := agentReply{text: text, isError: rec.Error != ""}
			if env.Over() {
				b.mu.Lock()
				b.held, b.held2 = &ac, reply
				b.mu.Unlock()
			} else {
				ac.reply <- reply
			}
		case text := <-b.msgs:
			r.output(scoring.Output{Step: s.ID, Field: scoring.FieldMCPMessage, Text: text})
		case <-b.done:
			err := b.err
			if b.n == 0 && errors.Is(err, actors.ErrNoToolCalled) {
				if !r.scan().Leaked() {
					return false, err // nothing done: no run is recorded
				}
				err = nil // its messages leaked: that is an outcome
			}
			if b.n == 0 && err != nil {
				return true, r.actorError(ctx, sr, msgs, 1, &DriverError{Err: err})
			}
			env.end(EndedAgentExited)
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
	if env.endRun {
		return true, nil
	}
	sr.Ended = env.Ended()
	return false, nil
}

// DriverError is the failure of an external agent that ended without
// calling any tool (it did not start, or failed at once): its run is an
// error run, as an exec actor's failure is.
type DriverError struct{ Err error }

func (e *DriverError) Error() string {
	return "the agent ended without calling a tool: " + e.Err.Error()
}
func (e *DriverError) Unwrap() error { return e.Err }
