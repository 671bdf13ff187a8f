package actors

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode"
)

// runProgram runs cmd as an actor's program is run (the exec actor's, an
// mcp: agent's): in a process group of its own, killed with the group
// when cmd's context ends (killGroup); with the call's mark
// (execCallEnv=PID-N) added to its environment (cmd.Env, or the
// process's when nil); on Linux in a PID namespace of its own, so that
// everything it starts dies when it does, or, where namespaces are not
// allowed, with the harness the subreaper of what it starts (contain,
// exec_linux.go); and, once it has ended, whatever it left running is
// killed: its group and, outside a namespace, every process found to be
// the call's (killRest). It returns how long the program ran and Run's
// error.
//
// started, when not nil, is called once the program has started; waited,
// when not nil, once it has been waited for (with Wait's error), before
// what it left is killed.
func runProgram(cmd *exec.Cmd, started func(), waited func(error)) (time.Duration, error) {
	killGroup(cmd)
	mark := strconv.Itoa(os.Getpid()) + "-" + strconv.FormatInt(execCalls.Add(1), 10)
	if cmd.Env == nil {
		cmd.Env = os.Environ()
	}
	cmd.Env = append(cmd.Env, execCallEnv+"="+mark)
	contained, err := contain(cmd)
	if err != nil {
		return 0, err
	}
	start := time.Now()
	err = startProgram(cmd)
	if err == nil {
		if started != nil {
			started()
		}
		err = waitProgram(cmd)
		if waited != nil {
			waited(err)
		}
	}
	latency := time.Since(start)
	killRest(cmd, mark, contained) // what the program left running dies with it, always
	return latency, err
}

// execCallEnv is the environment variable that marks the processes of one
// call of an exec program: PATCHBENCH_EXEC_CALL=PID-N (the harness's
// process id, the call's number).
const execCallEnv = "PATCHBENCH_EXEC_CALL"

// execCalls counts the programs run, for their marks.
var execCalls atomic.Int64

// ExecProtocol names the version of the exec actor's protocol; it is the
// "protocol" member of every request.
const ExecProtocol = "patchbench-exec/1"

// KeptStderrBytes bounds what a record keeps of what an exec program or
// an mcp: agent writes to standard error (64 KiB: its first and its last
// half, Excerpt); the runner scans it whole as it arrives.
const KeptStderrBytes = 64 << 10

// Bounds of an exec actor's program: its answer is kept up to
// maxExecOutput, and a token count above maxExecTokens is refused.
const (
	maxExecTokens = 100_000_000
	// execWaitDelay is how long the actor waits, once the program has
	// exited or been killed, for what it left running to close its
	// output; then the answer the program wrote is taken and what it
	// left running is killed.
	execWaitDelay = time.Second
)

// ExecRequest is what an exec actor's program reads on its standard
// input: one JSON object, then end of file.
type ExecRequest struct {
	// Protocol is ExecProtocol.
	Protocol string `json:"protocol"`
	// Case, Step and Role name the case, the step and the step's role;
	// Round and Attempt count from 1.
	Case    string `json:"case"`
	Step    string `json:"step"`
	Role    string `json:"role"`
	Round   int    `json:"round"`
	Attempt int    `json:"attempt"`
	// Messages is the prompt, as a chat model gets it (system, user);
	// it ends with the answer's format.
	Messages []Message `json:"messages"`
	// View is the state as the step's actor is shown it (the projected
	// view or the whole state), the same JSON the prompt holds; Projected
	// says which.
	View      any  `json:"view"`
	Projected bool `json:"projected"`
}

// ExecAnswer is what an exec actor's program writes on its standard
// output: one JSON object. Text is the answer, parsed and verified like a
// model's ({"patch": [...], "note": "..."}, or text holding it); Usage,
// when given, the tokens the program spent (non-negative integers);
// Model, the model that answered, recorded with the step. Other members
// are ignored.
type ExecAnswer struct {
	Text  *string `json:"text"`
	Usage *struct {
		Prompt     json.Number `json:"prompt"`
		Completion json.Number `json:"completion"`
		Reasoning  json.Number `json:"reasoning"`
	} `json:"usage"`
	Model string `json:"model"`
}

