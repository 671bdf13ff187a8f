package runner

import (
	"io"
	"sync"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/scoring"
)

// stderrStream is the writer an attempt's Request.Stderr hands an exec
// program's standard error to: the run's LeakScan reads it whole as it
// arrives (scoring.Stream), in the step's field scoring.FieldStderr,
// while the actor keeps only an excerpt for the record. Flush it once
// the actor answered.
func (r *run) stderrStream(step string) *scoring.Stream {
	return r.scan().Stream(step, scoring.FieldStderr)
}

// agentStderr takes a driven agent's standard error (an mcp: agent's
// process) for its run: what arrives while a step goes on is the step's,
// read whole as it arrives (a scoring.Stream of the step, field
// scoring.FieldStderr) and kept as an excerpt (actors.Excerpt) for the
// step's record; what arrives before the first step is the first step's,
// and after the last, the last one's. It is safe for concurrent use.
type agentStderr struct {
	mu   sync.Mutex
	scan *scoring.LeakScan
	step string
	st   *scoring.Stream
	ex   *actors.Excerpt
}

// Write implements io.Writer; it never fails.
func (a *agentStderr) Write(p []byte) (int, error) {
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
func (a *agentStderr) startStep(step string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.st != nil {
		if a.step == step {
			return
		}
		a.st.Flush()
	}
	a.step, a.st, a.ex = step, a.scan.Stream(step, scoring.FieldStderr), actors.NewExcerpt(actors.KeptStderrBytes, nil)
}

// excerpt is what the record keeps of the current step's part, and the
// step it belongs to.
func (a *agentStderr) excerpt() (step, text string) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.ex == nil {
		return "", ""
	}
	return a.step, a.ex.String()
}

// stderrEnv is a Driver's AgentEnv with the run's agentStderr
// (actors.StderrEnv).
type stderrEnv struct {
	*agentBridge
	w *agentStderr
}

// Stderr implements actors.StderrEnv.
func (e stderrEnv) Stderr() io.Writer { return e.w }

// agentEnv is the AgentEnv a Driver is given: bridge b, and the run's
// agentStderr for what the agent writes to standard error.
func (r *run) agentEnv(b *agentBridge) actors.AgentEnv {
	if r.agentErr == nil {
		r.agentErr = &agentStderr{scan: r.scan()}
	}
	return stderrEnv{agentBridge: b, w: r.agentErr}
}
