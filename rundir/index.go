package rundir

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sync"

	"github.com/patchbench/patchbench/scoring"
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
// each step's id, phase, attempts, whether it committed, its decisions
// when one of them failed (nil when every gate passed: a summary counts
// failures), the model, and its earlier attempts' decisions; NChecks and
// NHeld count its rubric checks) and the line (from 1), byte offset and
// length of its last line.
//
// The head's Leaks are compacted (compactLeaks): one leak for each kind,
// mechanism, detector, field and step, at most MaxIndexedLeaks, their places
// dropped; NLeaks is how many the record lists. A directory's index so costs
// a bounded amount per run whatever its records' leak lists hold (200 lines
// of 99,000 leaks took browse to 3.45 GB); a run's every leak is read with
// its record.
type IndexEntry struct {
	Head    *Record
	NLeaks  int
	NChecks int
	NHeld   int
	Line    int
	Offset  int64
	Length  int
}

// BuildIndex indexes the runs.jsonl of dir (a missing file holds no run).
// Each line is checked as Reader checks it (a run record, errors naming the
// file and line; a last line cut short by a crash is left out) and, when m
// is not nil, against the manifest as Read checks it; but only the members
// an IndexEntry keeps are decoded: a structural scan finds them, and the
// prompts and responses are skipped (a line the scan does not follow is
// decoded whole). A line that ends with its newline was written whole, and
// its final state, the last member, is not scanned. Large files are cut
// into chunks at line ends and indexed by up to GOMAXPROCS goroutines. A
// run id recorded twice keeps its last line, in the order of the first. A
// summary built from the entries' heads (report.Summarizer) is the same as
// one built from the whole records.
func BuildIndex(dir string, m *Manifest) (*Index, error) {
	var in *membership
	if m != nil {
		mm := newMembership(m)
		in = &mm
	}
	return buildIndex(dir, scanOptions{in: in})
}

// scanOptions say how buildIndex scans: in, when set, checks each record
// against a manifest; with lateMismatch a record of another run does not
// stop the scan, and is reported only when no line is damaged (Read's
// order); idsOnly keeps of each head only its run id and case (what a
// Dir needs to find runs, and to keep those of some cases: Index.Keep;
// the heads are read again by EachHead, so that their memory
// does not grow with the directory).
type scanOptions struct {
	in           *membership
	lateMismatch bool
	idsOnly      bool
}

func buildIndex(dir string, o scanOptions) (*Index, error) {
	path := filepath.Join(dir, RunsFile)
	ix := &Index{path: path, byID: map[string]int{}}
	f, err := openRegular(path)
	if errors.Is(err, os.ErrNotExist) {
		return ix, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	bounds, err := chunkBounds(f, fi.Size(), indexChunks(fi.Size()))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	chunks := make([]indexChunk, len(bounds)-1)
	var wg sync.WaitGroup
	for k := range chunks {
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := k == len(chunks)-1
			chunks[k] = scanChunk(io.NewSectionReader(f, bounds[k], bounds[k+1]-bounds[k]), bounds[k], last, o)
		}()
	}
	wg.Wait()
	lines := 0
	var mismatch *LineError
	for _, c := range chunks {
		switch {
		case c.ioErr:
			return nil, fmt.Errorf("%s:%d: %w", path, lines+c.errLine, c.err)
		case c.err != nil:
			return nil, &LineError{Path: path, Line: lines + c.errLine, Offset: c.errOff, Err: c.err}
		case c.mismatch != nil && mismatch == nil:
			mismatch = c.mismatch
			mismatch.Line += lines
		}
		for _, e := range c.entries {
			e.Line += lines
			if i, ok := ix.byID[e.Head.RunID]; ok {
				ix.entries[i] = e
			} else {
				ix.byID[e.Head.RunID] = len(ix.entries)
				ix.entries = append(ix.entries, e)
			}
		}
		lines += c.lines
	}
	if mismatch != nil {
		mismatch.Path = path
		return nil, mismatch
	}
	return ix, nil
}

