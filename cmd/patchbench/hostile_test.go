//go:build unix

package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/patchbench/patchbench/rundir"
)

// hostileDir runs the example case with two actors into a new directory
// and returns it with the id of one of its runs.
func hostileDir(t *testing.T) (string, string) {
	t.Helper()
	out := filepath.Join(t.TempDir(), "run")
	if _, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out, "--actor", "reference", "--actor", "oversharer"}}); code != 0 {
		t.Fatal(stderr)
	}
	return out, "sup-example-refund/patchoptic/reference/1"
}

// readingCommands are the commands that read a run directory, with the
// words they want around it.
func readingCommands(dir, id string) map[string][]string {
	return map[string][]string{
		"report":      {"report", dir},
		"show --list": {"show", "--list", "--out", dir},
		"show ID":     {"show", id, "--out", dir},
		"repair":      {"repair", dir},
		"compare":     {"compare", dir, dir},
		"merge":       {"merge", "--out", filepath.Join(filepath.Dir(dir), "merged"), dir},
		"browse":      {"browse", "--addr", "127.0.0.1:0", dir},
	}
}

// runBounded runs a command in the background and fails the test when it
// has not returned within a minute (a hang); unblock is called then.
func runBounded(t *testing.T, args []string, unblock func()) (string, int) {
	t.Helper()
	type result struct {
		stderr string
		code   int
	}
	done := make(chan result, 1)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() {
		var stdout, stderr bytes.Buffer
		code := run(ctx, args, &stdout, &stderr)
		done <- result{stderr.String(), code}
	}()
	select {
	case r := <-done:
		return r.stderr, r.code
	case <-time.After(time.Minute):
		unblock()
		t.Fatalf("%v: no answer within a minute", args)
	}
	return "", 0
}

// TestReadersRefuseFilesThatAreNotRegular makes runs.jsonl and then
// manifest.json a FIFO (which blocked every reading command forever,
// SIGTERM ignored), and runs.jsonl a symlink to /dev/zero (which
// grew them to gigabytes): every reading command refuses the file at once,
// naming it.
func TestReadersRefuseFilesThatAreNotRegular(t *testing.T) {
	dir, id := hostileDir(t)
	keep := filepath.Join(t.TempDir(), "keep")
	for _, name := range []string{rundir.RunsFile, rundir.ManifestFile} {
		path := filepath.Join(dir, name)
		os.Rename(path, keep)
		if err := syscall.Mkfifo(path, 0o644); err != nil {
			t.Fatal(err)
		}
		// A blocked open for reading returns once a writer opens the FIFO.
		unblock := func() {
			if f, err := os.OpenFile(path, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
				f.Close()
			}
		}
		for cmd, args := range readingCommands(dir, id) {
			if name == rundir.ManifestFile && cmd == "repair" {
				continue // below: it restores the backup
			}
			stderr, code := runBounded(t, args, unblock)
			if name == rundir.ManifestFile && cmd == "show ID" && code == 0 {
				code = exitUsage // show needs no manifest: it warns, and shows the run
			}
			if code != exitUsage || !strings.Contains(stderr, name+" is not a regular file (a FIFO)") {
				t.Errorf("%s a FIFO: %s: exit %d, stderr %s", name, cmd, code, stderr)
			}
		}
		if name == rundir.ManifestFile {
			// repair takes a FIFO manifest for a damaged one, and
			// restores the backup over it.
			stdout, stderr, code := runCLI(t, cliCase{args: []string{"repair", dir}})
			if fi, err := os.Stat(path); code != 0 || err != nil || !fi.Mode().IsRegular() || !strings.Contains(stdout, "restored from its backup") {
				t.Errorf("repair of a FIFO manifest.json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
			}
		}
		os.Remove(path)
		os.Rename(keep, path)
	}
	path := filepath.Join(dir, rundir.RunsFile)
	os.Remove(path)
	if err := os.Symlink("/dev/zero", path); err != nil {
		t.Fatal(err)
	}
	for cmd, args := range readingCommands(dir, id) {
		stderr, code := runBounded(t, args, func() {})
		if code != exitUsage || !strings.Contains(stderr, "runs.jsonl is not a regular file (a character device)") {
			t.Errorf("runs.jsonl -> /dev/zero: %s: exit %d, stderr %s", cmd, code, stderr)
		}
	}
}

// TestReadersRefuseAnOverlongLine appends a line of NUL bytes one byte
// longer than rundir.MaxRecordBytes (sparse: `truncate -s +N`, which
// report read whole, then took for a cut-short last line): every
// reading command names its line and byte offset, and repair sets it
// aside whole and keeps the 12 records.
func TestReadersRefuseAnOverlongLine(t *testing.T) {
	if testing.Short() {
		t.Skip("writes and reads a 64 MiB line")
	}
	dir, id := hostileDir(t)
	path := filepath.Join(dir, rundir.RunsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(path, fi.Size()+rundir.MaxRecordBytes+1); err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("runs.jsonl:13: the line is longer than 64 MiB, the longest a run record may be (the line starts at byte offset %d)", fi.Size())
	for cmd, args := range readingCommands(dir, id) {
		if cmd == "repair" {
			continue
		}
		stderr, code := runBounded(t, args, func() {})
		if code != exitUsage || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %s", cmd, code, stderr)
		}
	}
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"repair", dir}})
	if code != 0 || !strings.Contains(stdout, fmt.Sprintf("runs.jsonl:13: dropped (byte offset %d, %d bytes): the line is longer than 64 MiB", fi.Size(), rundir.MaxRecordBytes+1)) ||
		!strings.Contains(stdout, "kept 12 records") {
		t.Fatalf("repair: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if dfi, err := os.Stat(filepath.Join(dir, rundir.DroppedFile)); err != nil || dfi.Size() != rundir.MaxRecordBytes+2 {
		t.Errorf("the line set aside: %v %v", dfi, err)
	}
	if _, stderr, code := runCLI(t, cliCase{args: []string{"report", dir}}); code != 0 {
		t.Errorf("report after the repair: exit %d: %s", code, stderr)
	}
}

