//go:build unix

package runner

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

// execScript writes an executable shell script into dir; $DIR in body is
// dir.
func execScript(t *testing.T, dir, name, body string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, []byte("#!/bin/sh\nDIR="+strconv.Quote(dir)+"\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestExecActorRuns runs the example case in every configuration with
// three exec actors, small shell scripts: one that answers with the
// reference proposal (its answer goes through the parser and the gates
// like a model's), one that declines in prose (a malformed proposal, a
// rejection), and one that crashes (an error run, its standard error kept
// in the record).
func TestExecActorRuns(t *testing.T) {
	c, cfgs := loadExample(t)
	dir := t.TempDir()
	answer, _ := json.Marshal(map[string]any{"text": "Here you are:\n" + string(referenceOf(t, c, c.Steps[0])), "usage": map[string]int{"prompt": 1000, "completion": 50}})
	if err := os.WriteFile(filepath.Join(dir, "answer.json"), answer, 0o644); err != nil {
		t.Fatal(err)
	}
	good := execScript(t, dir, "good.sh", `cat > /dev/null; echo "agent: step done" >&2; cat "$DIR/answer.json"`)
	decline := execScript(t, dir, "decline.sh", `cat > /dev/null; echo '{"text": "I would rather not."}'`)
	crash := execScript(t, dir, "crash.sh", `cat > /dev/null; echo "Traceback (most recent call last): KeyError: 'patch'" >&2; exit 1`)
	var acts []actors.Actor
	for _, spec := range []string{"exec:" + good, "exec:" + decline, "exec:" + crash} {
		a, err := actors.New(spec, actors.Params{Timeout: 30 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		acts = append(acts, a)
	}
	out := t.TempDir()
	sink, err := rundir.OpenSink(out)
	if err != nil {
		t.Fatal(err)
	}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: acts, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8, Tokenizer: "o200k_base"}, Concurrency: 4}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	sink.Close()
	recs := readRuns(t, filepath.Join(out, rundir.RunsFile))
	if len(recs) != 3*len(cfgs) {
		t.Fatalf("%d records", len(recs))
	}
	for _, r := range recs {
		st := r.Steps[0]
		switch r.Actor {
		case "exec:" + good:
			if r.Status != rundir.StatusPassed || !st.Committed || st.ActorStderr != "agent: step done\n" {
				t.Errorf("%s: status %s committed %v stderr %q", r.RunID, r.Status, st.Committed, st.ActorStderr)
			}
			if r.Tokens.Prompt != 1000 || r.Tokens.Completion != 50 || r.Tokens.Source != "exec" || r.TokensSent != 1050 {
				t.Errorf("%s: tokens %+v sent %d", r.RunID, r.Tokens, r.TokensSent)
			}
		case "exec:" + decline:
			if r.Status != rundir.StatusFailed || st.Committed || st.Decisions[0].Code != "malformed_patch" || r.Error != nil {
				t.Errorf("%s: status %s decisions %+v", r.RunID, r.Status, st.Decisions)
			}
			if r.Tokens.Source != "tokenizer:o200k_base" || r.Tokens.Prompt == 0 {
				t.Errorf("%s: tokens %+v", r.RunID, r.Tokens)
			}
		case "exec:" + crash:
			if r.Status != rundir.StatusError || r.Error == nil || !strings.Contains(*r.Error, "exit status 1") ||
				!strings.Contains(st.ActorStderr, "KeyError: 'patch'") || r.Leaked || r.SemanticPass {
				t.Errorf("%s: status %s error %v stderr %q", r.RunID, r.Status, r.Error, st.ActorStderr)
			}
		default:
			t.Errorf("unexpected actor %s", r.Actor)
		}
	}
}
