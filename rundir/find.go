package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// LineError is a line of runs.jsonl that is not a run record (not JSON,
// not a record checkRecord accepts, or a record of another run): the file,
// the line (from 1), the byte offset where the line starts (from 0), and
// why. Its message points to patchbench repair, which keeps every intact
// record and sets such lines aside.
type LineError struct {
	Path   string
	Line   int
	Offset int64
	Err    error
}

func (e *LineError) Error() string {
	return fmt.Sprintf("%s:%d: %v (the line starts at byte offset %d); run \"%s\" to keep every intact record and set the damaged lines aside",
		e.Path, e.Line, e.Err, e.Offset, e.RepairCommand())
}

func (e *LineError) Unwrap() error { return e.Err }

// RepairCommand is the command the message points to: patchbench repair
// and the file's directory.
func (e *LineError) RepairCommand() string { return repairCommand(e.Path) }

// repairCommand is "patchbench repair DIR" for a file of the run
// directory DIR.
func repairCommand(path string) string { return "patchbench repair " + filepath.Dir(path) }

// NotFoundError is a run a directory does not hold. Near lists runs of
// the same case it does hold (at most 30, sorted).
type NotFoundError struct {
	Dir, ID, Case string
	Near          []string
}

func (e *NotFoundError) Error() string {
	if len(e.Near) > 0 {
		return fmt.Sprintf("%s holds no run %s; runs of case %s: %s", e.Dir, e.ID, e.Case, strings.Join(e.Near, ", "))
	}
	return fmt.Sprintf("%s holds no run %s (a run id is case/config/actor/round)", e.Dir, e.ID)
}

// Find returns the last record of run id in dir's runs.jsonl as written
// (its line without surrounding space) and its line number. It indexes the
// file as Read does (buildIndex: heads only, in parallel chunks, keeping
// each run's run id and place), then reads the one line. A line that is
// not a run record is a *LineError (the last line, cut short by a crash,
// excepted, as every command reads it); a missing run is a
// *NotFoundError naming runs of the same case.
func Find(dir, id string) (json.RawMessage, int, error) {
	path := filepath.Join(dir, RunsFile)
	if _, err := os.Stat(path); err != nil {
		return nil, 0, errorf(CodeNotRunDir, "%s is not a run directory: %w", dir, err)
	}
	ix, err := buildIndex(dir, scanOptions{idsOnly: true})
	if err != nil {
		return nil, 0, err
	}
	i, ok := ix.Lookup(id)
	if !ok {
		caseID, _, _ := strings.Cut(id, "/")
		nf := &NotFoundError{Dir: dir, ID: id, Case: caseID}
		for _, other := range ix.RunIDs() { // a run id starts with its case id
			if c, _, _ := strings.Cut(other, "/"); c == caseID {
				nf.Near = append(nf.Near, other)
			}
		}
		sort.Strings(nf.Near)
		nf.Near = nf.Near[:min(len(nf.Near), 30)]
		return nil, 0, nf
	}
	e := ix.Entry(i)
	f, err := openRegular(path)
	if err != nil {
		return nil, 0, err
	}
	defer f.Close()
	b := make([]byte, e.Length)
	if n, err := f.ReadAt(b, e.Offset); n < len(b) {
		return nil, 0, fmt.Errorf("%s: run %s: %w", path, id, err)
	}
	return bytes.TrimSpace(b), e.Line, nil
}