// indexChunks is the number of chunks BuildIndex cuts a file of size
// bytes into: one per 32 MiB, at most GOMAXPROCS. Tests change it.
var indexChunks = func(size int64) int {
	return int(min(int64(runtime.GOMAXPROCS(0)), size/(32<<20)+1))
}

// chunkBounds cuts a file of size bytes into n chunks that end at line
// ends: the offsets where each starts, then size. Past a line longer than
// MaxRecordBytes no bound is put (the chunk it starts in refuses it).
func chunkBounds(f io.ReaderAt, size int64, n int) ([]int64, error) {
	bounds := []int64{0}
	buf := make([]byte, 64<<10)
	for k := 1; k < n; k++ {
		off := max(size*int64(k)/int64(n), bounds[len(bounds)-1])
		// A line longer than MaxRecordBytes is refused by the chunk it
		// starts in, whatever follows: the search for its end stops
		// there, and that chunk is the last.
		from := off
		for off < size {
			if off-from > MaxRecordBytes {
				return append(bounds, size), nil
			}
			m, err := f.ReadAt(buf, off)
			if i := bytes.IndexByte(buf[:m], '\n'); i >= 0 {
				off += int64(i) + 1
				break
			}
			off += int64(m)
			if err != nil && err != io.EOF {
				return nil, err
			}
			if m == 0 {
				off = size
			}
		}
		if off < size && off > bounds[len(bounds)-1] {
			bounds = append(bounds, off)
		}
	}
	return append(bounds, size), nil
}

// indexChunk is what one goroutine of BuildIndex found in its chunk: the
// entries in order (a run id may come twice), the lines it holds, and the
// first error with its line in the chunk and the byte offset in the file
// where that line starts (ioErr: reading failed, not the line).
type indexChunk struct {
	entries []IndexEntry
	lines   int
	err     error
	errLine int
	errOff  int64
	ioErr   bool
	// mismatch is the chunk's first record of another run, with its
	// line in the chunk (scanOptions.lateMismatch).
	mismatch *LineError
}

// scanChunk indexes the lines of one chunk, which starts at byte base of
// the file; last says it is the file's last chunk (whose last line may be
// cut short by a crash), as o says.
func scanChunk(r io.Reader, base int64, last bool, o scanOptions) indexChunk {
	var c indexChunk
	var d leanDecoder
	// A run id recorded again replaces its entry at once, so that the
	// chunk's memory follows its runs, not its lines (two
	// million copies of one line took 1.7 GB).
	byID := map[string]int{}
	lines, errLine, errOff, err := scanHeads(r, base, &d, last, func(h lineHead) bool {
		if o.in != nil {
			if err := o.in.check(h.rec); err != nil {
				if !o.lateMismatch {
					c.err, c.errLine, c.errOff = err, h.line, h.off
					return false
				}
				if c.mismatch == nil {
					c.mismatch = &LineError{Line: h.line, Offset: h.off, Err: err}
				}
			}
		}
		if o.idsOnly {
			h.rec = &Record{RunID: h.rec.RunID, Case: h.rec.Case}
		}
		e := IndexEntry{Head: h.rec, NLeaks: len(h.rec.Leaks), Line: h.line, Offset: h.off, Length: h.length, NChecks: h.checks, NHeld: h.held}
		h.rec.Leaks = compactLeaks(h.rec.Leaks)
		if i, ok := byID[e.Head.RunID]; ok {
			c.entries[i] = e
		} else {
			byID[e.Head.RunID] = len(c.entries)
			c.entries = append(c.entries, e)
		}
		return true
	})
	c.lines = lines
	if err != nil { // a damaged line, or reading failed (offset -1)
		c.err, c.errLine, c.errOff, c.ioErr = err, errLine, max(errOff, 0), errOff < 0
	}
	return c
}

// lineHead is one line of runs.jsonl as scanHeads decoded it: its head
// (leanDecoder.decodeHead), its rubric checks and those held, its line
// (from 1, in what was scanned), byte offset in the file and length.
type lineHead struct {
	rec          *Record
	checks, held int
	line         int
	off          int64
	length       int
}

