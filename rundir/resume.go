package rundir

// Resumed is what a run directory already holds, for a run that goes on
// with it (the same command again resumes: docs/run.md).
type Resumed struct {
	// Skip holds the run ids not to run again: those recorded with an
	// outcome, and those recorded as errors unless errors are retried. A
	// pending run is continued.
	Skip map[string]bool
	// Records counts the records read; TokensSent adds up what they sent
	// to providers (counted against a token budget).
	Records, TokensSent int
}

// Resume reads the sink's runs.jsonl, under its lock so that no other
// process adds runs in between, and makes it ready for appending: a last
// line cut short by a crash is cut off, and a whole last record without
// its newline is ended. It returns the runs to skip (retryErrors redoes
// the runs that ended in an error) and the tokens already sent.
func (s *Sink) Resume(retryErrors bool) (Resumed, error) {
	res := Resumed{Skip: map[string]bool{}}
	r, err := eachIn(s.path, func(rec *Record, _ int, _ int64) error {
		res.Records++
		if rec.HasOutcome() || (rec.Status == StatusError && !retryErrors) {
			// By the id the run has now: a grown run recorded before
			// run ids named the scale is not run again.
			res.Skip[recordID(rec)] = true
		}
		res.TokensSent += rec.TokensSent
		return nil
	})
	if err != nil {
		return Resumed{}, err
	}
	if err := s.repair(r.TruncateAt(), r.NeedsNewline()); err != nil {
		return Resumed{}, err
	}
	return res, nil
}
