package rundir

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Dir is a run directory opened for reading: its manifest, and its
// runs.jsonl indexed and checked against it. It holds where each run's
// last line is, not the records: Each streams them whole, EachHead their
// heads.
type Dir struct {
	Path     string
	Manifest *Manifest
	runs     string
	index    *Index
}

// Read opens the run directory dir: it reads its manifest (an error says
// dir is not a run directory when there is none), indexes runs.jsonl
// (BuildIndex: every line a run record, its head decoded and checked,
// errors a *LineError naming the file, line and byte offset; the final
// state of a whole line is not scanned, so Each, which decodes whole
// records, may still meet a damaged one) and checks every record against
// the manifest (a case of its case set, one of its configurations and
// actors, a round it has). A line that is not a record is reported before
// a record of another run, wherever each is. It keeps only where each
// run's last line is, so its memory is a few dozen bytes a run. A
// directory with no runs.jsonl holds no run.
func Read(dir string) (*Dir, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := readRegular(path, maxManifestBytes)
	var nr *NotRegularError
	switch {
	case errors.As(err, &nr):
		return nil, err
	case err != nil:
		return nil, errorf(CodeNotRunDir, "%s is not a run directory: %w", dir, err)
	}
	m, err := parseManifest(path, b)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, Manifest: m, runs: filepath.Join(dir, RunsFile)}
	in := newMembership(m)
	if d.index, err = buildIndex(dir, scanOptions{in: &in, lateMismatch: true, idsOnly: true}); err != nil {
		return nil, err
	}
	return d, nil
}

// membership checks that records belong to the run of a manifest.
// membership checks records against a manifest (check), with its case
// ids as a set.
type membership struct {
	m     *Manifest
	cases map[string]bool
}

func newMembership(m *Manifest) membership {
	in := membership{m: m, cases: map[string]bool{}}
	for _, id := range m.CaseIDs {
		in.cases[id] = true
	}
	return in
}

// check says why a record is not of the manifest's run (a case outside
// its case set, a configuration or actor it does not have, a round beyond
// its rounds), or nil.
func (in membership) check(r *Record) error {
	m := in.m
	switch {
	case len(m.CaseIDs) > 0 && !in.cases[r.Case]:
		return &OutsideRunError{RunID: r.RunID, Member: "case", Value: r.Case}
	case !slices.Contains(m.Configs, r.Config):
		return &OutsideRunError{RunID: r.RunID, Member: "config", Value: r.Config}
	case !slices.Contains(m.Actors, r.Actor):
		return &OutsideRunError{RunID: r.RunID, Member: "actor", Value: r.Actor}
	case r.Round > m.Rounds:
		return &OutsideRunError{RunID: r.RunID, Member: "round", Value: fmt.Sprint(r.Round), Rounds: m.Rounds}
	}
	return nil
}

// Runs is the number of runs recorded: the last record of each run id.
func (d *Dir) Runs() int { return d.index.Len() }

// Each calls fn with the last record of each run, whole, in the order of
// runs.jsonl; an error from fn stops it and is returned.
func (d *Dir) Each(fn func(*Record) error) error {
	_, err := eachIn(d.runs, func(r *Record, _ int, off int64) error {
		if i, ok := d.index.Lookup(r.RunID); !ok || d.index.Entry(i).Offset != off {
			return nil
		}
		return fn(r)
	})
	return err
}

// EachHead calls fn with the head of the last record of each run (a
// Record without its final state and rubric checks, whose steps hold only
// what a summary counts: see IndexEntry), in the order of runs.jsonl. It
// reads the file again, decoding only the heads, one line at a time: what
// report and compare count is in the heads, and memory does not grow with
// the directory. An error from fn stops it and is returned.
func (d *Dir) EachHead(fn func(*Record) error) error {
	f, err := openRegular(d.runs)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	var ld leanDecoder
	var ferr error
	_, line, off, err := scanHeads(f, 0, &ld, true, func(h lineHead) bool {
		if i, ok := d.index.Lookup(h.rec.RunID); ok && d.index.Entry(i).Offset == h.off {
			ferr = fn(h.rec)
		}
		return ferr == nil
	})
	switch {
	case ferr != nil:
		return ferr
	case err != nil && off < 0:
		return fmt.Errorf("%s:%d: %w", d.runs, line, err)
	case err != nil:
		return &LineError{Path: d.runs, Line: line, Offset: off, Err: err}
	}
	return nil
}

// Has reports whether the directory holds run id.
func (d *Dir) Has(id string) bool { return d.index.Has(id) }
