package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
)

// exampleReference is the reference proposal of the example case's one
// step, as a chat completions server answers it.
const exampleReference = `{"patch": [{"op": "replace", "path": "/ticket/reply", "value": "Dear Ada, we are sorry the mug arrived broken. A refund of 42.50 EUR for order ORD-1001 is on its way."}, {"op": "replace", "path": "/ticket/status", "value": "resolved"}, {"op": "add", "path": "/audit/-", "value": "T-77: refund of order total confirmed"}], "note": "Refunded."}`

// chatServerOn serves OpenAI's chat completions on l, answering every
// request with the example's reference proposal.
func chatServerOn(t *testing.T, l net.Listener) *httptest.Server {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		b, _ := json.Marshal(map[string]any{
			"id": "x", "object": "chat.completion", "created": 1, "model": "m",
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": exampleReference}, "finish_reason": "stop"}},
			"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150},
		})
		w.Header().Set("Content-Type", "application/json")
		w.Write(b)
	}))
	srv.Listener.Close()
	srv.Listener = l
	srv.Start()
	t.Cleanup(srv.Close)
	return srv
}

// summaryRows reads a run directory's summary.json.
func summaryRows(t *testing.T, dir string) (bool, []map[string]any) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, rundir.SummaryFile))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Complete bool             `json:"complete"`
		Rows     []map[string]any `json:"rows"`
	}
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	return s.Complete, s.Rows
}

// A provider nothing listens on: run stops sending to it after 5
// connection failures, says why, and exits 3; the summary says the work is
// not complete, with null rates for the rows that measured nothing. Once
// the server is up at the same address, the same command with
// --retry-errors finishes the work (exit 0).
func TestRunDeadProvider(t *testing.T) {
	if testing.Short() {
		t.Skip("retries a provider that is down")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	t.Setenv("OPENAI_BASE_URL", "http://"+addr+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"run", "--cases", exampleCases, "--actor", "openai:m", "--no-cache", "--max-retries", "1", "--out", out}
	stdout, stderr, code := runCLI(t, cliCase{args: args})
	if code != exitIncomplete {
		t.Fatalf("exit %d, want %d\n%s%s", code, exitIncomplete, stdout, stderr)
	}
	for _, want := range []string{
		"openai http://" + addr + "/v1 is unreachable: 5 consecutive connection failures, the last: ",
		"connection refused",
		"not started (unreachable: openai http://" + addr + "/v1); once the server answers, run the same command with --retry-errors",
		"the work is not done: 0 of 6 expected runs have an outcome (exit 3)",
	} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr does not say %q:\n%s", want, stderr)
		}
	}
	complete, rows := summaryRows(t, out)
	if complete || len(rows) == 0 {
		t.Fatalf("complete %v, %d rows", complete, len(rows))
	}
	for _, r := range rows {
		if r["errors"] != r["runs"] || r["leak_rate"] != nil || r["semantic_pass_ci"] != nil || r["legal_pass"] != nil {
			t.Errorf("a row of error runs: %v", r)
		}
	}
	m, _ := rundir.ReadManifest(out)
	if m.Interrupted {
		t.Error("the manifest says interrupted")
	}
	// The server is up.
	l, err = net.Listen("tcp", addr)
	if err != nil {
		t.Skipf("the port was taken in between: %v", err)
	}
	chatServerOn(t, l)
	_, stderr, code = runCLI(t, cliCase{args: append(args, "--retry-errors")})
	if code != exitOK || !strings.Contains(stderr, "(6 runs)") {
		t.Fatalf("after the server is up: exit %d\n%s", code, stderr)
	}
	if complete, rows := summaryRows(t, out); !complete || rows[0]["leak_rate"] == nil {
		t.Errorf("complete %v, rows %v", complete, rows)
	}
}

// Runs that end in an error, here answers missing from the response cache
// under --cache-only, make run exit 3, and the summary is not complete.
func TestRunCacheOnlyMissesExit3(t *testing.T) {
	t.Setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
	out := filepath.Join(t.TempDir(), "run")
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--actor", "openai:m", "--cache-only", "--cache", t.TempDir(), "--out", out}})
	if code != exitIncomplete || !strings.Contains(stderr, "6 of 6 runs ended in an error") || !strings.Contains(stderr, "not in the response cache") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if complete, _ := summaryRows(t, out); complete {
		t.Error("complete with every run in error")
	}
}

