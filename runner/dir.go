package runner

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
)

// File names inside a run directory.
const (
	RunsFile     = "runs.jsonl"
	ManifestFile = "manifest.json"
	SummaryFile  = "summary.json"
)

// ReadRuns reads a runs.jsonl file. A last line without its newline is
// kept when it is a whole record, and otherwise (a write cut short by a
// crash) dropped and reported by its byte offset (truncateAt, -1 when
// nothing is to be cut) so that the file can be repaired before more runs
// are appended; needNewline says the kept last line lacks its newline.
// Any other bad line, or a record that is not one (no run_id, an unknown
// status, a score outside [0, 1], negative tokens), is an error naming the
// file and line.
func ReadRuns(path string) (recs []*Record, truncateAt int64, err error) {
	recs, truncateAt, _, err = readRuns(path)
	return recs, truncateAt, err
}

func readRuns(path string) (recs []*Record, truncateAt int64, needNewline bool, err error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, -1, false, nil
	}
	if err != nil {
		return nil, -1, false, err
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	var off int64
	for line := 1; ; line++ {
		b, err := r.ReadBytes('\n')
		if len(b) > 0 && !bytes.HasSuffix(b, []byte("\n")) {
			var rec Record
			if json.Unmarshal(b, &rec) == nil && checkRecord(&rec) == nil {
				return append(recs, &rec), -1, true, nil
			}
			// No newline and no whole record: the last write did not finish.
			return recs, off, false, nil
		}
		if len(bytes.TrimSpace(b)) > 0 {
			var rec Record
			if err := json.Unmarshal(b, &rec); err != nil {
				return nil, -1, false, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			if err := checkRecord(&rec); err != nil {
				return nil, -1, false, fmt.Errorf("%s:%d: %w", path, line, err)
			}
			recs = append(recs, &rec)
		}
		off += int64(len(b))
		if err == io.EOF {
			return recs, -1, false, nil
		}
		if err != nil {
			return nil, -1, false, err
		}
	}
}

// checkRecord checks what a record must hold to be counted.
func checkRecord(r *Record) error {
	switch {
	case r.RunID == "" || r.Case == "" || r.Config == "" || r.Actor == "" || r.Round < 1:
		return errors.New("not a run record: run_id, case, config, actor and round are required")
	case r.RunID != fmt.Sprintf("%s/%s/%s/%d", r.Case, r.Config, r.Actor, r.Round):
		return fmt.Errorf("run %s: the run_id does not match its case, config, actor and round", r.RunID)
	case r.Status != StatusPassed && r.Status != StatusFailed && r.Status != StatusError && r.Status != StatusPending:
		return fmt.Errorf("run %s: unknown status %q", r.RunID, r.Status)
	case !(r.ContentScore >= 0 && r.ContentScore <= 1):
		return fmt.Errorf("run %s: content_score %v is outside [0, 1]", r.RunID, r.ContentScore)
	case r.Tokens.Prompt < 0 || r.Tokens.Completion < 0:
		return fmt.Errorf("run %s: negative token counts", r.RunID)
	}
	return nil
}

// ReadRunsForAppend is ReadRuns for a writer: it also says whether the
// last line lacks its newline, which the writer must add first.
func ReadRunsForAppend(path string) (recs []*Record, truncateAt int64, needNewline bool, err error) {
	return readRuns(path)
}

// FileSink appends records to runs.jsonl, one line each, written at once.
type FileSink struct {
	mu sync.Mutex
	f  *os.File
}

// OpenSink opens dir/runs.jsonl for appending, first cutting off a last
// line left unfinished by a crash (at truncateAt, when ≥ 0). It locks the
// file: a second process on the same directory gets an error instead of
// recording runs twice.
func OpenSink(dir string, truncateAt int64) (*FileSink, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	path := filepath.Join(dir, RunsFile)
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if err := lock(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	if truncateAt >= 0 {
		if err := f.Truncate(truncateAt); err != nil {
			f.Close()
			return nil, err
		}
	}
	return &FileSink{f: f}, nil
}

// Write implements Sink: one JSON line, written with a single call.
func (s *FileSink) Write(r *Record) error {
	b, err := json.Marshal(r)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err = s.f.Write(append(b, '\n'))
	return err
}

// Truncate cuts the file at off: the repair of a last line left
// unfinished by a crash, made under the sink's lock.
func (s *FileSink) Truncate(off int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.f.Truncate(off)
}

// Newline ends an unterminated last line before the next record.
func (s *FileSink) Newline() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, err := s.f.Write([]byte("\n"))
	return err
}

// Close closes the file.
func (s *FileSink) Close() error { return s.f.Close() }

// WriteJSON writes v as indented JSON to dir/name, through a temporary
// file renamed into place, so a crash never leaves half a file.
func WriteJSON(dir, name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	tmp := filepath.Join(dir, "."+name+".tmp")
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, filepath.Join(dir, name))
}
