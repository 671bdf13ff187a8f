package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
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
	return fmt.Sprintf("%s:%d: %v (the line starts at byte offset %d); run \"patchbench repair %s\" to keep every intact record and set the damaged lines aside",
		e.Path, e.Line, e.Err, e.Offset, filepath.Dir(e.Path))
}

func (e *LineError) Unwrap() error { return e.Err }

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
// (its line without surrounding space) and its line number, reading one
// line at a time and decoding only each line's run_id and case. A line
// that is not JSON is a *LineError (the last line, cut short by a crash,
// excepted, as every command reads it); a missing run is a
// *NotFoundError.
func Find(dir, id string) (json.RawMessage, int, error) {
	path := filepath.Join(dir, RunsFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, 0, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	var found json.RawMessage
	foundAt := 0
	caseID, _, _ := strings.Cut(id, "/")
	nf := &NotFoundError{Dir: dir, ID: id, Case: caseID}
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if len(bytes.TrimSpace(b)) > 0 {
			var head struct {
				RunID string `json:"run_id"`
				Case  string `json:"case"`
			}
			if jerr := json.Unmarshal(b, &head); jerr != nil {
				if err == io.EOF && !bytes.HasSuffix(b, []byte("\n")) {
					break // a last line cut short by a crash
				}
				return nil, 0, &LineError{Path: path, Line: line, Offset: off, Err: jerr}
			}
			switch {
			case head.RunID == id:
				found, foundAt = append(json.RawMessage(nil), bytes.TrimSpace(b)...), line
			case head.Case == caseID && len(nf.Near) < 30:
				nf.Near = append(nf.Near, head.RunID)
			}
		}
		off += int64(len(b))
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, 0, fmt.Errorf("%s:%d: %w", path, line, err)
		}
	}
	if found == nil {
		sort.Strings(nf.Near)
		return nil, 0, nf
	}
	return found, foundAt, nil
}