// Exec is the actor "exec:COMMAND": an external program (an agent
// framework, a script) runs once per attempt at a step, reads an
// ExecRequest on its standard input and writes an ExecAnswer on its
// standard output. The program runs without a shell, in the current
// directory, with the command's environment (and PATCHBENCH_EXEC_CALL,
// the call's mark); it is killed when the timeout passes or the run is
// interrupted, and once it has ended, whatever it left running is killed:
// on Unix its process group, and on Linux also every process that left
// the group (setsid) but carries the call's mark, the harness being their
// subreaper (exec_linux.go says how, and what it cannot find). A program
// that closed its standard output (everything it started too) has
// answered: it has execWaitDelay to exit, then it is killed and its answer
// taken (so at the timeout too). What it writes to standard error is kept
// with the step's record (its first and last 32 KiB), and handed whole,
// as it arrives, to Request.Stderr. A program that exits with a non-zero status,
// times out, or writes anything but one ExecAnswer fails the run as an
// error (*ExecError), never as a rejection; its answers go through the
// same parser and gates as any actor's.
//
// Of the program's standard output, twice the answer limit (plus 64 KiB
// for the JSON around the text) is kept; past that, the rest is read
// without being kept, only to find the "text" string and measure it, so
// an answer of any length costs about that much memory: an answer over the
// limit comes back with its first answer-limit bytes and its length
// (Response.Oversize), and its usage and model are not read.
type Exec struct {
	spec    string
	argv    []string
	timeout time.Duration
	// maxAnswer bounds an answer (0: DefaultMaxAnswerBytes), as
	// Params.MaxAnswerBytes says.
	maxAnswer int64
}

// The exec actor's kind: exec:COMMAND, each call bounded by
// Params.Timeout and its answer by Params.MaxAnswerBytes.
func init() {
	Register(Kind{Spec: "exec:", Usage: "exec:COMMAND", New: func(spec string, p Params) (Actor, error) {
		e, err := NewExec(spec, p.Timeout)
		if err != nil {
			return nil, err
		}
		e.maxAnswer = p.MaxAnswerBytes
		return e, nil
	}})
}

// NewExec makes the actor of a spec "exec:COMMAND". COMMAND is split into
// words as a POSIX shell would, without expanding anything: spaces
// separate words; single quotes, double quotes and backslashes quote.
// The program (the first word) must exist and be executable: a name
// without a slash is looked up in PATH. timeout bounds each call (0: 2
// minutes).
func NewExec(spec string, timeout time.Duration) (*Exec, error) {
	cmd := strings.TrimPrefix(spec, "exec:")
	argv, err := splitWords(cmd)
	if err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if len(argv) == 0 {
		return nil, fmt.Errorf("actor %q: give the command, exec:COMMAND", spec)
	}
	if err := checkProgram(argv); err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if timeout <= 0 {
		timeout = 2 * time.Minute
	}
	return &Exec{spec: spec, argv: argv, timeout: timeout}, nil
}

// scriptExts are the endings of the scripts an interpreter is given
// (node agent.js, python3 agent.py): checkProgram looks for them.
var scriptExts = []string{".js", ".mjs", ".cjs", ".ts", ".py", ".sh", ".rb", ".pl"}

// checkProgram checks, before any run, that an actor's command can start:
// its program is found (exec.LookPath) and every argument that names a
// script (ends as scriptExts; not an option, no spaces: not a shell
// command line) is a file that exists, so
// that a mistyped script is refused once, up front, rather than failing
// every run of the benchmark.
func checkProgram(argv []string) error {
	if _, err := exec.LookPath(argv[0]); err != nil {
		return err
	}
	for _, a := range argv[1:] {
		if strings.HasPrefix(a, "-") || strings.ContainsFunc(a, unicode.IsSpace) || !slices.ContainsFunc(scriptExts, func(e string) bool { return strings.HasSuffix(a, e) }) {
			continue
		}
		if fi, err := os.Stat(a); err != nil {
			return fmt.Errorf("the script %s: %w", a, errors.Unwrap(err))
		} else if fi.IsDir() {
			return fmt.Errorf("the script %s is a directory", a)
		}
	}
	return nil
}

// Name implements Actor: the spec as given.
func (e *Exec) Name() string { return e.spec }

