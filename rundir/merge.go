package rundir

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// MaxShards bounds n in a shard i/n.
const MaxShards = 10000

// Merged is the directory Merge made: its manifest (the shards' settings,
// with their expected runs added up), the runs it holds, those of them
// that settled (not pending) and those with an outcome (passed or failed),
// and the shards of the series that were not given ("1/3, 2/3"; "" when
// none is missing or none was sharded).
type Merged struct {
	Manifest *Manifest
	Runs     int
	Settled  int
	Outcomes int
	Missing  string
}

// Merge merges the shard directories dirs of one run (run --shard i/n)
// into the new directory out: every directory is read and checked first
// (Read), and refused when it repeats a shard (or is a second unsharded
// one) or holds other settings than the first (Key, without the shard);
// then the last record of each run is written to out, once, in the order
// of dirs, and the manifest with the expected runs added up. out must not
// hold runs yet. The summary is the caller's to write.
//
// When ctx ends before the manifest is written (SIGINT, SIGTERM), Merge
// stops between two records, removes the runs.jsonl and lock file it
// wrote (and out, when it made it and nothing else is in it), and returns ctx's error:
// out is left as it was, and the same merge can be run again (issue 23:
// an interrupted merge left half a runs.jsonl that no command would read
// or merge into).
func Merge(ctx context.Context, out string, dirs []string) (*Merged, error) {
	if _, err := os.Stat(filepath.Join(out, RunsFile)); err == nil {
		return nil, errorf(CodeHoldsRuns, "%s already holds runs; merge into a new directory", out)
	}
	var first *Manifest
	shards := map[string]bool{}
	expected := 0
	var read []*Dir
	for _, dir := range dirs {
		d, err := Read(dir)
		if err != nil {
			return nil, err
		}
		m := d.Manifest
		if shards[m.Shard] {
			if m.Shard == "" {
				return nil, fmt.Errorf("%s: two unsharded directories of one run; merge shards (run --shard i/n)", dir)
			}
			return nil, errorf(CodeGivenTwice, "%s: shard %s is given twice", dir, m.Shard)
		}
		shards[m.Shard] = true
		expected += m.ExpectedRuns
		k := *m
		k.Shard = ""
		if first == nil {
			first = &k
		} else if first.Key() != k.Key() {
			return nil, errorf(CodeSettingsDiffer, "%s holds a run with other settings than %s; only shards of one run merge", dir, dirs[0])
		}
		read = append(read, d)
	}
	res := &Merged{Manifest: first, Missing: missingShards(shards)}
	_, statErr := os.Stat(out)
	_, lockErr := os.Stat(filepath.Join(out, LockFile))
	if err := copyRuns(ctx, out, read, res); err != nil {
		if ctx.Err() != nil {
			os.Remove(filepath.Join(out, RunsFile))
			if errors.Is(lockErr, os.ErrNotExist) {
				os.Remove(filepath.Join(out, LockFile))
			}
			if errors.Is(statErr, os.ErrNotExist) {
				os.Remove(out) // made here; removed only when empty
			}
		}
		return nil, err
	}
	// The shards' expected counts add up to the whole run's when every
	// shard is there.
	first.ExpectedRuns = expected
	if err := WriteManifest(out, *first); err != nil {
		return nil, err
	}
	return res, nil
}

// copyRuns writes the last record of each run of the directories to
// out's runs.jsonl, each run once (the first directory's), counting them;
// it stops with ctx's error when ctx ends.
func copyRuns(ctx context.Context, out string, dirs []*Dir, res *Merged) error {
	sink, err := OpenSink(out)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, d := range dirs {
		err := d.Each(func(r *Record) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			if seen[r.RunID] {
				return nil
			}
			seen[r.RunID] = true
			res.Runs++
			if r.Status != StatusPending {
				res.Settled++
			}
			if r.HasOutcome() {
				res.Outcomes++
			}
			return sink.Write(r)
		})
		if err != nil {
			sink.Close()
			return err
		}
	}
	return sink.Close()
}

// missingShards lists the shards of an i/n series not among those given
// ("1/3, 2/3"), or "" when none is missing or no shard was given.
func missingShards(given map[string]bool) string {
	n := 0
	for s := range given {
		if _, of, ok := strings.Cut(s, "/"); ok {
			fmt.Sscan(of, &n)
		}
	}
	if n > MaxShards {
		return fmt.Sprintf("(%d shards: too many to list)", n)
	}
	var missing []string
	for i := 0; i < n; i++ {
		if !given[fmt.Sprintf("%d/%d", i, n)] {
			missing = append(missing, fmt.Sprintf("%d/%d", i, n))
		}
	}
	return strings.Join(missing, ", ")
}