// With standard error not a terminal, progress lines come at the interval
// asked for, saying the runs done of those to do, the errors, the tokens,
// the time elapsed and the time left. Ten rounds, so that the session
// outlasts the first tick (one round takes about a millisecond).
func TestRunProgressLines(t *testing.T) {
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--rounds", "10", "--out", filepath.Join(t.TempDir(), "run"), "--progress", "1ms"}})
	if code != exitOK {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	var lines []string
	for _, l := range strings.Split(stderr, "\n") {
		if strings.HasPrefix(l, "patchbench run: ") && strings.Contains(l, "/180 runs") {
			lines = append(lines, l)
		}
	}
	if len(lines) == 0 {
		t.Fatalf("no progress line:\n%s", stderr)
	}
	for _, want := range []string{" errors, ", " tokens", " elapsed"} {
		if !strings.Contains(lines[0], want) {
			t.Errorf("%q does not say %q", lines[0], want)
		}
	}
	// --progress 0: none.
	_, stderr, _ = runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", filepath.Join(t.TempDir(), "run"), "--progress", "0"}})
	if strings.Contains(stderr, "/18 runs") {
		t.Errorf("progress with --progress 0:\n%s", stderr)
	}
}

func TestProgressText(t *testing.T) {
	for _, c := range []struct {
		p       runner.Progress
		elapsed time.Duration
		want    string
	}{
		{runner.Progress{Total: 276}, 0, "0/276 runs (0 %), 0 errors, 0 tokens, 0s elapsed, time left unknown"},
		{runner.Progress{Done: 69, Total: 276, Errors: 1, Tokens: 1234567, TokensSent: 400000}, 90 * time.Second,
			"69/276 runs (25 %), 1 error, 1,234,567 tokens (400,000 sent), 1m30s elapsed, about 4m30s left"},
		{runner.Progress{Done: 6, Total: 276, Errors: 6, NotStarted: 270, Pending: 1}, 2 * time.Second,
			"6/276 runs (100 %), 6 errors, 1 pending, 270 not started (endpoint down), 0 tokens, 2s elapsed"},
	} {
		if got := progressText(c.p, c.elapsed); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	// On a terminal: a bar redrawn in place, cleared before a message and
	// at the end.
	var buf bytes.Buffer
	p := startProgress(&buf, true, 60, time.Hour)
	p.now = func() time.Time { return p.start } // no time passes
	p.update(runner.Progress{Done: 10, Total: 20})
	p.say("a message")
	p.update(runner.Progress{Done: 16, Total: 20, Errors: 1, Tokens: 1234567, NotStarted: 4})
	p.finish()
	bar1 := "[==========>         ] 10/20 runs, 0 errors, 0 tokens, 0s, ~0s left"
	bar2 := "[====================] 16/20 runs, 1 error, 4 not started, 1.2M tokens, 0s"
	want := "\r\x1b[K" + bar1[:59] + "\r\x1b[Ka message\n" + "\r\x1b[K" + bar2[:59] + "\r\x1b[K" // cut to the width
	if got := buf.String(); got != want {
		t.Errorf("terminal:\n got %q\nwant %q", got, want)
	}
}

// A run directory whose runs.jsonl has a damaged line in the middle, or
// whose manifest was cut short, is refused by every command with the line
// and byte offset and a pointer to repair; repair keeps every intact
// record, and the same run command then goes on.
func TestRepairCommand(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	runArgs := []string{"run", "--cases", exampleCases, "--out", out}
	if _, stderr, code := runCLI(t, cliCase{args: runArgs}); code != 0 {
		t.Fatal(stderr)
	}
	runsPath := filepath.Join(out, rundir.RunsFile)
	runs, _ := os.ReadFile(runsPath)
	lines := strings.SplitAfter(string(runs), "\n")
	offset := len(lines[0]) + len(lines[1])
	lines[2] = lines[2][:len(lines[2])/2] + "\n" // a line cut in the middle of the file
	os.WriteFile(runsPath, []byte(strings.Join(lines, "")), 0o644)
	where := []string{runsPath + ":3: ", "byte offset " + strconv.Itoa(offset), `run "patchbench repair ` + out + `"`}
	checkCLI(t, []cliCase{
		{name: "report refuses", args: []string{"report", out}, exit: 2, stderr: where},
		{name: "show --list refuses", args: []string{"show", "--list", "--out", out}, exit: 2, stderr: where},
		{name: "run refuses", args: runArgs, exit: 2, stderr: where},
		{name: "compare refuses", args: []string{"compare", out, out}, exit: 2, stderr: where},
		{name: "repair", args: []string{"repair", out}},
		{name: "report reads it", args: []string{"report", out}},
		{name: "run does the dropped run again", args: runArgs, stderr: []string{"(18 runs)"}},
		{name: "nothing more to repair", args: []string{"repair", out}},
		{name: "repair needs a directory", args: []string{"repair"}, exit: 2, stderr: []string{"give the run directory"}},
		{name: "not a run directory", args: []string{"repair", t.TempDir()}, exit: 2, stderr: []string{"is not a run directory"}},
	})
	stdout, _, _ := runCLI(t, cliCase{args: []string{"repair", out}})
	if !strings.Contains(stdout, "needs no repair: 18 records intact") {
		t.Errorf("second repair: %s", stdout)
	}
	// A manifest cut short: named, then restored from its backup.
	mPath := filepath.Join(out, rundir.ManifestFile)
	m, _ := os.ReadFile(mPath)
	os.WriteFile(mPath, m[:len(m)/3], 0o644)
	checkCLI(t, []cliCase{
		{name: "a manifest cut short", args: []string{"report", out}, exit: 2,
			stderr: []string{mPath + ":", "unexpected end of JSON input (byte offset " + strconv.Itoa(len(m)/3) + `); run "patchbench repair ` + out + `" to restore it`}},
		{name: "run refuses it too", args: runArgs, exit: 2, stderr: []string{`patchbench repair ` + out}},
	})
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"repair", out}})
	if code != 0 || !strings.Contains(stdout, mPath+": restored from its backup") {
		t.Fatalf("repair: exit %d\n%s%s", code, stdout, stderr)
	}
	if _, stderr, code := runCLI(t, cliCase{args: runArgs}); code != 0 || !strings.Contains(stderr, "(18 runs)") {
		t.Fatalf("run after the repair: exit %d\n%s", code, stderr)
	}
}

