package rundir

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// Index is where the last record of each run sits in a directory's
// runs.jsonl, with each record's head (every member before its steps:
// the key, the status, the leaks, the tokens, the content score, the
// illegal commits, the attack, the error), so that a listing needs no
// record and one run is read with a single ReadAt. It is how patchbench
// browse opens a large directory quickly: building it decodes only the
// heads, and its memory is a few hundred bytes per run.
type Index struct {
	path    string
	entries []IndexEntry
	byID    map[string]int
}

// IndexEntry is one run of an Index: its head (a Record without
// FinalState and Checks, whose Steps hold only what a summary counts:
// each step's id, phase, attempts, whether it committed, its decisions,
// the model, and its earlier attempts' decisions; NChecks and NHeld count
// its rubric checks) and the byte offset and length of its last line.
type IndexEntry struct {
	Head    *Record
	NChecks int
	NHeld   int
	Offset  int64
	Length  int
}

// BuildIndex indexes the runs.jsonl of dir (a missing file holds no run).
// Each line is checked as Reader checks it (a run record, errors naming the
// file and line; a last line cut short by a crash is left out) and, when m
// is not nil, against the manifest as Read checks it; but only the members
// an IndexEntry keeps are decoded: a structural scan finds them, and the
// prompts, responses and states are skipped (a line the scan does not
// follow is decoded whole). A run id recorded twice keeps its last line,
// in the order of the first. A summary built from the entries' heads
// (report.Summarizer) is the same as one built from the whole records.
func BuildIndex(dir string, m *Manifest) (*Index, error) {
	path := filepath.Join(dir, RunsFile)
	ix := &Index{path: path, byID: map[string]int{}}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var inCases map[string]bool
	if m != nil {
		inCases = m.caseSet()
	}
	r := bufio.NewReaderSize(f, 4<<20)
	var off int64
	var long []byte
	for line := 1; ; line++ {
		b, err := r.ReadSlice('\n')
		for errors.Is(err, bufio.ErrBufferFull) {
			long = append(long[:0], b...)
			b, err = r.ReadSlice('\n')
			long = append(long, b...)
			b = long
		}
		if err != nil && err != io.EOF {
			return nil, fmt.Errorf("%s:%d: %w", path, line, err)
		}
		n := len(b)
		if len(bytes.TrimSpace(b)) > 0 {
			head, checks, held, perr := decodeHead(b)
			if perr != nil {
				if err == io.EOF {
					break // a last line cut short by a crash
				}
				return nil, fmt.Errorf("%s:%d: %w", path, line, perr)
			}
			if m != nil {
				if err := m.check(head, inCases); err != nil {
					return nil, fmt.Errorf("%s:%d: %w", path, line, err)
				}
			}
			e := IndexEntry{Head: head, Offset: off, Length: n, NChecks: checks, NHeld: held}
			if i, ok := ix.byID[head.RunID]; ok {
				ix.entries[i] = e
			} else {
				ix.byID[head.RunID] = len(ix.entries)
				ix.entries = append(ix.entries, e)
			}
		}
		off += int64(n)
		if err == io.EOF {
			break
		}
	}
	return ix, nil
}

// decodeHead decodes what an index keeps of one line of runs.jsonl
// (decodeLean, or the whole line when the scan does not follow it) and
// checks it as a run record.
func decodeHead(b []byte) (*Record, int, int, error) {
	rec, checks, held, err := decodeLean(b)
	if err != nil {
		var full Record
		if err := json.Unmarshal(b, &full); err != nil {
			return nil, 0, 0, err
		}
		checks, held = len(full.Checks), 0
		for _, c := range full.Checks {
			if c.Held {
				held++
			}
		}
		full.Checks, full.FinalState = nil, nil
		for i := range full.Steps {
			s := &full.Steps[i]
			s.Prompt, s.RawResponse, s.Audit, s.Patch = nil, "", nil, nil
			for k := range s.Earlier {
				s.Earlier[k].RawResponse, s.Earlier[k].Audit = "", nil
			}
		}
		rec = &full
	}
	if err := checkRecord(rec); err != nil {
		return nil, 0, 0, err
	}
	return rec, checks, held, nil
}

// Len is the number of runs indexed.
func (ix *Index) Len() int { return len(ix.entries) }

// Entry is the i-th run, in the order of runs.jsonl.
func (ix *Index) Entry(i int) *IndexEntry { return &ix.entries[i] }

// Lookup returns the position of run id, or false.
func (ix *Index) Lookup(id string) (int, bool) {
	i, ok := ix.byID[id]
	return i, ok
}

// Load reads the whole record of the i-th run with one ReadAt; numbers
// keep their text (json.Number), as patchbench show reads them.
func (ix *Index) Load(i int) (*Record, error) {
	e := ix.entries[i]
	f, err := os.Open(ix.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, e.Length)
	if n, err := f.ReadAt(b, e.Offset); n < len(b) {
		return nil, fmt.Errorf("%s: run %s: %w", ix.path, e.Head.RunID, err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var rec Record
	if err := dec.Decode(&rec); err != nil {
		return nil, fmt.Errorf("%s: run %s: %w", ix.path, e.Head.RunID, err)
	}
	if rec.RunID != e.Head.RunID {
		return nil, fmt.Errorf("%s changed since it was opened (run %s is no longer at byte %d); open it again", ix.path, e.Head.RunID, e.Offset)
	}
	return &rec, nil
}
