package main

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
)

// A batch holds only the prompts of one view; collect puts the answers
// where the file actor reads them.
func TestBatchAndCollect(t *testing.T) {
	b, err := os.ReadFile("../../bench/testdata/example/support/sup-example-refund.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c, ps := bench.ParseCase("sup-example-refund.yaml", b)
	if len(ps) > 0 {
		t.Fatal(ps)
	}
	fa := filepath.Join(t.TempDir(), "fa")
	files, _ := actors.NewFiles("files:" + fa)
	full := actors.Request{CaseID: c.ID, StepID: c.Steps[0].ID, Role: c.Steps[0].Role, Messages: []actors.Message{{Role: "user", Content: "full state prompt"}}, Round: 1, Attempt: 1}
	proj := full
	proj.Projected, proj.Messages = true, []actors.Message{{Role: "user", Content: "projected prompt"}}
	for _, r := range []actors.Request{full, proj} {
		if _, err := files.Propose(context.Background(), r); !errors.Is(err, actors.ErrPending) {
			t.Fatalf("want pending, got %v", err)
		}
	}
	var so, se bytes.Buffer
	// A batch for other cases holds nothing of this one.
	other := filepath.Join(t.TempDir(), "b0")
	if code := run([]string{"batch", "--dir", fa, "--view", "projected", "--case", "sup-other,fin-other", "--out", other}, &so, &se); code != 0 {
		t.Fatal(se.String())
	}
	if _, err := os.Stat(other); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a batch for other cases was made: %v", err)
	}
	out := filepath.Join(t.TempDir(), "b1")
	if code := run([]string{"batch", "--dir", fa, "--view", "projected", "--case", "sup-other," + c.ID, "--out", out}, &so, &se); code != 0 {
		t.Fatal(se.String())
	}
	entries, _ := os.ReadDir(out)
	if len(entries) != 1 || entries[0].Name() != "001.prompt.txt" {
		t.Fatalf("batch holds %v", entries)
	}
	prompt, _ := os.ReadFile(filepath.Join(out, "001.prompt.txt"))
	if !strings.Contains(string(prompt), "projected prompt") || strings.Contains(string(prompt), c.ID) {
		t.Fatalf("prompt file: %q", prompt)
	}
	os.WriteFile(filepath.Join(out, "001.answer.txt"), []byte(`{"patch": [], "note": "x"}`), 0o644)
	if code := run([]string{"collect", "--dir", fa, "--batch", out}, &so, &se); code != 0 {
		t.Fatal(se.String())
	}
	resp, err := files.Propose(context.Background(), proj)
	if err != nil || resp.Raw != `{"patch": [], "note": "x"}` {
		t.Fatalf("after collect: %q, %v", resp.Raw, err)
	}
	if _, err := files.Propose(context.Background(), full); !errors.Is(err, actors.ErrPending) {
		t.Fatalf("the full-state request was answered: %v", err)
	}
}
