package browse

import (
	"slices"
	"strconv"
	"sync"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
)

// maxRunCases bounds the cases runCases keeps: a case grown to 10 MB
// takes some hundreds of MB in memory, and the pages of one case's runs
// at one scale under one attack are read one after another (the single
// file builds them in that order).
const maxRunCases = 4

// runCases keeps the last few cases as runs met them (runCase), so that
// a case is grown to a scale and worded by an attack once for the pages
// of its runs, not once a page. It is safe for concurrent use.
type runCases struct {
	mu      sync.Mutex
	entries []*runCaseEntry // the newest last
}

// runCaseEntry is one case kept; once makes it.
type runCaseEntry struct {
	key  string
	once sync.Once
	c    *bench.Case
	err  error
}

// runCase is case c of directory d (rec's case, as d's case set holds
// it) as run rec met it: grown to the run's scale and its injections
// worded by the run's attack (rundir.Manifest.RunCase, whose errors it
// returns, with the case it returns with them).
func (b *Browser) runCase(di int, c *bench.Case, rec *rundir.Record) (*bench.Case, error) {
	d := b.dirs[di]
	if rec.Scale == "" && rec.AttackName == "" {
		return c, nil // the case as its file writes it
	}
	key := strconv.Itoa(di) + "\x00" + rec.Case + "\x00" + rec.Scale + "\x00" + rec.AttackName
	rc := &b.runCases
	rc.mu.Lock()
	var e *runCaseEntry
	for _, x := range rc.entries {
		if x.key == key {
			e = x
		}
	}
	if e == nil {
		e = &runCaseEntry{key: key}
		rc.entries = append(rc.entries, e)
		if len(rc.entries) > maxRunCases {
			rc.entries = slices.Delete(rc.entries, 0, 1) // clears the slot it frees
		}
	}
	rc.mu.Unlock()
	e.once.Do(func() { e.c, e.err = d.manifest.RunCase(c, rec) })
	return e.c, e.err
}
