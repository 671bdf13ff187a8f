//go:build unix

package actors

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// script writes an executable shell script into a temporary directory and
// returns its path; $DIR in body is that directory.
func script(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	path := filepath.Join(dir, "agent.sh")
	text := "#!/bin/sh\nDIR=" + strconv.Quote(dir) + "\n" + body + "\n"
	if err := os.WriteFile(path, []byte(text), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// hostPID is shell that prints the shell's process id as the harness
// sees it: inside the PID namespace a program runs in, $$ is the
// namespace's number (the program is 1), while /proc is the host's.
const hostPID = `{ if [ -r /proc/self/stat ]; then read -r p _ </proc/self/stat; echo "$p"; else echo $$; fi; }`

// bgSleep is shell that starts a sleep of 300 s that first writes its
// process id (the harness's number) to $DIR/child.pid.
const bgSleep = `sh -c '` + hostPID + ` > "$0/child.pid.tmp"; mv "$0/child.pid.tmp" "$0/child.pid"; exec sleep 300' "$DIR"`

func execReq() Request {
	return Request{CaseID: "c1", StepID: "s1", Role: "clerk", Round: 2, Attempt: 1, Projected: true,
		Messages:  []Message{{Role: "system", Content: "sys"}, {Role: "user", Content: "do it"}},
		View:      map[string]any{"ticket": map[string]any{"id": 7}},
		Reference: []byte(`{"patch": [], "note": "the answer key"}`), Injected: []byte(`{"patch": []}`)}
}

// TestExecActorAnswers runs a script that keeps its request, writes to
// standard error and answers with a usage and a model.
func TestExecActorAnswers(t *testing.T) {
	path := script(t, `cat > "$DIR/request.json"
echo "thinking about step s1" >&2
printf '{"text": "{\\"patch\\": [], \\"note\\": \\"ok\\"}", "usage": {"prompt": 120, "completion": 30, "reasoning": 10}, "model": "agent-7", "extra": 1}\n'`)
	a, err := New("exec:"+path+" --flag 'two words'", Params{Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Propose(context.Background(), execReq())
	if err != nil {
		t.Fatal(err)
	}
	want := Response{Raw: `{"patch": [], "note": "ok"}`, Usage: &Usage{Prompt: 120, Completion: 30, Reasoning: 10, Source: "exec"},
		Model: "agent-7", Stderr: "thinking about step s1\n",
		Body: `{"text": "{\"patch\": [], \"note\": \"ok\"}", "usage": {"prompt": 120, "completion": 30, "reasoning": 10}, "model": "agent-7", "extra": 1}` + "\n"}
	resp.Latency = 0
	if diff := cmp.Diff(want, resp); diff != "" {
		t.Errorf("response mismatch (-want +got):\n%s", diff)
	}
	b, err := os.ReadFile(filepath.Join(filepath.Dir(path), "request.json"))
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatalf("the request is not JSON: %v\n%s", err, b)
	}
	wantReq := map[string]any{"protocol": ExecProtocol, "case": "c1", "step": "s1", "role": "clerk", "round": 2.0, "attempt": 1.0,
		"projected": true, "view": map[string]any{"ticket": map[string]any{"id": 7.0}},
		"messages": []any{map[string]any{"role": "system", "content": "sys"}, map[string]any{"role": "user", "content": "do it"}}}
	if diff := cmp.Diff(wantReq, got); diff != "" {
		t.Errorf("request mismatch (-want +got):\n%s", diff)
	}
	if strings.Contains(string(b), "answer key") {
		t.Error("the request carries the reference proposal")
	}
	if a.Name() != "exec:"+path+" --flag 'two words'" {
		t.Errorf("name %q", a.Name())
	}
}

// TestExecActorFailures checks that every way a program can fail is an
// *ExecError that keeps its standard error, never a panic or an answer.
func TestExecActorFailures(t *testing.T) {
	cases := []struct {
		name, body, want string
	}{
		{"non-zero exit", `echo "Traceback: boom" >&2; exit 3`, "exit status 3"},
		{"nothing on stdout", `echo "no key" >&2`, "wrote nothing on standard output"},
		{"not JSON", `echo "Sure! here is the patch"`, "not one JSON object"},
		{"two values", `echo '{"text": "a"}'; echo '{"text": "b"}'`, "more than one JSON value"},
		{"no text", `echo '{"answer": "a"}'`, `no "text" string`},
		{"text not a string", `echo '{"text": 5}'`, "not one JSON object"},
		{"negative usage", `echo '{"text": "a", "usage": {"prompt": -1}}'`, "usage: -1 tokens"},
		{"overflowing usage", `echo '{"text": "a", "usage": {"completion": 4611686018427387904}}'`, "usage: 4611686018427387904 tokens"},
		{"fractional usage", `echo '{"text": "a", "usage": {"prompt": 1.5}}'`, "usage: 1.5 tokens"},
		{"reasoning above completion", `echo '{"text": "a", "usage": {"completion": 1, "reasoning": 2}}'`, "reasoning tokens are more"},
		{"killed by a signal", `kill -9 $$`, "signal: killed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if strings.Contains(tc.body, "kill -9 $$") {
				// As process 1 of its namespace a program cannot kill
				// itself with kill(2): the kernel ignores the signal.
				withoutNamespace(t)
			}
			a, err := NewExec("exec:"+script(t, tc.body), 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := a.Propose(context.Background(), execReq())
			var ee *ExecError
			if !errors.As(err, &ee) {
				t.Fatalf("error %v (%T), want an *ExecError", err, err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %q does not say %q", err, tc.want)
			}
			if resp.Raw != "" || resp.Usage != nil {
				t.Errorf("a failure answered: %+v", resp)
			}
			if strings.Contains(tc.body, ">&2") && ee.ActorStderr() == "" {
				t.Error("standard error was not kept")
			}
		})
	}
}

// TestExecActorStderrIsQuoted checks that what a program writes to
// standard error reaches an error message quoted (no raw control
// characters for a terminal) and is kept whole in the error.
func TestExecActorStderrIsQuoted(t *testing.T) {
	a, err := NewExec("exec:"+script(t, `printf 'first\n\033[2J\a\rcleared\n' >&2; exit 1`), 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), execReq())
	if err == nil || strings.ContainsAny(err.Error(), "\x1b\a\r") || !strings.Contains(err.Error(), `\x1b[2J\a\rcleared`) {
		t.Fatalf("error %q", err)
	}
	var ee *ExecError
	if !errors.As(err, &ee) || ee.Stderr != "first\n\x1b[2J\a\rcleared\n" {
		t.Errorf("stderr %q", ee.Stderr)
	}
}

// TestExecActorTimeoutKillsTheGroup runs a program that starts a child and
// hangs: after the timeout both are killed and the run is an error.
func TestExecActorTimeoutKillsTheGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on a timeout")
	}
	t.Parallel() // waits on its timeout; the call holds the containment
	execShared(t)
	path := script(t, bgSleep+` &
echo "started" >&2
wait`)
	a, err := NewExec("exec:"+path, 1500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), execReq())
	var ee *ExecError
	if !errors.As(err, &ee) || !strings.Contains(err.Error(), "no answer within 1.5s") || !strings.Contains(ee.Stderr, "started") {
		t.Fatalf("error %v", err)
	}
	assertDead(t, filepath.Join(filepath.Dir(path), "child.pid"))
}

