package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
)

// chatFake is a local chat completions server for run: answer gives the
// status and body of each call (numbered from 1).
func chatFake(t *testing.T, answer func(n int32, w http.ResponseWriter)) *atomic.Int32 {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		answer(calls.Add(1), w)
	}))
	t.Cleanup(srv.Close)
	t.Setenv("OPENAI_BASE_URL", srv.URL+"/v1")
	t.Setenv("OPENAI_API_KEY", "")
	return &calls
}

// completionWith is a chat completion whose answer is content.
func completionWith(content string) string {
	b, _ := json.Marshal(map[string]any{"id": "x", "object": "chat.completion", "model": "m",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}}},
		"usage":   map[string]any{"prompt_tokens": 100, "completion_tokens": 10}})
	return string(b)
}

// The first interrupt stops a run whose actor answers with text built to
// make the extractor quadratic: the run ends (exit 2) and the manifest
// says it was interrupted.
func TestRunInterruptedDuringHostileAnswers(t *testing.T) {
	hostile := strings.Repeat(`{"a":[`, (256<<10)/6)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	chatFake(t, func(n int32, w http.ResponseWriter) {
		if n == 3 {
			cancel() // Ctrl-C while the answers are being read
		}
		io.WriteString(w, completionWith(hostile))
	})
	out := filepath.Join(t.TempDir(), "out")
	var stdout, stderr bytes.Buffer
	code := run(ctx, []string{"run", "--cases", exampleCases, "--out", out, "--actor", "openai:m", "--no-cache",
		"--config", "patchoptic", "--rounds", "6", "--concurrency", "1"}, &stdout, &stderr)
	if code != exitUsage || !strings.Contains(stderr.String(), "interrupted") {
		t.Fatalf("exit %d\n%s", code, stderr.String())
	}
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if !strings.Contains(string(m), `"interrupted": true`) {
		t.Errorf("manifest: %s", m)
	}
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if n := strings.Count(string(runs), "\n"); n < 2 || n > 3 || !strings.Contains(string(runs), `"code":"malformed_patch"`) {
		t.Errorf("%d runs recorded:\n%.300s", n, runs)
	}
}

// A provider's error message reaches the terminal on one line, its
// control characters escaped; so does a fatal one.
func TestRunEscapesProviderMessages(t *testing.T) {
	status := 400
	chatFake(t, func(_ int32, w http.ResponseWriter) {
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error": {"message": "bad\u001b[2J\u001b]0;owned\u0007\r\nrequest", "type": "invalid_request_error", "param": null, "code": "x"}}`)
	})
	tmp := t.TempDir()
	for _, s := range []int{400, 401} {
		status = s
		var stdout, stderr bytes.Buffer
		code := run(context.Background(), []string{"run", "--cases", exampleCases, "--out", filepath.Join(tmp, fmt.Sprint(s)), "--actor", "openai:m",
			"--no-cache", "--config", "patchoptic", "--max-retries", "0"}, &stdout, &stderr)
		msg := stderr.String()
		if code == exitOK && s == 401 || strings.ContainsAny(msg, "\x1b\x07\r") || !strings.Contains(msg, `bad\u001b[2J\u001b]0;owned\u0007\u000d\u000arequest`) {
			t.Errorf("HTTP %d: exit %d, stderr %q", s, code, msg)
		}
	}
}

// --max-answer-bytes bounds answers: a longer one is a rejected attempt
// of a failed run, and the setting is part of the manifest.
func TestRunMaxAnswerBytes(t *testing.T) {
	chatFake(t, func(_ int32, w http.ResponseWriter) {
		io.WriteString(w, completionWith(strings.Repeat("z", 5000)))
	})
	out := filepath.Join(t.TempDir(), "out")
	checkCLI(t, []cliCase{
		{name: "too small", args: []string{"run", "--max-answer-bytes", "10"}, exit: 2, stderr: []string{"--max-answer-bytes must be in [1024, 16777216]"}},
		{name: "over the limit", args: []string{"run", "--cases", exampleCases, "--out", out, "--actor", "openai:m", "--no-cache", "--config", "patchoptic",
			"--max-answer-bytes", "4096"}, stderr: []string{"(1 run)"}},
	})
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
	if !strings.Contains(string(m), `"max_answer_bytes": 4096`) || !strings.Contains(string(runs), `"answer_bytes":5000`) ||
		!strings.Contains(string(runs), `"status":"failed"`) || !strings.Contains(string(runs), `"code":"limit_exceeded"`) {
		t.Errorf("manifest:\n%s\nruns:\n%.500s", m, runs)
	}
}

// bigPassingAnswer is the example case's reference proposal, its note
// long enough to make the answer n bytes.
func bigPassingAnswer(n int) string {
	head := `{"patch": [{"op": "replace", "path": "/ticket/reply", "value": "Dear Ada, we are sorry the mug arrived broken. A refund of 42.50 EUR for order ORD-1001 is on its way."},` +
		` {"op": "replace", "path": "/ticket/status", "value": "resolved"}, {"op": "add", "path": "/audit/-", "value": "T-77: refund of order total confirmed"}], "note": "`
	return head + strings.Repeat("x", n-len(head)-2) + `"}`
}

// The response cache keeps the answer limit an answer was read under: an
// answer of 1.5 MiB cached clipped by a run with a 1 MiB limit is not
// replayed clipped to a run with a 4 MiB limit (which failed it with
// limit_exceeded, where --no-cache passed it). Under --cache-only that run
// refuses, naming the entry; without, it asks again and passes.
func TestRunCacheAnswerLimit(t *testing.T) {
	if testing.Short() {
		t.Skip("runs a live actor past its answer limit")
	}
	const size = 1573199
	calls := chatFake(t, func(_ int32, w http.ResponseWriter) {
		io.WriteString(w, completionWith(bigPassingAnswer(size)))
	})
	cache, tmp := t.TempDir(), t.TempDir()
	runWith := func(name, limit string, extra ...string) (string, string, int) {
		out := filepath.Join(tmp, name)
		_, stderr, code := runCLI(t, cliCase{args: append([]string{"run", "--cases", exampleCases, "--actor", "openai:m", "--config", "patchoptic",
			"--cache", cache, "--max-answer-bytes", limit, "--out", out}, extra...)})
		runs, _ := os.ReadFile(filepath.Join(out, "runs.jsonl"))
		return string(runs), stderr, code
	}
	runs, stderr, code := runWith("small", "1048576")
	if code != exitOK || !strings.Contains(runs, `"code":"limit_exceeded"`) || !strings.Contains(runs, fmt.Sprintf(`"answer_bytes":%d`, size)) {
		t.Fatalf("1 MiB run: exit %d\n%s\n%.600s", code, stderr, runs)
	}
	runs, stderr, code = runWith("only", "4194304", "--cache-only")
	if code != exitIncomplete || !strings.Contains(stderr, "clipped at the limit 1048576") || !strings.Contains(stderr, cache) {
		t.Fatalf("4 MiB cache-only run: exit %d\n%s\n%.600s", code, stderr, runs)
	}
	runs, stderr, code = runWith("large", "4194304")
	if code != exitOK || strings.Contains(runs, "limit_exceeded") || !strings.Contains(runs, `"semantic_pass":true`) {
		t.Fatalf("4 MiB run: exit %d\n%s\n%.600s", code, stderr, runs)
	}
	if calls.Load() != 2 {
		t.Errorf("%d requests, want 2", calls.Load())
	}
}
