package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
)

// Dir is a run directory opened for reading: its manifest, and its
// runs.jsonl checked against it. It holds no record: Each streams them.
type Dir struct {
	Path     string
	Manifest *Manifest
	runs     string
	last     map[string]int // run id → the line of its last record
}

// Read opens the run directory dir: it reads its manifest (an error says
// dir is not a run directory when there is none) and checks every line of
// runs.jsonl (a Reader: each a run record, errors naming the file and
// line) and every record against the manifest (a case of its case set, one
// of its configurations and actors, a round it has), holding only each
// run id's last line. A directory with no runs.jsonl holds no run.
func Read(dir string) (*Dir, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("%s is not a run directory: %w", dir, err)
	}
	m, err := parseManifest(path, b)
	if err != nil {
		return nil, err
	}
	d := &Dir{Path: dir, Manifest: m, runs: filepath.Join(dir, RunsFile), last: map[string]int{}}
	in := newMembership(m)
	// A line that is not a record is reported before a record of
	// another run, wherever each is.
	var mismatch error
	_, err = eachIn(d.runs, func(r *Record, line int, off int64) error {
		d.last[r.RunID] = line
		if mismatch != nil {
			return nil
		}
		if err := in.check(r); err != nil {
			mismatch = &LineError{Path: d.runs, Line: line, Offset: off, Err: err}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if mismatch != nil {
		return nil, mismatch
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
		return fmt.Errorf("run %s: case %s is not in this run's case set", r.RunID, r.Case)
	case !slices.Contains(m.Configs, r.Config):
		return fmt.Errorf("run %s: configuration %s is not in this run", r.RunID, r.Config)
	case !slices.Contains(m.Actors, r.Actor):
		return fmt.Errorf("run %s: actor %s is not in this run", r.RunID, r.Actor)
	case r.Round > m.Rounds:
		return fmt.Errorf("run %s: round %d of a %d-round run", r.RunID, r.Round, m.Rounds)
	}
	return nil
}

// Runs is the number of runs recorded: the last record of each run id.
func (d *Dir) Runs() int { return len(d.last) }

// Each calls fn with the last record of each run, in the order of
// runs.jsonl; an error from fn stops it and is returned.
func (d *Dir) Each(fn func(*Record) error) error {
	_, err := eachIn(d.runs, func(r *Record, line int, _ int64) error {
		if d.last[r.RunID] != line {
			return nil
		}
		return fn(r)
	})
	return err
}

// Has reports whether the directory holds run id.
func (d *Dir) Has(id string) bool {
	_, ok := d.last[id]
	return ok
}