// A run killed after it made its directory (the lock, an empty
// runs.jsonl) and before it wrote the manifest leaves a directory the same
// command takes up, leaving no temporary file behind.
func TestRunAfterAKillBeforeTheManifest(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	os.MkdirAll(out, 0o755)
	for _, name := range []string{rundir.LockFile, rundir.RunsFile, ".manifest.json.4242"} {
		os.WriteFile(filepath.Join(out, name), nil, 0o644)
	}
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out}})
	if code != 0 || !strings.Contains(stderr, "(18 runs)") {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(out, ".manifest.json.4242")); !os.IsNotExist(err) {
		t.Errorf("the temporary file is left: %v", err)
	}
}

// The manifest marks a session interrupted from its start until it ends:
// a session killed, or stopped by a full disk with no room to say so, is
// marked all the same.
func TestManifestMarksTheSessionUntilItEnds(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	fs, f := newRunFlags(io.Discard, io.Discard)
	if err := fs.parse([]string{"--cases", exampleCases, "--out", out}); err != nil {
		t.Fatal(err)
	}
	sh, _ := f.check(io.Discard, os.Getenv)
	p, err := f.plan(io.Discard, sh, false)
	if err != nil {
		t.Fatal(err)
	}
	d, err := runner.OpenDir(p.dir, p.manifest, false)
	if err != nil {
		t.Fatal(err)
	}
	d.Abandon()
	if m, err := rundir.ReadManifest(out); err != nil || !m.Interrupted || m.Finished != "" {
		t.Fatalf("during the session: %+v %v", m, err)
	}
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out}}); code != 0 {
		t.Fatal(stderr)
	}
	if m, err := rundir.ReadManifest(out); err != nil || m.Interrupted || m.Finished == "" {
		t.Fatalf("after the session: %+v %v", m, err)
	}
}