// ExecError is an exec actor's failure: what went wrong and what the
// program wrote to standard error (its first and last 32 KiB: Excerpt), which the runner
// keeps in the step's record, and to standard output (as far as it is
// kept: its first twice the answer limit plus 64 KiB), which the runner
// scans for leaks (a failed answer is an output all the same) and does
// not record.
type ExecError struct {
	Err    error
	Stderr string
	Stdout string
}

func (e *ExecError) Error() string {
	msg := e.Err.Error()
	if tail := lastLine(e.Stderr); tail != "" {
		msg += "; stderr ends " + strconv.Quote(tail)
	}
	return msg
}

func (e *ExecError) Unwrap() error { return e.Err }

// ActorStderr returns what the program wrote to standard error.
func (e *ExecError) ActorStderr() string { return e.Stderr }

// ActorOutput returns what the program wrote to standard output, as far
// as it was kept.
func (e *ExecError) ActorOutput() string { return e.Stdout }

// lastLine is the last non-empty line of s, at most 200 bytes of it.
func lastLine(s string) string {
	s = strings.TrimRightFunc(s, unicode.IsSpace)
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	if len(s) > 200 {
		s = "…" + s[len(s)-200:]
	}
	return s
}

// Propose implements Actor: it runs the program once.
func (e *Exec) Propose(ctx context.Context, req Request) (Response, error) {
	in, err := json.Marshal(ExecRequest{
		Protocol: ExecProtocol, Case: req.CaseID, Step: req.StepID, Role: req.Role, Round: req.Round, Attempt: req.Attempt,
		Messages: req.Messages, View: req.View, Projected: req.Projected,
	})
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", e.spec, err)
	}
	cctx, cancel := context.WithTimeout(ctx, e.timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, e.argv[0], e.argv[1:]...)
	cmd.Stdin = bytes.NewReader(in)
	stdout := newExecOutput(e.maxAnswer, cancel)
	stderr := NewExcerpt(KeptStderrBytes, req.Stderr)
	// Standard output is a pipe of the actor's own, read here, so that
	// its end is seen while the program runs: a program that closed it
	// (and so did whatever it started) has given its answer in full.
	pr, pw, err := os.Pipe()
	if err != nil {
		return Response{}, fmt.Errorf("%s: %w", e.spec, err)
	}
	defer pr.Close()
	cmd.Stdout, cmd.Stderr = pw, stderr
	cmd.WaitDelay = execWaitDelay
	copied, waited := make(chan struct{}), make(chan struct{})
	var closed, killedAfter atomic.Bool
	began := false
	started := func() {
		began = true
		pw.Close()
		go func() {
			defer close(copied)
			if _, err := io.Copy(stdout, pr); err != nil || cctx.Err() != nil {
				return
			}
			// End of file while the program runs: it answered. It has
			// execWaitDelay to exit; then it is killed and its answer
			// taken.
			closed.Store(true)
			select {
			case <-waited:
			case <-cctx.Done():
			case <-time.After(execWaitDelay):
				killedAfter.Store(true)
				cancel()
			}
		}()
	}
	copiedOrLate := func(err error) {
		// What the program left holding its output has execWaitDelay to
		// finish writing it (already spent when Wait waited as long for
		// its standard error).
		close(waited)
		delay := execWaitDelay
		if errors.Is(err, exec.ErrWaitDelay) {
			delay = 0
		}
		select {
		case <-copied:
		case <-time.After(delay):
		}
	}
	latency, runErr := runProgram(cmd, started, copiedOrLate)
	pw.Close()
	if began {
		select {
		case <-copied:
		case <-time.After(execWaitDelay):
			pr.Close() // a process that could not be killed holds the output
			<-copied
		}
	}
	// A program that exited well but left a process holding its stderr
	// open has answered: Run gave up on it after execWaitDelay. So has
	// one that closed its standard output and was then killed, at the
	// timeout or execWaitDelay later.
	exited := cmd.ProcessState != nil && cmd.ProcessState.Success() &&
		(runErr == nil || errors.Is(runErr, exec.ErrWaitDelay))
	if killedBySignal(cmd.ProcessState) && closed.Load() && ctx.Err() == nil &&
		(killedAfter.Load() || errors.Is(cctx.Err(), context.DeadlineExceeded)) {
		exited = true
	}
	fail := func(err error) (Response, error) {
		return Response{Stderr: stderr.String()}, fmt.Errorf("%s: %w", e.spec, &ExecError{Err: err, Stderr: stderr.String(), Stdout: stdout.head.String()})
	}
	switch {
	case ctx.Err() != nil:
		return Response{}, ctx.Err() // the run was interrupted: no outcome
	case stdout.exceeded:
		return fail(fmt.Errorf("the answer is larger than %d MiB", maxExecOutput>>20))
	case errors.Is(cctx.Err(), context.DeadlineExceeded) && !exited:
		return fail(fmt.Errorf("no answer within %v (--timeout); the program was killed", e.timeout))
	case runErr != nil && !exited:
		return fail(fmt.Errorf("the program failed: %w", runErr))
	}
	if sc := stdout.scan; sc != nil {
		// Past what is kept: the answer as the scan found it.
		if !sc.found {
			return fail(fmt.Errorf(`standard output (%d bytes) holds no "text" string; want one JSON object {"text": "..."}`, stdout.n))
		}
		r := (&tooLarge{Answer: sc.text, AnswerBytes: sc.n, Found: true}).response(stdout.answerLimit, false)
		r.Latency, r.Stderr, r.Body = latency, stderr.String(), stdout.head.String()
		return r, nil
	}
	a, err := parseExecAnswer(stdout.head.Bytes())
	if err != nil {
		return fail(err)
	}
	return Response{Raw: *a.Text, Usage: a.usage, Model: a.Model, Latency: latency, Stderr: stderr.String(), Body: stdout.head.String()}, nil
}

