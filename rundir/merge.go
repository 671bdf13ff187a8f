package rundir

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"

	"github.com/patchbench/patchbench/internal/regularfile"
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

// MergeOptions are MergeWith's options. AllowMissing merges the shards
// given when some of their series are missing (they are refused
// otherwise, with CodeMissingShards); the manifest then records them
// (Manifest.MissingShards). Finish, when set, is called with the
// directory being made and the result, once the runs and the manifest
// are written: what it writes (the summary) appears with them.
type MergeOptions struct {
	AllowMissing bool
	Finish       func(dir string, m *Merged) error
}

// MergeWith merges the shard directories dirs of one run (run --shard
// i/n) into the new directory out: every directory is read and checked
// first (Read), and refused when it repeats a shard (or is a second
// unsharded one), when the shards are of series of different sizes (0/2
// with 0/3) or mix a shard with an unsharded directory, when shards of
// the series are missing (unless o.AllowMissing), or when it holds other
// settings than the first (Key, without the shard); then the last record
// of each run is written, once, in the order of dirs, the manifest with
// the expected runs added up, and whatever o.Finish writes.
//
// out must not exist, or be an empty directory. Everything is written
// into a temporary directory beside it (".NAME.merge-…", locked while it
// is written), synced to disk, and renamed to out only when whole: a
// merge killed at any point leaves out as it was (a later merge into
// the same out removes the temporary directory a killed one left), and
// one whose ctx ends (SIGINT, SIGTERM) stops between two records, removes
// its temporary directory and returns ctx's error.
func MergeWith(ctx context.Context, out string, dirs []string, o MergeOptions) (*Merged, error) {
	if err := checkMergeTarget(out); err != nil {
		return nil, err
	}
	var first *Manifest
	shards := map[string]bool{}
	var series []shardOf
	expected, unknown := 0, false
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
		series = append(series, shardOf{dir, m.Shard})
		expected += m.ExpectedRuns
		unknown = unknown || m.ExpectedRunsUnknown
		k := *m
		k.Shard = ""
		if first == nil {
			first = &k
		} else if first.Key() != k.Key() {
			return nil, errorf(CodeSettingsDiffer, "%s holds a run with other settings than %s (%s differ); only shards of one run merge",
				dir, dirs[0], strings.Join(first.Differences(k), ", "))
		}
		read = append(read, d)
	}
	if err := checkSeries(series); err != nil {
		return nil, err
	}
	res := &Merged{Manifest: first, Missing: missingShards(shards)}
	if res.Missing != "" && !o.AllowMissing {
		return nil, errorf(CodeMissingShards, "shards %s of the series are missing (%s given); give every shard, or merge those given with --allow-missing", res.Missing, strings.Join(givenShards(series), ", "))
	}
	first.MissingShards = res.Missing
	removeStaleMerges(out)
	parent := filepath.Dir(filepath.Clean(out))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return nil, &WriteError{Path: out, Err: cause(err)}
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(filepath.Clean(out))+mergeSuffix+"*")
	if err != nil {
		return nil, &WriteError{Path: out, Err: cause(err)}
	}
	lock, err := lockDir(tmp)
	if err != nil {
		os.RemoveAll(tmp)
		return nil, err
	}
	err = func() error {
		if err := os.Chmod(tmp, 0o755); err != nil {
			return &WriteError{Path: out, Err: cause(err)}
		}
		if err := copyRuns(ctx, tmp, read, res); err != nil {
			return err
		}
		// The shards' expected counts add up to the whole run's when
		// every shard is there.
		first.ExpectedRuns, first.ExpectedRunsUnknown = expected, unknown
		if err := WriteManifest(tmp, *first); err != nil {
			return err
		}
		if o.Finish != nil {
			if err := o.Finish(tmp, res); err != nil {
				return err
			}
		}
		if err := syncDir(tmp); err != nil {
			return &WriteError{Path: out, Err: cause(err)}
		}
		crashPoint("merge: whole, before the rename")
		// An empty out is replaced (rename(2): os.Rename refuses any
		// directory there); one that is no longer empty (another merge
		// finished first) makes the rename fail.
		if err := syscall.Rename(tmp, out); err != nil {
			return &WriteError{Path: out, Err: cause(err)}
		}
		return syncDir(parent)
	}()
	lock.Unlock()
	if err != nil {
		os.RemoveAll(tmp) // gone already when the rename was done
		return nil, err
	}
	return res, nil
}

// mergeSuffix marks the temporary directory of a merge: ".NAME.merge-…"
// beside the merged directory NAME.
const mergeSuffix = ".merge-"

