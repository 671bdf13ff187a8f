package main

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// syncBuffer is a strings.Builder safe for a command's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

func TestBrowseCommand(t *testing.T) {
	out := t.TempDir()
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out, "--actor", "reference", "--actor", "oversharer"}}); code != 0 {
		t.Fatal(stderr)
	}
	checkCLI(t, []cliCase{
		{name: "help", args: []string{"browse", "-h"}, golden: "browse-help"},
		{name: "no directory", args: []string{"browse"}, exit: 2, stderr: []string{"give the run directory"}},
		{name: "not a run directory", args: []string{"browse", "testdata"}, exit: 2, stderr: []string{"testdata is not a run directory"}},
		{name: "an unknown baseline", args: []string{"browse", out, "--baseline", "nope"}, exit: 2, stderr: []string{`no configuration "nope"`}},
	})

	// The server: it prints its address, serves the overview and a run,
	// and stops cleanly when interrupted.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pr, pw := io.Pipe()
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, []string{"browse", out, "--addr", "127.0.0.1:0"}, pw, &stderr)
		pw.Close()
	}()
	line, err := bufio.NewReader(pr).ReadString('\n')
	if err != nil {
		t.Fatalf("%v; stderr: %s", err, stderr.String())
	}
	go io.Copy(io.Discard, pr)
	url := strings.TrimSpace(line)
	if !regexp.MustCompile(`^http://127\.0\.0\.1:\d+/$`).MatchString(url) {
		t.Fatalf("the address printed is %q", line)
	}
	for _, path := range []string{"", "run/sup-example-refund/verify-only/oversharer/1", "run/sup-example-refund/verify-only/oversharer/1?reveal=1"} {
		resp, err := http.Get(url + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 {
			t.Errorf("%s: %s", path, resp.Status)
		}
	}
	// DNS rebinding: a page of attacker.example whose name now
	// points at 127.0.0.1 asks for a revealed run; the server refuses
	// every Host but its own address and localhost on its port.
	port := url[strings.LastIndex(url, ":")+1 : len(url)-1]
	for host, want := range map[string]int{
		"attacker.example:" + port: 403, "attacker.example": 403, "localhost.attacker.example:" + port: 403,
		"127.0.0.1:1": 403, "localhost:" + port: 200, "127.0.0.1:" + port: 200, "[::1]:" + port: 200,
	} {
		req, err := http.NewRequest("GET", url+"run/sup-example-refund/verify-only/oversharer/1?reveal=1", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %s: %s, want %d", host, resp.Status, want)
		}
		if want == 403 && strings.Contains(string(body), "sup-example-refund") {
			t.Errorf("Host %s: the refusal shows the run: %s", host, body)
		}
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("exit %d after the interrupt; stderr: %s", code, stderr.String())
	}
	if !strings.Contains(stderr.String(), "12 runs of "+out+" opened in") {
		t.Errorf("stderr: %s", stderr.String())
	}
}

// TestReportHTML is the golden test of report --format html: the overview
// and the data of every run page of a small directory as one file (the
// directory's path and start time replaced, the data written decoded, as
// JSON, so that the golden file can be read).
func TestReportHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out, "--config", "unconstrained,patchoptic", "--actor", "reference", "--actor", "oversharer"}}); code != 0 {
		t.Fatal(stderr)
	}
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"report", out, "--format", "html"}})
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	got := strings.ReplaceAll(stdout, out, "RUN_DIR")
	got = regexp.MustCompile(`started \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ`).ReplaceAllString(got, "started START")
	got = decodedBundle(t, got)
	path := filepath.Join("testdata", "golden", "report-html.html")
	if *update {
		os.WriteFile(path, []byte(got), 0o644)
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("report --format html mismatch (-want +got):\n%s", diff)
	}
	revealed, stderr, code := runCLI(t, cliCase{args: []string{"report", out, "--format", "html", "--reveal"}})
	if code != 0 || !strings.Contains(revealed, `data-reveal="1"`) || !strings.Contains(stderr, "the file holds the hidden values") {
		t.Errorf("--reveal: exit %d, stderr %s", code, stderr)
	}
	checkCLI(t, []cliCase{
		{name: "html with tables", args: []string{"report", out, "--format", "html", "--table", "main"}, exit: 2, stderr: []string{"--format html writes the browser's pages"}},
		{name: "reveal without html", args: []string{"report", out, "--reveal"}, exit: 2, stderr: []string{"--reveal goes with --format html"}},
		{name: "browse, an address without a host", args: []string{"browse", out, "--addr", ":0"}, exit: 2, stderr: []string{"want HOST:PORT with a host"}},
		{name: "browse, an empty address", args: []string{"browse", out, "--addr", ""}, exit: 2, stderr: []string{"want HOST:PORT with a host"}},
		{name: "browse, a directory twice", args: []string{"browse", out, out}, exit: 2, stderr: []string{"is given twice"}},
	})
}

// decodedBundle replaces the data element of a single file (base64 of
// gzip of JSON) by its JSON.
func decodedBundle(t *testing.T, page string) string {
	t.Helper()
	re := regexp.MustCompile(`(<script type="application/octet-stream" id="pb-data" data-encoding="gzip\+base64">)([^<]*)(</script>)`)
	m := re.FindStringSubmatchIndex(page)
	if m == nil {
		t.Fatal("the file has no data element")
	}
	z, err := base64.StdEncoding.DecodeString(page[m[4]:m[5]])
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatal(err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var pretty bytes.Buffer
	if err := json.Indent(&pretty, text, "", " "); err != nil {
		t.Fatal(err)
	}
	return page[:m[4]] + "\n<!-- decoded by the test: -->\n" + pretty.String() + "\n" + page[m[5]:]
}