// TestEditedManifestIsNamed edits manifest.json by hand (it still
// decodes): every reading command names the member, and repair restores
// the intact backup and keeps every record (it kept none of them before).
func TestEditedManifestIsNamed(t *testing.T) {
	for _, tc := range []struct{ member, edit, want string }{
		{"rounds", `"rounds": -5`, `"rounds" is -5; want an integer in [1, 10000]`},
		{"case_ids", `"case_ids": ["x"]`, `"case_ids" names 1 cases, but cases is 2`},
		{"expected_runs", `"expected_runs": 1000000000000000000`, `"expected_runs" is 1000000000000000000; the settings call for at most 12 runs`},
	} {
		t.Run(tc.member, func(t *testing.T) {
			dir, id := hostileDir(t)
			path := filepath.Join(dir, rundir.ManifestFile)
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var m map[string]json.RawMessage
			if err := json.Unmarshal(b, &m); err != nil {
				t.Fatal(err)
			}
			var one map[string]json.RawMessage
			if err := json.Unmarshal([]byte("{"+tc.edit+"}"), &one); err != nil {
				t.Fatal(err)
			}
			m[tc.member] = one[tc.member]
			if tc.member == "case_ids" {
				m["cases"] = json.RawMessage("2") // cases no longer counts case_ids
			}
			edited, _ := json.MarshalIndent(m, "", "  ")
			if err := os.WriteFile(path, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			for cmd, args := range readingCommands(dir, id) {
				if cmd == "repair" {
					continue
				}
				stderr, code := runBounded(t, args, func() {})
				if cmd == "show ID" && code == 0 {
					code = exitUsage // show needs no manifest: it warns, and shows the run
				}
				if code != exitUsage || !strings.Contains(stderr, "manifest.json:") || !strings.Contains(stderr, tc.want) {
					t.Errorf("%s: exit %d, stderr %s", cmd, code, stderr)
				}
			}
			stdout, stderr, code := runCLI(t, cliCase{args: []string{"repair", dir}})
			if code != 0 || !strings.Contains(stdout, "restored from its backup") || !strings.Contains(stdout, "kept 12 records") {
				t.Fatalf("repair: exit %d\n%s\n%s", code, stdout, stderr)
			}
			if _, stderr, code := runCLI(t, cliCase{args: []string{"report", dir}}); code != 0 {
				t.Errorf("report after the repair: exit %d: %s", code, stderr)
			}
		})
	}
}

// TestRepairKeepsTheBackupsRecords gives manifest.json another case set
// that still checks (case_ids ["x"], cases 1): repair restores the intact
// backup, whose run the records belong to, and drops none of them.
func TestRepairKeepsTheBackupsRecords(t *testing.T) {
	dir, _ := hostileDir(t)
	path := filepath.Join(dir, rundir.ManifestFile)
	b, _ := os.ReadFile(path)
	var m map[string]json.RawMessage
	json.Unmarshal(b, &m)
	m["case_ids"] = json.RawMessage(`["x"]`)
	edited, _ := json.MarshalIndent(m, "", "  ")
	os.WriteFile(path, edited, 0o644)
	stdout, stderr, code := runCLI(t, cliCase{args: []string{"repair", dir}})
	if code != 0 || !strings.Contains(stdout, "kept 12 records") || strings.Contains(stdout, "dropped") {
		t.Fatalf("repair: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if got, _ := os.ReadFile(path); bytes.Equal(got, edited) {
		t.Errorf("manifest.json was not restored")
	}
}

// TestRecordBoundsTheProposal runs an exec actor that answers with 1,500
// operations, then one with a pointer of 100 KiB: the record keeps 1,000
// operations and 1 KiB of each pointer, and says so (it kept all of them:
// 44 MB of records for 6 runs of an 80k-operation answer).
func TestRecordBoundsTheProposal(t *testing.T) {
	ops := make([]string, 1500)
	for i := range ops {
		ops[i] = `{"op":"test","path":"/ticket/status","value":1}`
	}
	long := strings.Repeat("a", 100<<10)
	for _, tc := range []struct {
		name, patch string
		check       func(st map[string]json.RawMessage) string
	}{
		{"1500 operations", "[" + strings.Join(ops, ",") + "]", func(st map[string]json.RawMessage) string {
			var patch []any
			json.Unmarshal(st["patch"], &patch)
			if len(patch) != rundir.MaxRecordedOps {
				return fmt.Sprintf("%d operations kept", len(patch))
			}
			return ""
		}},
		{"a long pointer", `[{"op":"replace","path":"/` + long + `","value":1}]`, func(st map[string]json.RawMessage) string {
			var patch []struct{ Path string }
			json.Unmarshal(st["patch"], &patch)
			if len(patch) != 1 || len(patch[0].Path) != rundir.MaxRecordedPointerBytes {
				return fmt.Sprintf("the patch keeps %v", patch)
			}
			for _, m := range []string{"decisions", "audit"} {
				// A message quotes the pointer: 4 KiB of it.
				if bytes.Contains(st[m], []byte(long[:5<<10])) {
					return m + " keeps the whole pointer"
				}
			}
			return ""
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			answer, _ := json.Marshal(map[string]string{"text": `{"patch":` + tc.patch + `,"note":"n"}`})
			os.WriteFile(filepath.Join(dir, "answer.json"), answer, 0o644)
			script := filepath.Join(dir, "agent.sh")
			os.WriteFile(script, []byte("#!/bin/sh\ncat >/dev/null\ncat "+filepath.Join(dir, "answer.json")+"\n"), 0o755)
			out := filepath.Join(dir, "out")
			_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--out", out, "--actor", "exec:" + script, "--config", "patchoptic"}})
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			b, err := os.ReadFile(filepath.Join(out, rundir.RunsFile))
			if err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Steps []map[string]json.RawMessage `json:"steps"`
			}
			if err := json.Unmarshal(b, &rec); err != nil || len(rec.Steps) == 0 {
				t.Fatalf("%v %d", err, len(rec.Steps))
			}
			st := rec.Steps[0]
			if msg := tc.check(st); msg != "" {
				t.Error(msg)
			}
			var notes []rundir.Truncation
			if err := json.Unmarshal(st["truncated"], &notes); err != nil || len(notes) == 0 {
				t.Errorf("no truncated member: %s (%v)", st["truncated"], err)
			}
		})
	}
}

// TestInterruptEndsABlockedCommand sends SIGTERM to a command that does
// not watch its context: runSignals returns once the grace has passed.
func TestInterruptEndsABlockedCommand(t *testing.T) {
	started := make(chan bool)
	commands["test-block"] = command{"blocks until the test ends", func(ctx context.Context, _ []string, _, _ io.Writer) int {
		close(started)
		select {} // a read that never returns
	}}
	defer delete(commands, "test-block")
	var stderr syncBuffer
	done := make(chan int, 1)
	go func() { done <- runSignals([]string{"test-block"}, io.Discard, &stderr, 200*time.Millisecond) }()
	<-started
	syscall.Kill(os.Getpid(), syscall.SIGTERM)
	select {
	case code := <-done:
		if code != exitUsage || !strings.Contains(stderr.String(), "did not stop within 200ms") {
			t.Errorf("exit %d, stderr %s", code, stderr.String())
		}
	case <-time.After(10 * time.Second):
		t.Fatal("SIGTERM did not end the command")
	}
}
