package rundir

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
)

// Reader reads the records of a runs.jsonl one line at a time, as
// bufio.Scanner reads lines and x/perf's benchfmt.Reader reads results:
//
//	r := rundir.NewReader(f)
//	for r.Next() {
//		rec := r.Record()
//		...
//	}
//	if err := r.Err(); err != nil { ... }
//
// Blank lines are skipped. A line that is not JSON, or not a run record
// (checkRecord: a key, a known status, a score in [0, 1], token counts
// that are not negative), stops the reader with a *LineError naming the
// file, the line and its byte offset. The last line, when it lacks its newline, is a record when
// it is a whole one (NeedsNewline then says a writer must end it), and
// otherwise a write cut short by a crash: it is dropped, and TruncateAt
// says where the file must be cut before more records are appended. A
// line longer than MaxRecordBytes, the last one too (no writer writes
// one), is a *LineError wrapping ErrLineTooLong.
type Reader struct {
	name         string
	r            *lineReader
	line         int   // the line of the current record
	lineOff      int64 // the byte offset of the current record's line
	next         int   // the line read next
	off          int64 // the byte offset of the line read next
	rec          *Record
	err          error
	done         bool
	truncateAt   int64
	needsNewline bool
}

// NewReader returns a Reader of the records in r. Errors name the file
// by r's Name() when r has one (an *os.File), else "runs.jsonl". A line
// longer than MaxRecordBytes stops it with a *LineError wrapping
// ErrLineTooLong, having read no more of the line than that.
func NewReader(r io.Reader) *Reader {
	name := RunsFile
	if n, ok := r.(interface{ Name() string }); ok {
		name = n.Name()
	}
	return &Reader{name: name, r: newLineReader(r, MaxRecordBytes), next: 1, truncateAt: -1}
}

// Next reads the next record; it returns false at the end of the file or
// on an error (Err says which).
func (r *Reader) Next() bool {
	for !r.done {
		b, err := r.r.next()
		line, start := r.next, r.off
		r.next++
		switch {
		case err == io.EOF:
			r.done = true
			continue
		case errors.Is(err, ErrLineTooLong):
			return r.fail(&LineError{Path: r.name, Line: line, Offset: start, Err: err})
		case err != nil:
			return r.fail(fmt.Errorf("%s:%d: %w", r.name, line, err))
		}
		if !bytes.HasSuffix(b, []byte("\n")) {
			// The last line, without its newline.
			r.done = true
			var rec Record
			if decodeRecord(b, &rec) == nil && checkRecord(&rec) == nil {
				r.rec, r.line, r.lineOff, r.needsNewline = &rec, line, start, true
				return true
			}
			// No whole record: the last write did not finish.
			r.truncateAt = r.off
			return false
		}
		r.off += int64(len(b))
		if len(bytes.TrimSpace(b)) > 0 {
			var rec Record
			if err := decodeRecord(b, &rec); err != nil {
				return r.fail(&LineError{Path: r.name, Line: line, Offset: start, Err: err})
			}
			if err := checkRecord(&rec); err != nil {
				return r.fail(&LineError{Path: r.name, Line: line, Offset: start, Err: err})
			}
			r.rec, r.line, r.lineOff = &rec, line, start
			return true
		}
	}
	r.rec = nil
	return false
}

func (r *Reader) fail(err error) bool {
	r.err, r.done, r.rec = err, true, nil
	return false
}

// Record is the current record; the reader does not reuse it.
func (r *Reader) Record() *Record { return r.rec }

// Line is the 1-based line of the current record.
func (r *Reader) Line() int { return r.line }

// Offset is the byte offset (from 0) at which the current record's line
// starts.
func (r *Reader) Offset() int64 { return r.lineOff }

// Err is the error that stopped the reader, or nil at the end of the
// file.
func (r *Reader) Err() error { return r.err }

// TruncateAt is the byte offset of a last line cut short by a crash,
// which a writer must cut off before appending; -1 when there is none.
// It is known once Next has returned false.
func (r *Reader) TruncateAt() int64 { return r.truncateAt }

// NeedsNewline says the last line is a whole record without its newline,
// which a writer must add before appending. It is known once Next has
// returned false.
func (r *Reader) NeedsNewline() bool { return r.needsNewline }

// eachIn calls fn with each record of the runs.jsonl at path, with its
// line and the byte offset where the line starts; a missing file holds no
// record, and one that is not a regular file is refused
// (*NotRegularError). It returns the reader, for the repairs a writer
// must make.
func eachIn(path string, fn func(rec *Record, line int, off int64) error) (*Reader, error) {
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return &Reader{truncateAt: -1}, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := NewReader(f)
	for r.Next() {
		if err := fn(r.Record(), r.Line(), r.Offset()); err != nil {
			return nil, err
		}
	}
	return r, r.Err()
}

// Latest calls fn with the last record of each run id in the runs.jsonl
// at path (a retried run is recorded again; every command reads the last
// line as the run), in the order of the file. It reads the file twice,
// holding only each run id's last line in between, so a directory's
// records are never all in memory. An error from fn stops it.
func Latest(path string, fn func(*Record) error) error {
	last := map[string]int{}
	if _, err := eachIn(path, func(rec *Record, line int, _ int64) error {
		last[rec.RunID] = line
		return nil
	}); err != nil {
		return err
	}
	_, err := eachIn(path, func(rec *Record, line int, _ int64) error {
		if last[rec.RunID] != line {
			return nil
		}
		return fn(rec)
	})
	return err
}
