package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
	"github.com/patchbench/patchbench/tools"
)

// agentGrace is how long a driven agent has, once its run is over, to
// take its last result and end on its own before Drive's context is
// cancelled (which kills an external agent's processes).
const agentGrace = 2 * time.Second

// startDriver starts the run's Driver on a bridge whose step is the
// first, step, of task task. stopDriver ends the run for it, gives it
// agentGrace to end on its own, then cancels Drive's context and waits
// for Drive: what the agent sent until then has been scanned.
func (r *run) startDriver(ctx context.Context, d actors.Driver, step, task string) {
	b := newAgentBridge(r.leakScan())
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
// the external agent makes go to the step's environment (stepEnv) until the step
// commits or ends (a budget spent, the proposals spent, the agent gone).
// The context budget (Options.ContextTokens) bounds the tokens the agent
// received in the step: a task over it is not handed on, and the result
// of a call that did not commit and would pass it is answered with an
// error saying so; either ends the step as EndedContext.
// Each call is recorded as a turn, its tokens counted by the tokenizer
// (prompt: the result, and the task on the first call; completion: the
// call). The error is ctx's, a *DriverError when the agent ended
// without calling a tool at all (an error run), or actors.ErrNoToolCalled
// when the agent said so and sent nothing that leaked: the run is not
// recorded (Run returns the error).
func (r *run) drivenLoop(ctx context.Context, d actors.Driver, s *bench.Step, sr *rundir.StepRecord, view any, viewJSON, submit string) (bool, error) {
	env := r.newEnv(s, view, submit)
	msgs, err := r.toolsMessages(s, sr.Phase, view, viewJSON)
	if err != nil {
		return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
	}
	endRun := false
	sr.Prompt = recordMessages(msgs)
	task := taskText(msgs)
	// The context budget bounds what the agent receives in the step: the
	// task, then each call's result (the runner sends no conversation;
	// the agent keeps its own). A task over it is not handed on.
	budget, taskTokens := r.o.contextTokens(), r.tc.count(task)
	if taskTokens > budget {
		sr.Ended = EndedContext
		return false, nil
	}
	received := taskTokens
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
			r.outputCall(s.ID, ac.call)
			out, err := env.call(ctx, ac.call)
			if err != nil {
				return false, err
			}
			endRun = endRun || r.proposed(sr, s, env, msgs, out.decided)
			text, rec := out.text, out.rec
			prompt := r.tc.count(text)
			if received+prompt > budget && !env.committed {
				// The result would pass the context budget: the agent
				// is told so instead, and the step ends. (A commit's
				// result is handed on: the step is over with it.)
				// It is recorded as a call past the step's other
				// budgets is: an error, and no read.
				rec.Error, rec.Read, rec.Hidden, rec.Pointer = tools.CodeBudgetSpent, false, false, ""
				text = fmt.Sprintf("error: %s: the context budget of %d tokens is spent: %d received in this step, and the result has %d more; the step is over", rec.Error, budget, received, prompt)
				rec.Result, rec.ResultBytes = clipKept(text)
				env.end(EndedContext)
				prompt = r.tc.count(text)
			}
			received += prompt
			if first {
				prompt += taskTokens
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
				if !r.leakScan().Leaked() {
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
	if endRun {
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

// agentEnv is the AgentEnv a Driver is given: bridge b, the run's
// agentOutput for what the agent writes to standard error and output,
// and the run's case and configuration.
func (r *run) agentEnv(b *agentBridge) actors.AgentEnv {
	return agentEnvs{agentBridge: b, out: r.agentOutput(), caseID: r.j.Case.ID, config: r.j.Config.Name}
}