// execAnswer is a decoded ExecAnswer with its usage checked.
type execAnswer struct {
	ExecAnswer
	usage *Usage
}

// parseExecAnswer decodes the program's standard output: one JSON object
// holding a string "text", and nothing after it but white space.
func parseExecAnswer(b []byte) (*execAnswer, error) {
	if len(bytes.TrimSpace(b)) == 0 {
		return nil, errors.New(`the program wrote nothing on standard output; want one JSON object {"text": "..."}`)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var a execAnswer
	if err := dec.Decode(&a.ExecAnswer); err != nil {
		return nil, fmt.Errorf(`standard output is not one JSON object {"text": "...", "usage": {...}}: %v (diagnostics go to standard error)`, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("standard output holds more than one JSON value (diagnostics go to standard error)")
	}
	if a.Text == nil {
		return nil, errors.New(`the answer has no "text" string`)
	}
	if u := a.ExecAnswer.Usage; u != nil {
		var counts [3]int
		for i, n := range []json.Number{u.Prompt, u.Completion, u.Reasoning} {
			if n == "" {
				continue
			}
			v, err := strconv.ParseInt(string(n), 10, 64)
			if err != nil || v < 0 || v > maxExecTokens {
				return nil, fmt.Errorf("usage: %s tokens: want an integer in [0, %d]", n, maxExecTokens)
			}
			counts[i] = int(v)
		}
		if counts[2] > counts[1] {
			return nil, fmt.Errorf("usage: %d reasoning tokens are more than the %d completion tokens they are part of", counts[2], counts[1])
		}
		a.usage = &Usage{Prompt: counts[0], Completion: counts[1], Reasoning: counts[2], Source: "exec"}
	}
	return &a, nil
}

// execOutput takes an exec program's standard output: it keeps the first
// keep bytes (twice the answer limit, plus envelopeBytes) in head; past
// them, it hands what it kept and everything after to an answerScanner
// that finds the "text" string and counts its decoded length, keeping
// only its first answerLimit bytes (the answer is used after all when it
// is within the limit). Past maxExecOutput bytes in all it calls over
// (which kills the program) and fails. (It has no ReadFrom, so that
// io.Copy goes through Write.)
type execOutput struct {
	head        bytes.Buffer
	keep        int
	answerLimit int64
	scan        *answerScanner // set once more than keep bytes came
	n           int64          // bytes written in all
	over        func()
	exceeded    bool
}

func newExecOutput(maxAnswer int64, over func()) *execOutput {
	keep := int(min(bodyBound(maxAnswer), maxExecOutput))
	return &execOutput{keep: keep, answerLimit: answerLimit(maxAnswer), over: over}
}

// maxExecOutput bounds what an exec actor's program may write to
// standard output (32 MiB); more is an error run.
const maxExecOutput = 32 << 20

// errTooLarge stops a program's output past maxExecOutput.
var errTooLarge = errors.New("output larger than the limit")

func (c *execOutput) Write(p []byte) (int, error) {
	if c.n+int64(len(p)) > maxExecOutput {
		c.exceeded = true
		c.over()
		return 0, errTooLarge
	}
	c.n += int64(len(p))
	if c.scan == nil && c.head.Len()+len(p) <= c.keep {
		return c.head.Write(p)
	}
	if c.scan == nil {
		c.scan = &answerScanner{path: []string{"text"}, keep: int(c.answerLimit)}
		c.scan.Write(c.head.Bytes())
		k := c.keep - c.head.Len()
		c.head.Write(p[:k]) // the head stays, for the leak scan (Response.Body)
		c.scan.Write(p)
		return len(p), nil
	}
	return c.scan.Write(p)
}

// Excerpt keeps a bounded excerpt of what is written to it: the first
// limit/2 bytes and the last limit/2 (all of it up to limit bytes), and
// hands every byte on to tee when it is not nil (the runner's scan of the
// whole stream). It is safe for concurrent use; Write never fails.
type Excerpt struct {
	mu         sync.Mutex
	head, tail []byte
	limit      int
	dropped    bool
	tee        io.Writer
}

// NewExcerpt keeps an excerpt of up to limit bytes and hands every byte
// on to tee (nil: none).
func NewExcerpt(limit int, tee io.Writer) *Excerpt { return &Excerpt{limit: limit, tee: tee} }

// Write implements io.Writer.
func (t *Excerpt) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.tee != nil {
		t.tee.Write(p) // its errors are its own: the program's output goes on
	}
	q := p
	if n := min(len(q), t.limit/2-len(t.head)); n > 0 && !t.dropped {
		t.head, q = append(t.head, q[:n]...), q[n:]
	}
	t.tail = append(t.tail, q...)
	if len(t.head)+len(t.tail) > t.limit {
		keep := t.limit - len(t.head)
		t.tail = append(t.tail[:0], t.tail[len(t.tail)-keep:]...)
		t.dropped = true
	}
	return len(p), nil
}

// String is the excerpt: the bytes written, or their head and tail with
// "…" between them.
func (t *Excerpt) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.dropped {
		return string(t.head) + "…" + string(t.tail)
	}
	return string(t.head) + string(t.tail)
}