// TestExecActorBackgroundChild checks that a program that answers and
// exits, leaving a child that holds its standard output open, has
// answered, and that the child is killed.
func TestExecActorBackgroundChild(t *testing.T) {
	path := script(t, `cat > /dev/null
printf '{"text": "{\\"patch\\": []}"}\n'
`+bgSleep+` &
while [ ! -s "$DIR/child.pid" ]; do sleep 0.01; done
exit 0`)
	a, err := NewExec("exec:"+path, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := a.Propose(context.Background(), execReq())
	if err != nil || resp.Raw != `{"patch": []}` {
		t.Fatalf("answer %q, error %v", resp.Raw, err)
	}
	assertDead(t, filepath.Join(filepath.Dir(path), "child.pid"))
}

// TestExecActorInterrupt checks that cancelling the run kills the program
// and its children and returns the context's error (no outcome).
func TestExecActorInterrupt(t *testing.T) {
	path := script(t, bgSleep+` &
wait`)
	a, err := NewExec("exec:"+path, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			// The shell makes the file before it writes the pid.
			if fi, err := os.Stat(filepath.Join(filepath.Dir(path), "child.pid")); err == nil && fi.Size() > 0 {
				cancel()
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	if _, err := a.Propose(ctx, execReq()); !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	assertDead(t, filepath.Join(filepath.Dir(path), "child.pid"))
}

// assertDead checks that the process whose id is in file is gone (or a
// zombie about to be reaped by init).
func assertDead(t *testing.T, file string) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 100; i++ {
		if syscall.Kill(pid, 0) != nil {
			return
		}
		if stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil && strings.Contains(string(stat), ") Z ") {
			return
		}
		time.Sleep(20 * time.Millisecond)
	}
	syscall.Kill(pid, syscall.SIGKILL)
	t.Errorf("the program's child %d outlived it", pid)
}

// TestExecActorAnswerTooLarge checks that a program that writes more than
// the answer bound is stopped and fails, without holding more than the
// bound.
func TestExecActorAnswerTooLarge(t *testing.T) {
	a, err := NewExec("exec:"+script(t, `head -c 40000000 /dev/zero; sleep 300`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), execReq())
	if err == nil || !strings.Contains(err.Error(), "larger than 32 MiB") {
		t.Fatalf("error %v", err)
	}
}

func TestNewExec(t *testing.T) {
	notExec := filepath.Join(t.TempDir(), "plain.txt")
	os.WriteFile(notExec, []byte("x"), 0o644)
	for _, spec := range []string{"exec:", "exec:  ", "exec:no-such-program-patchbench", "exec:" + notExec, `exec:sh -c 'unterminated`, `exec:sh "x`, `exec:sh \`} {
		if _, err := New(spec, Params{}); err == nil {
			t.Errorf("%q: no error", spec)
		}
	}
	a, err := New("exec:sh -c true", Params{})
	if err != nil {
		t.Fatal(err)
	}
	if e := a.(*Exec); e.timeout != 2*time.Minute {
		t.Errorf("default timeout %v", e.timeout)
	}
	// A script an interpreter is given that does not exist is refused up
	// front (it failed every run), for exec: and mcp: alike; a shell
	// command line that names one, an option, or a script that exists are
	// not looked at or pass.
	dir := t.TempDir()
	agent := filepath.Join(dir, "agent.js")
	os.WriteFile(agent, []byte("//"), 0o644)
	for _, prefix := range []string{"exec:", "mcp:"} {
		for _, tc := range []struct{ cmd, want string }{
			{"sh " + filepath.Join(dir, "missing.sh"), "missing.sh: no such file or directory"},
			{"sh " + dir + "/sub.py", "sub.py: no such file or directory"},
			{"sh " + t.TempDir() + "/x.js/", ""},
			{"sh " + agent, ""},
			{"sh -c 'node missing.js'", ""},
			{"sh --opt=missing.js " + agent, ""},
		} {
			_, err := New(prefix+tc.cmd, Params{})
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("%s%s: %v", prefix, tc.cmd, err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("%s%s: error %v, want one saying %q", prefix, tc.cmd, err, tc.want)
			}
		}
		d := filepath.Join(dir, "dir.py")
		os.Mkdir(d, 0o755)
		if _, err := New(prefix+"sh "+d, Params{}); err == nil || !strings.Contains(err.Error(), "is a directory") {
			t.Errorf("%sa directory as the script: error %v", prefix, err)
		}
	}
}

func TestSplitWords(t *testing.T) {
	for in, want := range map[string][]string{
		`agent`:                           {"agent"},
		`  python3   agent.py  --k v `:    {"python3", "agent.py", "--k", "v"},
		`sh -c 'echo "$HOME" | tr a b'`:   {"sh", "-c", `echo "$HOME" | tr a b`},
		`a "b \"c\" \\ \$d \n" e`:         {"a", `b "c" \ $d \n`, "e"},
		`a\ b c''d "" ''`:                 {"a b", "cd", "", ""},
		`naïve "ünï code"`:                {"naïve", "ünï code"},
		"tab\tseparated\nlines":           {"tab", "separated", "lines"},
		`--opt=x,y`:                       {"--opt=x,y"},
		`'it'\''s'`:                       {"it's"},
		``:                                nil,
		`"a"'b'c`:                         {"abc"},
		`x \"`:                            {"x", `"`},
		`echo 'single \ backslash stays'`: {"echo", `single \ backslash stays`},
		`"double \q keeps the backslash"`: {`double \q keeps the backslash`},
		`unquoted\\backslash`:             {`unquoted\backslash`},
		`"end"`:                           {"end"},
		`'$VAR' "$VAR" $VAR`:              {"$VAR", "$VAR", "$VAR"},
		`a;b|c&d`:                         {"a;b|c&d"},
		`"nested 'quotes'" 'and "these"'`: {"nested 'quotes'", `and "these"`},
		"  \t ":                           nil,
		`x ""`:                            {"x", ""},
		`"a b"c`:                          {"a bc"},
		`c"a b"`:                          {"ca b"},
	} {
		got, err := splitWords(in)
		if err != nil {
			t.Errorf("%q: %v", in, err)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%q: mismatch (-want +got):\n%s", in, diff)
		}
	}
}

// TestExecActorKillsWhatLeftTheGroup runs programs whose child starts a
// session of its own (setsid), out of the program's process group, which
// survived the --timeout kill: once the program has ended
// (timed out, or answered and exited), the child is killed too.
func TestExecActorKillsWhatLeftTheGroup(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on timeouts")
	}
	t.Parallel() // waits on its timeout; each call holds the containment (eachContainment)
	if _, err := os.Stat("/proc/self/environ"); err != nil {
		t.Skip("no /proc: only the process group is killed here")
	}
	for name, body := range map[string]string{
		"timed out": `setsid ` + bgSleep + ` </dev/null >/dev/null 2>&1 &
while [ ! -s "$DIR/child.pid" ]; do sleep 0.01; done
sleep 300`,
		"answered": `cat > /dev/null
setsid ` + bgSleep + ` </dev/null >/dev/null 2>&1 &
while [ ! -s "$DIR/child.pid" ]; do sleep 0.01; done
printf '{"text": "{\\"patch\\": []}"}\n'`,
	} {
		eachContainment(t, name, func(t *testing.T) {
			path := script(t, body)
			a, err := NewExec("exec:"+path, 1500*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			a.Propose(context.Background(), execReq())
			assertDead(t, filepath.Join(filepath.Dir(path), "child.pid"))
		})
	}
}

// TestExecActorReadsTheAnswerUpToItsLimit checks that an answer over the
// answer limit comes back as its first limit bytes and its length,
// without the program's whole output being kept (a 31 MiB answer cost 438
// MB at concurrency 1: scripts/hostile-files.sh measures it),
// and that an answer within the limit but written long-windedly (escaped)
// is still the answer.
func TestExecActorReadsTheAnswerUpToItsLimit(t *testing.T) {
	a, err := NewExec("exec:"+script(t, `cat >/dev/null
printf '{"text": "'
head -c 5000000 /dev/zero | tr '\0' x
printf '"}'`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a.maxAnswer = 1 << 20
	resp, err := a.Propose(context.Background(), execReq())
	if err != nil || resp.Oversize != 5000000 || len(resp.Raw) != 1<<20 || strings.Trim(resp.Raw, "x") != "" {
		t.Fatalf("oversize %d, %d bytes kept, error %v", resp.Oversize, len(resp.Raw), err)
	}
	// 600 KB of "\u0041": 3.6 MB of output, 600 KB of answer.
	a, err = NewExec("exec:"+script(t, `cat >/dev/null
printf '{"text": "'
head -c 600000 /dev/zero | sed 's/\x00/\\u0041/g'
printf '"}'`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	a.maxAnswer = 1 << 20
	resp, err = a.Propose(context.Background(), execReq())
	if err != nil || resp.Oversize != 0 || len(resp.Raw) != 600000 || strings.Trim(resp.Raw, "A") != "" {
		t.Fatalf("oversize %d, %d bytes, error %v", resp.Oversize, len(resp.Raw), err)
	}
}

// TestFilesActorRefusesAFIFOAnswer makes an answer file a FIFO, which
// blocked the file actor's read forever: it is refused at once.
func TestFilesActorRefusesAFIFOAnswer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "answer.txt")
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := readAnswer(path, 0)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "not a regular file") {
			t.Fatalf("error %v", err)
		}
	case <-time.After(10 * time.Second):
		if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close() // lets the blocked open return
		}
		t.Fatal("reading a FIFO answer blocked")
	}
}

// TestExecActorAnswersAndKeepsRunning runs a program that answers, closes
// its standard output and goes on running: it was ended at the timeout
// with "no answer within" although it had answered. Its
// answer is taken, execWaitDelay after its output closed, and it is
// killed.
func TestExecActorAnswersAndKeepsRunning(t *testing.T) {
	if testing.Short() {
		t.Skip("waits on a child past its answer")
	}
	path := script(t, `cat > /dev/null
printf '{"text": "{\\"patch\\": []}"}\n'
exec >&-
`+hostPID+` > "$DIR/child.pid"
sleep 300`)
	a, err := NewExec("exec:"+path, 20*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	resp, err := a.Propose(context.Background(), execReq())
	if err != nil || resp.Raw != `{"patch": []}` {
		t.Fatalf("answer %q, error %v", resp.Raw, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("the answer took %v: the program was not ended once it had answered", d)
	}
	assertDead(t, filepath.Join(filepath.Dir(path), "child.pid"))
	// At the timeout, before execWaitDelay has passed: the answer too.
	a, err = NewExec("exec:"+path, 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if resp, err := a.Propose(context.Background(), execReq()); err != nil || resp.Raw != `{"patch": []}` {
		t.Fatalf("at the timeout: answer %q, error %v", resp.Raw, err)
	}
	// One that closed its output having written half an answer fails.
	a, err = NewExec("exec:"+script(t, `cat > /dev/null
printf '{"text": "{\\"pa'
exec >&-
sleep 300`), 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Propose(context.Background(), execReq()); err == nil || !strings.Contains(err.Error(), "not one JSON object") {
		t.Fatalf("half an answer: error %v", err)
	}
}

// TestExecStderrWholeToRequest: what the program writes to standard
// error reaches Request.Stderr whole (the card, then 70,000 dots), while
// the response keeps an excerpt of at most KeptStderrBytes: its first
// and its last half, "…" between them.
func TestExecStderrWholeToRequest(t *testing.T) {
	a, err := NewExec("exec:"+script(t, `cat >/dev/null
printf 'card 4000 0000 0000 9995\n' >&2
head -c 70000 /dev/zero | tr '\0' . >&2
printf '{"text": "ok"}'`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	var whole strings.Builder
	req := execReq()
	req.Stderr = &whole
	resp, err := a.Propose(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if want := "card 4000 0000 0000 9995\n" + strings.Repeat(".", 70000); whole.String() != want {
		t.Errorf("Request.Stderr got %d bytes, want %d", whole.Len(), len(want))
	}
	e := resp.Stderr
	if len(e) != KeptStderrBytes+len("…") || !strings.HasPrefix(e, "card 4000") || !strings.HasSuffix(e, "...") || strings.Count(e, "…") != 1 {
		t.Errorf("excerpt of %d bytes: %.40q", len(e), e)
	}
}

// TestExcerpt: up to the limit everything is kept; past it the first and
// the last half, whatever the writes' sizes.
func TestExcerpt(t *testing.T) {
	x := NewExcerpt(8, nil)
	x.Write([]byte("abc"))
	x.Write([]byte("def"))
	if x.String() != "abcdef" {
		t.Errorf("%q", x.String())
	}
	x.Write([]byte("ghijkl"))
	x.Write([]byte("m"))
	if x.String() != "abcd…jklm" {
		t.Errorf("%q", x.String())
	}
	y := NewExcerpt(8, nil)
	y.Write([]byte("0123456789"))
	if y.String() != "0123…6789" {
		t.Errorf("%q", y.String())
	}
}

// TestExecErrorKeepsStdout: a program whose output is not one answer
// fails, and the error carries the output (for the leak scan).
func TestExecErrorKeepsStdout(t *testing.T) {
	a, err := NewExec("exec:"+script(t, `cat >/dev/null; printf '{"text": "x"}\nsecret-line\n'`), time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	_, err = a.Propose(context.Background(), execReq())
	var ee *ExecError
	if !errors.As(err, &ee) || ee.ActorOutput() != "{\"text\": \"x\"}\nsecret-line\n" {
		t.Fatalf("%v", err)
	}
}
