// Command panel relays the prompts of a PatchBench run to a stand-in
// model panel and their answers back (the file actor, docs/actors.md).
// No model can be called from the machines this benchmark is developed
// on; a person, or an assistant told only to act as a careful
// model behind an API, answers instead. The panel sees the prompts and
// nothing else: not the case files, the configuration, the rubric or the
// run's records.
//
// The cycle, with the file actor's directory FA:
//
//	patchbench run --actor files:FA --out RUN          # exit 3: requests wait in FA/pending
//	go run ./scripts/panel batch --dir FA --view full --out B1 [--max N]
//	go run ./scripts/panel batch --dir FA --view projected --out B2 [--max N] [--case IDS]
//	  # the panel reads B1/*.prompt.txt and writes B1/<same name>.answer.txt
//	go run ./scripts/panel collect --dir FA --batch B1
//	go run ./scripts/panel collect --dir FA --batch B2
//	patchbench run --actor files:FA --out RUN          # again, until it exits 0
//
// batch copies, for each pending request whose prompt shows the given
// view, only its messages into BATCH/NNN.prompt.txt; the request keys are
// kept in BATCH/../<batch name>.keys (outside the folder the panel reads).
// A request named in another .keys file beside it is not handed out again.
// collect writes each BATCH/NNN.answer.txt to FA/answers/<key>.txt, through
// a temporary file renamed into place. One panel for the full-state
// prompts and another for the projected ones keeps what one panel saw of
// a state from shaping its answers to the other's.
//
// In the tools protocol (run --protocol tools) each prompt is one turn:
// the step's conversation so far and the tools; the answer is one tool
// call, {"tool": NAME, "arguments": {...}}, or a final text, and each cycle
// of run, batch, answer and collect goes one turn further.
//
// The recorded answers belong to the person who ran the panel, not to the
// repository: keep FA outside it.
package main

import (
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/actors"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: panel batch --dir FA --view full|projected --out BATCH [--max N] [--case ID,ID]\n       panel collect --dir FA --batch BATCH")
		return 2
	}
	var err error
	switch args[0] {
	case "batch":
		err = batch(args[1:], stdout)
	case "collect":
		err = collect(args[1:], stdout)
	default:
		err = fmt.Errorf("unknown command %q (batch or collect)", args[0])
	}
	if err != nil {
		fmt.Fprintf(stderr, "panel: %v\n", err)
		return 2
	}
	return 0
}

// keysFile is where a batch's request keys are kept: beside the batch
// folder, not in it.
func keysFile(batchDir string) string {
	return filepath.Clean(batchDir) + ".keys"
}

func batch(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("batch", flag.ContinueOnError)
	dir := fs.String("dir", "", "the file actor's directory (files:DIR)")
	view := fs.String("view", "", "full or projected: which prompts go into this batch")
	out := fs.String("out", "", "the batch folder to create (the only thing the panel reads)")
	maxN := fs.Int("max", 0, "at most this many prompts (0: all)")
	caseList := fs.String("case", "", "only the requests of these case ids (comma list), so that several panels of one view can split the cases")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" || (*view != "full" && *view != "projected") {
		return errors.New("batch needs --dir, --out and --view full|projected")
	}
	var cases map[string]bool
	if *caseList != "" {
		cases = map[string]bool{}
		for _, id := range strings.Split(*caseList, ",") {
			cases[strings.TrimSpace(id)] = true
		}
	}
	reqs, skipped, err := actors.PendingRequests(*dir)
	if err != nil {
		return err
	}
	for _, s := range skipped {
		fmt.Fprintf(stdout, "skipped %s\n", s)
	}
	// A request already handed to another batch beside this one waits
	// for that batch's answer: it is not handed out twice.
	given := map[string]bool{}
	siblings, _ := filepath.Glob(filepath.Join(filepath.Dir(filepath.Clean(*out)), "*.keys"))
	for _, f := range siblings {
		var m map[string]string
		if b, err := os.ReadFile(f); err == nil && json.Unmarshal(b, &m) == nil {
			for _, k := range m {
				given[k] = true
			}
		}
	}
	var keep []actors.FileRequest
	for _, r := range reqs {
		if r.View == *view && !given[r.Key] && (cases == nil || cases[r.Case]) {
			keep = append(keep, r)
		}
	}
	if *maxN > 0 && len(keep) > *maxN {
		keep = keep[:*maxN]
	}
	if len(keep) == 0 {
		fmt.Fprintf(stdout, "no %s request waits in %s\n", *view, *dir)
		return nil
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	if entries, _ := os.ReadDir(*out); len(entries) > 0 {
		return fmt.Errorf("%s is not empty; give a new batch folder", *out)
	}
	keys := map[string]string{}
	for i, r := range keep {
		name := fmt.Sprintf("%03d", i+1)
		var b strings.Builder
		if r.Tools != nil {
			// The tools protocol: the conversation so far, the tools,
			// and how to answer this turn.
			fmt.Fprintf(&b, "Answer this turn with %s\n%s", actors.ToolAnswerFormat, actors.ConversationText(r))
		} else {
			for _, m := range r.Messages {
				fmt.Fprintf(&b, "===== %s =====\n%s\n\n", m.Role, strings.TrimRight(m.Content, "\n"))
			}
		}
		if err := os.WriteFile(filepath.Join(*out, name+".prompt.txt"), []byte(b.String()), 0o644); err != nil {
			return err
		}
		keys[name] = r.Key
	}
	kb, _ := json.MarshalIndent(keys, "", "  ")
	if err := os.WriteFile(keysFile(*out), kb, 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%d %s prompts in %s (answers go to NNN.answer.txt beside each)\n", len(keep), *view, *out)
	return nil
}

func collect(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("collect", flag.ContinueOnError)
	dir := fs.String("dir", "", "the file actor's directory (files:DIR)")
	batchDir := fs.String("batch", "", "the batch folder the panel answered in")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *batchDir == "" {
		return errors.New("collect needs --dir and --batch")
	}
	kb, err := os.ReadFile(keysFile(*batchDir))
	if err != nil {
		return fmt.Errorf("no keys for batch %s: %w", *batchDir, err)
	}
	var keys map[string]string
	if err := json.Unmarshal(kb, &keys); err != nil {
		return fmt.Errorf("%s: %w", keysFile(*batchDir), err)
	}
	names := make([]string, 0, len(keys))
	for n := range keys {
		names = append(names, n)
	}
	sort.Strings(names)
	if err := os.MkdirAll(filepath.Join(*dir, actors.FilesAnswers), 0o755); err != nil {
		return err
	}
	got, missing := 0, []string{}
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join(*batchDir, n+".answer.txt"))
		if errors.Is(err, os.ErrNotExist) || (err == nil && strings.TrimSpace(string(b)) == "") {
			missing = append(missing, n)
			continue
		}
		if err != nil {
			return err
		}
		dst := filepath.Join(*dir, actors.FilesAnswers, keys[n]+".txt")
		tmp := dst + ".tmp"
		if err := os.WriteFile(tmp, b, 0o644); err != nil {
			return err
		}
		if err := os.Rename(tmp, dst); err != nil {
			return err
		}
		got++
	}
	fmt.Fprintf(stdout, "%d answers collected from %s", got, *batchDir)
	if len(missing) > 0 {
		fmt.Fprintf(stdout, "; no answer yet for %s", strings.Join(missing, ", "))
	}
	fmt.Fprintln(stdout)
	return nil
}