// checkMergeTarget refuses an out that holds runs (CodeHoldsRuns), that
// is not a directory or that holds other files (CodeNotRunDir).
func checkMergeTarget(out string) error {
	if _, err := os.Lstat(filepath.Join(out, RunsFile)); err == nil {
		return errorf(CodeHoldsRuns, "%s already holds runs; merge into a new directory", out)
	}
	fi, err := os.Stat(out)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return errorf(CodeNotRunDir, "%s is not a directory; merge into a new directory", out)
	}
	entries, err := os.ReadDir(out)
	if err != nil {
		return err
	}
	if len(entries) > 0 {
		return errorf(CodeNotRunDir, "%s is not empty (it holds %s); merge into a new or empty directory", out, entries[0].Name())
	}
	return nil
}

// removeStaleMerges removes the temporary directories that killed merges
// into out left beside it: those whose lock no process holds.
func removeStaleMerges(out string) {
	clean := filepath.Clean(out)
	matches, _ := filepath.Glob(filepath.Join(filepath.Dir(clean), "."+filepath.Base(clean)+mergeSuffix+"*"))
	for _, m := range matches {
		if fi, err := os.Lstat(m); err != nil || !fi.IsDir() {
			continue
		}
		lock, err := lockDir(m)
		if err != nil {
			continue // another merge writes it
		}
		os.RemoveAll(m)
		lock.Unlock()
	}
}

// shardOf is a directory given to Merge and the shard its manifest
// records ("" for an unsharded run).
type shardOf struct{ dir, shard string }

// checkSeries refuses shards that are not of one series: an unsharded
// directory with shards, or shards i/n of different n, which would count
// runs twice and add up expected runs that no directory holds. The error
// names the odd one out, the directories of the series with fewest
// shards given: "s2-0: shard 0/2 is of a series of 2; the others of 3".
func checkSeries(given []shardOf) error {
	var whole []string
	var shards []shardOf
	for _, g := range given {
		if g.shard == "" {
			whole = append(whole, g.dir)
		} else {
			shards = append(shards, g)
		}
	}
	if len(whole) > 0 && len(shards) > 0 {
		var names []string
		for _, g := range shards {
			names = append(names, g.shard)
		}
		return errorf(CodeSettingsDiffer, "%s is not a shard (run without --shard), the others are shards %s: only the shards of one series merge", whole[0], strings.Join(names, ", "))
	}
	return checkSizes(shards)
}

// checkSizes refuses shards (every one of them sharded) of series of
// different sizes, with the error checkSeries describes; shards of one
// size, or none, pass.
func checkSizes(shards []shardOf) error {
	count := map[int][]shardOf{}
	var sizes []int
	for _, g := range shards {
		n := seriesSize(g.shard)
		if count[n] == nil {
			sizes = append(sizes, n)
		}
		count[n] = append(count[n], g)
	}
	if len(sizes) < 2 {
		return nil
	}
	// Name the odd one out: the series with fewest shards given (the
	// later one of two as many).
	odd := sizes[0]
	for _, n := range sizes {
		if len(count[n]) <= len(count[odd]) {
			odd = n
		}
	}
	var others, dirs, names []string
	for _, n := range sizes {
		if n != odd {
			others = append(others, strconv.Itoa(n))
		}
	}
	for _, g := range count[odd] {
		dirs, names = append(dirs, g.dir), append(names, g.shard)
	}
	what := "shard %s is"
	if len(names) > 1 {
		what = "shards %s are"
	}
	return errorf(CodeSettingsDiffer, "%s: "+what+" of a series of %d; the others of %s: only the shards of one series (run --shard i/n with one n) go together",
		strings.Join(dirs, ", "), strings.Join(names, ", "), odd, strings.Join(others, " and "))
}

// seriesSize is n of a shard "i/n" (0 when it is not one).
func seriesSize(shard string) int {
	_, of, _ := strings.Cut(shard, "/")
	n, _ := strconv.Atoi(of)
	return n
}

// givenShards lists the shards given, in order.
func givenShards(given []shardOf) []string {
	var out []string
	for _, g := range given {
		out = append(out, g.shard)
	}
	return out
}

// copyRuns writes the last record of each run of the directories to
// out's runs.jsonl, each run once (the first directory's), counting them,
// and syncs it to disk; it stops with ctx's error when ctx ends.
func copyRuns(ctx context.Context, out string, dirs []*Dir, res *Merged) error {
	path := filepath.Join(out, RunsFile)
	f, err := regularfile.OpenAppend(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(f, 1<<20)
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
			b, err := r.line()
			if err != nil {
				return err
			}
			w.Write(b)
			if err := w.WriteByte('\n'); err != nil {
				return &WriteError{Path: path, RunID: r.RunID, Err: cause(err)}
			}
			crashPoint("merge: a record written")
			return nil
		})
		if err != nil {
			f.Close()
			return err
		}
	}
	err = w.Flush()
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return &WriteError{Path: path, Err: cause(err)}
	}
	return nil
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
