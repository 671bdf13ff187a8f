package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/report"
)

const pendingExamples = `  # A run whose actor is a person (or a model called elsewhere):
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel

  # What waits for an answer, and one request as text (a unique prefix of the key will do):
  patchbench pending panel
  patchbench pending panel --show 3f9c1e2a

  # After the cases were edited, forget the requests nobody will answer:
  patchbench pending panel --clear

  # Only the requests that show the full state:
  patchbench pending panel --view full

  # Answer it (write to a temporary name, then rename), then continue the run:
  cat > panel/answers/.tmp && mv panel/answers/.tmp panel/answers/<key>.txt
  patchbench run --actor files:panel --case sup-tier-escalation --out results/panel
`

// runPending lists the requests of a file actor's directory that wait for
// an answer, or prints one as text.
func runPending(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("pending", "patchbench pending DIR [--show KEY | --clear] [--view full|projected] [--format text|json]", pendingExamples, stdout, stderr)
	clear := fs.Bool("clear", false, "remove the requests that wait (after a case was edited, old prompts never come again); answers are kept")
	show := fs.String("show", "", "print the request with this `key` (or a unique prefix of it) as text, for answering")
	view := fs.choice("view", "", "only the requests whose prompt shows this `view`: full or projected", "full", "projected")
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	pos, err := fs.parseWithArgs(args, 1)
	if err != nil {
		return fs.exit(err)
	}
	if len(pos) != 1 {
		return fs.usageError("give the file actor's directory (the DIR of --actor files:DIR)")
	}
	dir := pos[0]
	all, skipped, err := actors.PendingRequests(dir)
	if err != nil {
		return failf(stderr, "pending", "%v", err)
	}
	for _, s := range skipped {
		fmt.Fprintf(stderr, "patchbench pending: skipped %s\n", report.Printable(s))
	}
	reqs := []actors.FileRequest{}
	for _, r := range all {
		if *view == "" || r.View == *view {
			reqs = append(reqs, r)
		}
	}
	if *show != "" && *clear {
		return fs.usageError("--show and --clear go alone")
	}
	if *show != "" {
		return fs.exit(showPending(dir, *show, *format, reqs, stdout))
	}
	if *clear {
		n, err := actors.ClearPending(dir, reqs)
		if err != nil {
			return failf(stderr, "pending", "%v", err)
		}
		fmt.Fprintf(stdout, "removed %s from %s; the next run writes again the ones it still needs\n", report.PluralOf(n, "request", "requests"), dir)
		return exitOK
	}
	if *format == "json" {
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
		rows[i] = []string{r.Key, r.Case, r.Step, r.Role, r.View, fmt.Sprint(r.Round), fmt.Sprint(r.Attempt)}
	}
	for _, row := range rows {
		for i := range row {
			row[i] = report.Printable(row[i])
		}
	}
	report.WriteColumns(stdout, []string{"key", "case", "step", "role", "view", "round", "attempt"}, rows)
	fmt.Fprintf(stdout, "\n%s for an answer: read %s/<key>.txt (or \"patchbench pending %s --show KEY\"), write the reply to %s/<key>.txt, then run the same command again.\n",
		report.PluralOf(len(reqs), "request waits", "requests wait"), filepath.Join(dir, actors.FilesPending), dir, filepath.Join(dir, actors.FilesAnswers))
	return exitOK
}

// showPending prints the one waiting request whose key starts with
// prefix, as text (where to answer, then the messages) or JSON.
func showPending(dir, prefix, format string, reqs []actors.FileRequest, stdout io.Writer) error {
	var found []actors.FileRequest
	for _, r := range reqs {
		if strings.HasPrefix(r.Key, prefix) {
			found = append(found, r)
		}
	}
	switch {
	case len(found) == 1:
		if format == "json" {
			b, _ := json.MarshalIndent(found[0], "", "  ")
			fmt.Fprintf(stdout, "%s\n", b)
		} else {
			fmt.Fprint(stdout, report.Printable(actors.RequestText(dir, found[0])))
		}
		return nil
	case len(found) > 1:
		return fmt.Errorf("%s matches %d requests; give more of the key", prefix, len(found))
	}
	var keys []string
	for _, r := range reqs {
		keys = append(keys, r.Key)
	}
	if len(keys) == 0 {
		return fmt.Errorf("no request %s waits for an answer in %s: none waits", prefix, dir)
	}
	return fmt.Errorf("no request %s waits for an answer in %s; the keys that wait: %s", prefix, dir, strings.Join(keys, ", "))
}
