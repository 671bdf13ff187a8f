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
	inCases := map[string]bool{}
	for _, id := range m.CaseIDs {
		inCases[id] = true
	}
	// A line that is not a record is reported before a record of
	// another run, wherever each is.
	var mismatch error
	_, err = eachIn(d.runs, func(r *Record, line int) error {
		d.last[r.RunID] = line
		if mismatch != nil {
			return nil
		}
		switch {
		case len(m.CaseIDs) > 0 && !inCases[r.Case]:
			mismatch = fmt.Errorf("%s: run %s: case %s is not in this run's case set", d.runs, r.RunID, r.Case)
		case !slices.Contains(m.Configs, r.Config):
			mismatch = fmt.Errorf("%s: run %s: configuration %s is not in this run", d.runs, r.RunID, r.Config)
		case !slices.Contains(m.Actors, r.Actor):
			mismatch = fmt.Errorf("%s: run %s: actor %s is not in this run", d.runs, r.RunID, r.Actor)
		case r.Round > m.Rounds:
			mismatch = fmt.Errorf("%s: run %s: round %d of a %d-round run", d.runs, r.RunID, r.Round, m.Rounds)
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

// Runs is the number of runs recorded: the last record of each run id.
func (d *Dir) Runs() int { return len(d.last) }

// Each calls fn with the last record of each run, in the order of
// runs.jsonl; an error from fn stops it and is returned.
func (d *Dir) Each(fn func(*Record) error) error {
	_, err := eachIn(d.runs, func(r *Record, line int) error {
		if d.last[r.RunID] != line {
			return nil
		}
		return fn(r)
	})
	return err
}
