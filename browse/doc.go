// Package browse is the trace browser of PatchBench (patchbench browse, and
// report --format html): the runs of one or more run directories as web
// pages, made with html/template from templates and assets embedded in the
// binary (no CDN, no build step, no Node at run time).
//
// The pipeline, in the words of the rest of the module:
//
//  1. Open reads each directory's manifest and indexes its runs.jsonl
//     (rundir.BuildIndex: the byte offset of each run's last line and its
//     head, every member but the steps' texts, the checks and the final
//     state), checks that the directories make one comparison
//     (rundir.Combine: the same case set, prompt and pass threshold; an
//     actor found in two of them is named actor@dir) and builds the summary
//     (report.Builder) from the heads; then it returns, and the case sets
//     the manifests name (or Options.CasesDir) load in the background. No
//     record is held in memory.
//  2. The overview (the server's /) is the main table, with each configuration ×
//     actor row linking to its runs; a grid of cases × configurations per
//     actor, each cell coloured and lettered by outcome (passed, failed,
//     leaked, illegal commit, error, pending); the report's other tables;
//     and the runs that match the filters (domain, configuration, actor,
//     outcome, round, and a search by case or run id), given as query
//     parameters so that the server filters without a script.
//  3. A run page reads one record with a single ReadAt (rundir.Index.Load)
//     and replays it: the state before each step is the case's initial
//     state as the run met it (rundir.Manifest.RunCase: grown to the
//     run's scale, its injections worded by the run's attack) with the
//     committed patches of the steps before it applied in
//     order through a runtime.Session (parse and apply only, and the
//     phase moved as the step's advance_to says), so it is recomputed, not
//     recorded; the page says so, and says when the replayed final state
//     differs from the recorded one (the case file changed since the run).
//     Per step it shows the phase, the view next to the full state, the
//     prompt, the raw response with every leaked canary marked and its
//     detector named (scoring.Detector.Spans), the decoded patch, every
//     decision (enforcing and audit) with its code, the state before and
//     after as a diff, and then the rubric checks, the leaks and the same
//     run in the other configurations.
//
// Hidden values. A location the step's view does not show is hidden; the
// secrets of a case are hidden from every view. Until the reader asks for
// them (?reveal=1 on a run page of the server), no hidden value is in the
// page at all: a state shows the hidden location with a marker instead of
// its value, and in free text (a prompt, a response, a patch value, a
// decision's message) every canary and every hidden string of four
// characters or more that is not also shown somewhere in the view is
// replaced by a marker. A leaked canary is marked where it was found, with
// its secret and detector, and its text is withheld like any hidden value.
// The single file (WriteBundle) holds no hidden value unless its Reveal
// option puts them in, marked, when asked at build time.
//
// The single file (WriteBundle) is the overview as HTML and every run
// page as data: the pages are built as the server builds them (sharing
// one pageMemo, so that a state, view, prompt or response that repeats
// across configurations, actors and rounds is masked once), each piece of
// them stored once in a table by its SHA-256 digest, the table gzipped
// and embedded as base64; the file's script decodes it (the browser's
// DecompressionStream) the first time a run's page is asked for
// (#run-ID) and draws the page with the DOM, as the run template does.
package browse
