package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"

	"github.com/patchbench/patchbench/actors"
)

const pendingExamples = `  # A run whose actor is a person (or a model called elsewhere):
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel

  # What waits for an answer, and one request as text:
  patchbench pending panel
  patchbench pending panel --show 3f9c1e2a...

  # Answer it (write to a temporary name, then rename), then continue the run:
  cat > panel/answers/.tmp && mv panel/answers/.tmp panel/answers/3f9c1e2a....txt
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel
`

// runPending lists the requests of a file actor's directory that wait for
// an answer, or prints one as text.
func runPending(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("pending", "patchbench pending DIR [--show KEY] [--format text|json]", pendingExamples, stdout, stderr)
	show := fs.String("show", "", "print the request with this `key` as text (its messages), for answering")
	format := fs.String("format", "text", "output `format`: text or json")
	pos, code, ok := fs.parseWithArgs(args, 1)
	if !ok {
		return code
	}
	if len(pos) != 1 {
		return fs.usageError("give the file actor's directory (the DIR of --actor files:DIR)")
	}
	if *format != "text" && *format != "json" {
		return fs.usageError("--format must be text or json, not %q", *format)
	}
	dir := pos[0]
	reqs, err := actors.PendingRequests(dir)
	if err != nil {
		return failf(stderr, "pending", "%v", err)
	}
	if *show != "" {
		for _, r := range reqs {
			if r.Key == *show {
				if *format == "json" {
					b, _ := json.MarshalIndent(r, "", "  ")
					fmt.Fprintf(stdout, "%s\n", b)
				} else {
					fmt.Fprint(stdout, actors.RequestText(r))
				}
				return exitOK
			}
		}
		return failf(stderr, "pending", "no request %s waits for an answer in %s", *show, dir)
	}
	if *format == "json" {
		if reqs == nil {
			reqs = []actors.FileRequest{}
		}
		b, _ := json.MarshalIndent(reqs, "", "  ")
		fmt.Fprintf(stdout, "%s\n", b)
		return exitOK
	}
	if len(reqs) == 0 {
		fmt.Fprintf(stdout, "no request waits for an answer in %s\n", dir)
		return exitOK
	}
	rows := make([][]string, len(reqs))
	for i, r := range reqs {
		rows[i] = []string{r.Key, r.Case, r.Step, r.Role, fmt.Sprint(r.Round), fmt.Sprint(r.Attempt)}
	}
	writeTable(stdout, []string{"key", "case", "step", "role", "round", "attempt"}, rows)
	fmt.Fprintf(stdout, "\n%s wait for an answer: read %s/<key>.txt, write the reply to %s/<key>.txt, then run the same command again.\n",
		plural(len(reqs), "request"), filepath.Join(dir, actors.FilesPending), filepath.Join(dir, actors.FilesAnswers))
	return exitOK
}
