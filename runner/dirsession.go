package runner

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
)

// DirSession is one session of a benchmark run on its run directory
// (docs/run.md): OpenDir refuses a directory of other settings,
// locks it, reads what it holds (the runs to skip, the tokens already
// sent) and writes the manifest; Write records each run and counts it
// (Totals); End records in the manifest how the session ended. It is the
// Sink to give Run; the command sums the runs for summary.json.
type DirSession struct {
	Dir      string
	Manifest rundir.Manifest
	// Skip holds the ids of the runs the directory holds already (Run's
	// skip); TokensSent the tokens their records sent (Options.TokensSpent).
	Skip       map[string]bool
	TokensSent int
	fresh      bool
	sink       *rundir.Sink
	mu         sync.Mutex
	totals     Totals
}

// Totals are what a session says of its directory: the runs, those with
// an outcome (passed or failed), those settled (not pending), the error
// runs with the first error, and the pending runs per actor.
type Totals struct {
	Runs, Outcomes, Settled, Errors int
	FirstError                      string
	Pending                         map[string]int
}

// Add counts one record.
func (t *Totals) Add(r *rundir.Record) {
	if t.Pending == nil {
		t.Pending = map[string]int{}
	}
	t.Runs++
	switch r.Status {
	case rundir.StatusPending:
		t.Pending[r.Actor]++
		return
	case rundir.StatusError:
		t.Errors++
		if t.FirstError == "" && r.Error != nil {
			t.FirstError = *r.Error
		}
	default:
		t.Outcomes++
	}
	t.Settled++
}

// OpenDir opens dir for a session with manifest m. A directory whose
// manifest has other
// settings is refused (rundir.CheckManifest's error); the first start and
// every session's revision are kept. Until End says otherwise, the
// manifest marks the session interrupted, so that a session killed, or
// stopped by a full disk, is marked all the same. retryErrors redoes the
// error runs. The lock is taken before the directory is read, so no other
// process adds runs in between.
func OpenDir(dir string, m rundir.Manifest, retryErrors bool) (*DirSession, error) {
	old, err := rundir.CheckManifest(dir, m)
	if err != nil {
		return nil, err
	}
	if old != nil {
		m.Started, m.Revisions = old.Started, old.Revisions
	}
	m.Interrupted = true
	if rev := strings.TrimSpace(m.Version + " " + m.GitRevision); rev != "" && !slices.Contains(m.Revisions, rev) {
		m.Revisions = append(m.Revisions, rev)
	}
	sink, err := rundir.OpenSink(dir)
	if err != nil {
		return nil, err
	}
	res, err := sink.Resume(retryErrors)
	if err == nil {
		err = rundir.WriteManifest(dir, m)
	}
	if err != nil {
		sink.Close()
		return nil, err
	}
	return &DirSession{Dir: dir, Manifest: m, Skip: res.Skip, TokensSent: res.TokensSent, fresh: res.Records == 0, sink: sink}, nil
}

// Write records r in the directory, then counts it, in the order of the
// file.
func (d *DirSession) Write(r *rundir.Record) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	if err := d.sink.Write(r); err != nil {
		return err
	}
	d.totals.Add(r)
	return nil
}

// Fresh reports whether the directory held no record when the session
// started: every record is then this session's, and what was written
// (Totals, and whatever a caller summed as it wrote) is the directory's
// whole, with no need to read it back.
func (d *DirSession) Fresh() bool { return d.fresh }

// Totals counts the records this session wrote (the directory's, when
// the session is Fresh).
func (d *DirSession) Totals() Totals {
	d.mu.Lock()
	defer d.mu.Unlock()
	t := d.totals
	t.Pending = maps.Clone(t.Pending)
	if t.Pending == nil {
		t.Pending = map[string]int{}
	}
	return t
}

// Ending is how a session ended, from Run's error: the token budget spent
// (TokenBudgetSpent), endpoints down (Down: the runs not started are left
// for the same command), a run left undone because its agent called no
// tool (NoToolCalled), or Err, any other error (a cancelled context,
// a FatalError, a failed write); Interrupted says Err is set.
type Ending struct {
	TokenBudgetSpent bool
	Down             *DownError
	// NoToolCalled says a run was left undone, not recorded, because its
	// driven agent called no tool (actors.ErrNoToolCalled).
	NoToolCalled bool
	Err          error
}

// Interrupted reports whether the session stopped before its work.
func (e Ending) Interrupted() bool { return e.Err != nil }

// End closes the directory after Run returned runErr and records how the
// session ended in the manifest (finished time, token budget spent,
// interrupted). The error is the manifest's write failing: the manifest
// then still marks the session interrupted.
func (d *DirSession) End(runErr error) (Ending, error) {
	if err := d.sink.Close(); err != nil && runErr == nil {
		runErr = err
	}
	var e Ending
	m := &d.Manifest
	m.Finished = time.Now().UTC().Format(time.RFC3339)
	if errors.Is(runErr, ErrTokenBudget) {
		m.TokenBudgetSpent, e.TokenBudgetSpent, runErr = true, true, nil
	}
	if errors.As(runErr, &e.Down) {
		runErr = nil
	}
	if errors.Is(runErr, actors.ErrNoToolCalled) {
		e.NoToolCalled, runErr = true, nil
	}
	e.Err = runErr
	m.Interrupted = runErr != nil
	return e, rundir.WriteManifest(d.Dir, *m)
}

// Abandon releases the directory without recording the session's end:
// the manifest keeps marking it interrupted, as a killed session leaves
// it. End is the way to finish a session.
func (d *DirSession) Abandon() error { return d.sink.Close() }
