package runner

import (
	"io"
	"sync"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/scoring"
)

// agentStream takes one stream of a driven agent's process (its
// standard error or output, field FieldStderr or FieldStdout) for its
// run: what arrives while a step goes on is the step's, read whole as it
// arrives (a scoring.Stream of the step and field) and kept as an
// excerpt (actors.Excerpt, actors.KeptStderrBytes) for the step's
// record; what arrives before the first step is the first step's, and
// after the last, the last one's. It is safe for concurrent use.
type agentStream struct {
	mu    sync.Mutex
	scan  *scoring.LeakScan
	field string
	step  string
	st    *scoring.Stream
	ex    *actors.Excerpt
}

// Write implements io.Writer; it never fails.
func (a *agentStream) Write(p []byte) (int, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st == nil {
		return len(p), nil // no step yet: startStep makes the first
	}
	a.st.Write(p)
	a.ex.Write(p)
	return len(p), nil
}

// startStep makes step the current one: what arrives from now on is
// its.
func (a *agentStream) startStep(step string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st != nil {
		if a.step == step {
			return
		}
		a.st.Flush()
	}
	a.step, a.st, a.ex = step, a.scan.Stream(step, a.field), actors.NewExcerpt(actors.KeptStderrBytes, nil)
}

// excerpt is what the record keeps of the current step's part, and the
// step it belongs to.
func (a *agentStream) excerpt() (step, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ex == nil {
		return "", ""
	}
	return a.step, a.ex.String()
}

// agentOutput is a driven agent's standard error and output (agentStream
// each).
type agentOutput struct {
	stderr, stdout *agentStream
}

// newAgentOutput is the agentOutput of a run whose LeakScan is scan.
func newAgentOutput(scan *scoring.LeakScan) *agentOutput {
	return &agentOutput{stderr: &agentStream{scan: scan, field: scoring.FieldStderr}, stdout: &agentStream{scan: scan, field: scoring.FieldStdout}}
}

// startStep makes step the current one of both streams.
func (a *agentOutput) startStep(step string) {
	a.stderr.startStep(step)
	a.stdout.startStep(step)
}

// keep puts in sr, when it is the record of the streams' current step,
// their excerpts (ActorStderr, ActorStdout), those that are not empty.
func (a *agentOutput) keep(sr *rundir.StepRecord) {
	if step, text := a.stderr.excerpt(); text != "" && step == sr.Step {
		sr.ActorStderr = text
	}
	if step, text := a.stdout.excerpt(); text != "" && step == sr.Step {
		sr.ActorStdout = text
	}
}

// agentEnvs is a Driver's AgentEnv with the run's agentOutput
// (actors.StderrEnv, actors.StdoutEnv) and the run's case id and
// configuration name (actors.RunEnv).
type agentEnvs struct {
	*agentBridge
	out            *agentOutput
	caseID, config string
}

// Run implements actors.RunEnv.
func (e agentEnvs) Run() (caseID, config string) { return e.caseID, e.config }

// Stderr implements actors.StderrEnv.
func (e agentEnvs) Stderr() io.Writer { return e.out.stderr }

// Stdout implements actors.StdoutEnv.
func (e agentEnvs) Stdout() io.Writer { return e.out.stdout }