// scanHeads decodes the head of each non-blank line of r, which starts
// at byte base of the file, and calls fn with it until fn returns false.
// last says r ends the file: its last line, when it lacks its newline and
// is not a record, was cut short by a crash and is left out. It returns
// the lines it read and, when it stopped on a damaged line, the line's
// number, offset and error (ErrLineTooLong for a line longer than
// MaxRecordBytes, of which no more is read); a read error has the offset
// -1.
func scanHeads(r io.Reader, base int64, d *leanDecoder, last bool, fn func(lineHead) bool) (lines, errLine int, errOff int64, err error) {
	lr := newLineReader(r, MaxRecordBytes)
	off := base
	for line := 1; ; line++ {
		b, rerr := lr.next()
		switch {
		case rerr == io.EOF:
			return lines, 0, 0, nil
		case errors.Is(rerr, ErrLineTooLong):
			return line, line, off, rerr
		case rerr != nil:
			return lines, line, -1, rerr
		}
		n := len(b)
		lines = line
		whole := b[n-1] == '\n'
		if len(bytes.TrimSpace(b)) > 0 {
			head, checks, held, perr := d.decodeHead(b, whole)
			if perr != nil {
				if !whole && last {
					return lines, 0, 0, nil // a last line cut short by a crash
				}
				return lines, line, off, perr
			}
			if !fn(lineHead{rec: head, checks: checks, held: held, line: line, off: off, length: n}) {
				return lines, 0, 0, nil
			}
		}
		off += int64(n)
	}
}

// decodeHead decodes what an index keeps of one line of runs.jsonl
// (decode, or the whole line when the scan does not follow it) and
// checks it as a run record. whole says the line ended with its newline.
func (d *leanDecoder) decodeHead(b []byte, whole bool) (*Record, int, int, error) {
	if err := checkContainers(b); err != nil {
		return nil, 0, 0, err
	}
	rec, checks, held, err := d.decode(b, whole)
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

// Trim drops what the entries hold but their run ids, once a caller has
// read their heads (a browser that keeps what it shows): the index then
// still finds and loads every run, with a few bytes per run.
func (ix *Index) Trim() {
	for i := range ix.entries {
		e := &ix.entries[i]
		e.Head = &Record{RunID: e.Head.RunID}
	}
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
	f, err := openRegular(ix.path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b := make([]byte, e.Length)
	if n, err := f.ReadAt(b, e.Offset); n < len(b) {
		return nil, fmt.Errorf("%s: run %s: %w", ix.path, e.Head.RunID, err)
	}
	if err := checkContainers(b); err != nil {
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

// MaxIndexedLeaks bounds the leaks an IndexEntry's head keeps (64). A run
// has a few kinds of secret, four mechanisms and a few steps: a record
// whose leaks differ in more ways than that is not one a run wrote.
const MaxIndexedLeaks = 64

// compactLeaks returns leaks with one leak for each secret kind,
// mechanism, detector, field, step and where (output or state: a leak's
// route) (the first met, Secret and Path cleared), at most MaxIndexedLeaks: what a summary and a listing
// read of a run's leaks (which kinds and mechanisms, a model name that
// carried a canary), in a slice of its own (the record's long one is not
// kept).
func compactLeaks(leaks []scoring.Leak) []scoring.Leak {
	if len(leaks) == 0 {
		return leaks
	}
	type key struct{ kind, mechanism, detector, field, step, where string }
	seen := map[key]bool{}
	var out []scoring.Leak
	for _, l := range leaks {
		k := key{l.Kind, l.Mechanism, l.Detector, l.Field, l.Step, l.Where}
		if seen[k] || len(out) == MaxIndexedLeaks {
			continue
		}
		seen[k] = true
		out = append(out, scoring.Leak{Kind: l.Kind, Mechanism: l.Mechanism, Detector: l.Detector, Field: l.Field, Step: l.Step, Where: l.Where})
	}
	return slices.Clip(out)
}