// splitWords splits a command line into words as a POSIX shell does,
// without expansions: unquoted white space separates words, '…' quotes
// literally, "…" quotes with \ escaping " \ $ and `, and \ outside quotes
// escapes the next character.
func splitWords(s string) ([]string, error) {
	var words []string
	var w strings.Builder
	inWord := false
	rs := []rune(s)
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '\'':
			inWord = true
			j := i + 1
			for j < len(rs) && rs[j] != '\'' {
				w.WriteRune(rs[j])
				j++
			}
			if j == len(rs) {
				return nil, errors.New("the command has an unterminated ' quote")
			}
			i = j
		case r == '"':
			inWord = true
			j := i + 1
			for ; j < len(rs) && rs[j] != '"'; j++ {
				if rs[j] == '\\' && j+1 < len(rs) && strings.ContainsRune("\"\\$`", rs[j+1]) {
					j++
				}
				w.WriteRune(rs[j])
			}
			if j == len(rs) {
				return nil, errors.New(`the command has an unterminated " quote`)
			}
			i = j
		case r == '\\':
			if i+1 == len(rs) {
				return nil, errors.New(`the command ends with a lone \`)
			}
			inWord = true
			i++
			w.WriteRune(rs[i])
		case unicode.IsSpace(r):
			if inWord {
				words = append(words, w.String())
				w.Reset()
				inWord = false
			}
		default:
			inWord = true
			w.WriteRune(r)
		}
	}
	if inWord {
		words = append(words, w.String())
	}
	return words, nil
}
