package rundir

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the directory src (files and directories only) to dst,
// as a kill at that instant would leave it on disk.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// crashImages runs op with crashHook set, and copies the directory root
// at every crash point op passes: what a process killed there leaves.
// It returns the copies, named by their point.
func crashImages(t *testing.T, root string, op func()) (images, points []string) {
	t.Helper()
	crashHook = func(point string) {
		img := filepath.Join(t.TempDir(), "image")
		copyTree(t, root, img)
		images, points = append(images, img), append(points, fmt.Sprintf("%d: %s", len(points), point))
	}
	defer func() { crashHook = nil }()
	op()
	if len(images) == 0 {
		t.Fatal("op passes no crash point")
	}
	return images, points
}

// TestMergeKilledLeavesNothingOrAll: a merge killed at any record, or once
// everything is written, leaves the target as it was (no directory) or
// whole, never a part of the runs without a manifest (which repair then
// made into a directory of some of the runs and expected_runs 0); the
// same merge then runs, and removes the temporary directory left.
func TestMergeKilledLeavesNothingOrAll(t *testing.T) {
	tmp := t.TempDir()
	s0, s1 := filepath.Join(tmp, "s0"), filepath.Join(tmp, "s1")
	writeRecords(t, s0, rec("a", "x", 1, StatusPassed), rec("a", "x", 2, StatusPassed))
	WriteJSON(s0, ManifestFile, manifest("0/2", 2))
	writeRecords(t, s1, rec("a", "y", 1, StatusFailed), rec("a", "y", 2, StatusFailed))
	WriteJSON(s1, ManifestFile, manifest("1/2", 2))
	root := filepath.Join(tmp, "results")
	os.MkdirAll(root, 0o755)
	images, points := crashImages(t, root, func() {
		if _, err := MergeWith(context.Background(), filepath.Join(root, "all"), []string{s0, s1}, MergeOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	if len(images) < 5 {
		t.Errorf("crash points %q: want one after each of the 4 records, and before the rename", points)
	}
	for i, img := range images {
		out := filepath.Join(img, "all")
		if _, err := os.Stat(out); err == nil {
			t.Errorf("killed at %s: %s exists: %v", points[i], out, names(out))
			continue
		}
		m, err := MergeWith(context.Background(), out, []string{s0, s1}, MergeOptions{})
		if err != nil || m.Runs != 4 {
			t.Fatalf("killed at %s: merged again: %+v %v", points[i], m, err)
		}
		if d, err := Read(out); err != nil || d.Runs() != 4 || d.Manifest.ExpectedRuns != 4 {
			t.Errorf("killed at %s: the merge run again reads %v", points[i], err)
		}
		if left := names(img); strings.Join(left, ",") != "all" {
			t.Errorf("killed at %s, merged again: beside it %q", points[i], left)
		}
	}
	if d, err := Read(filepath.Join(root, "all")); err != nil || d.Runs() != 4 {
		t.Errorf("the uninterrupted merge: %v", err)
	}
}

// names lists the names in dir.
func names(dir string) []string {
	entries, _ := os.ReadDir(dir)
	var out []string
	for _, e := range entries {
		out = append(out, e.Name())
	}
	return out
}

// TestMergeRefusesMixedSeries: shards of series of different sizes (0/2,
// 1/2 with 0/3) share runs and add up expected runs no directory holds;
// an unsharded directory with shards the same. Both are refused, naming
// the odd shard, and nothing is written; so are a shard given twice and,
// unless allowed, a missing one (which the merge's manifest then names).
func TestMergeRefusesMixedSeries(t *testing.T) {
	tmp := t.TempDir()
	dir := func(name, shard string, recs ...*Record) string {
		d := filepath.Join(tmp, name)
		writeRecords(t, d, recs...)
		WriteJSON(d, ManifestFile, manifest(shard, 2))
		return d
	}
	a0 := dir("a0", "0/2", rec("a", "x", 1, StatusPassed))
	a1 := dir("a1", "1/2", rec("a", "y", 1, StatusPassed))
	b0 := dir("b0", "0/3", rec("a", "x", 1, StatusPassed))
	whole := dir("whole", "", rec("a", "x", 1, StatusPassed))
	for _, c := range []struct {
		dirs []string
		want string
	}{
		{[]string{a0, a1, b0}, b0 + ": shard 0/3 is of a series of 3; the others of 2"},
		{[]string{b0, a0, a1}, b0 + ": shard 0/3 is of a series of 3; the others of 2"},
		{[]string{a0, whole}, whole + " is not a shard (run without --shard), the others are shards 0/2"},
	} {
		out := filepath.Join(t.TempDir(), "out")
		_, err := MergeWith(context.Background(), out, c.dirs, MergeOptions{})
		if err == nil || !strings.Contains(err.Error(), c.want) || codeOf(err) != CodeSettingsDiffer {
			t.Errorf("%v: %v, want %q", c.dirs, err, c.want)
		}
		if _, serr := os.Stat(out); serr == nil {
			t.Errorf("%v: %s was made", c.dirs, out)
		}
	}
	if _, err := MergeWith(context.Background(), filepath.Join(tmp, "out"), []string{a0, a0}, MergeOptions{}); codeOf(err) != CodeGivenTwice {
		t.Errorf("a shard twice: %v", err)
	}
	// Shards of another run: the settings that differ are named.
	m3 := manifest("1/2", 2)
	m3.Rounds, m3.Actors = 3, []string{"reference", "follower"}
	other := filepath.Join(tmp, "other")
	writeRecords(t, other, rec("a", "y", 1, StatusPassed))
	WriteJSON(other, ManifestFile, m3)
	_, err := MergeWith(context.Background(), filepath.Join(tmp, "out"), []string{a0, other}, MergeOptions{})
	if want := other + " holds a run with other settings than " + a0 + " (actors, rounds differ)"; err == nil || !strings.Contains(err.Error(), want) || codeOf(err) != CodeSettingsDiffer {
		t.Errorf("shards of two runs: %v, want %q", err, want)
	}
	half := filepath.Join(tmp, "new", "half")
	_, err = MergeWith(context.Background(), half, []string{a1}, MergeOptions{})
	if want := "shards 0/2 of the series are missing (1/2 given)"; err == nil || !strings.Contains(err.Error(), want) || codeOf(err) != CodeMissingShards {
		t.Errorf("a missing shard: %v, want %q", err, want)
	}
	m, err := MergeWith(context.Background(), half, []string{a1}, MergeOptions{AllowMissing: true})
	if err != nil || m.Missing != "0/2" {
		t.Fatalf("a missing shard allowed: %+v %v", m, err)
	}
	if d, err := Read(half); err != nil || d.Manifest.MissingShards != "0/2" {
		t.Errorf("the merge without 0/2 reads %v", err)
	}
}

// TestRepairKilledAndRunAgain: a repair killed at any point and run again
// leaves runs.jsonl and runs.jsonl.dropped as one uninterrupted repair
// does: each damaged line set aside once, after the lines an earlier
// repair set aside.
func TestRepairKilledAndRunAgain(t *testing.T) {
	src := t.TempDir()
	WriteManifest(src, manifest("", 4))
	os.WriteFile(filepath.Join(src, DroppedFile), []byte("{\"an earlier repair's line\"\n"), 0o644)
	writeRecords(t, src, rec("a", "x", 1, StatusPassed))
	appendRaw(t, src, "{\"junk\": 1}\n")
	writeRecords(t, src, rec("a", "y", 1, StatusPassed))
	appendRaw(t, src, "{\"junk\": 2}\n")
	writeRecords(t, src, rec("a", "x", 2, StatusPassed))
	appendRaw(t, src, "{\"cut short")

	dir := filepath.Join(t.TempDir(), "run")
	copyTree(t, src, dir)
	images, points := crashImages(t, dir, func() {
		if _, err := Repair(context.Background(), dir); err != nil {
			t.Fatal(err)
		}
	})
	want := map[string]string{}
	for _, name := range []string{RunsFile, DroppedFile} {
		b, _ := os.ReadFile(filepath.Join(dir, name))
		want[name] = string(b)
	}
	if strings.Count(want[DroppedFile], "\n") != 4 || strings.Count(want[RunsFile], "\n") != 3 {
		t.Fatalf("the uninterrupted repair: %q", want)
	}
	for i, img := range images {
		res, err := Repair(context.Background(), img)
		if err != nil {
			t.Fatalf("killed at %s, run again: %v", points[i], err)
		}
		for _, name := range []string{RunsFile, DroppedFile} {
			if b, _ := os.ReadFile(filepath.Join(img, name)); string(b) != want[name] {
				t.Errorf("killed at %s, run again (%+v): %s is\n%q, want\n%q", points[i], res, name, b, want[name])
			}
		}
		if d, err := Read(img); err != nil || d.Runs() != 3 {
			t.Errorf("killed at %s, run again: %v", points[i], err)
		}
		for _, n := range names(img) {
			if strings.HasPrefix(n, "."+RunsFile) || n == repairJournal {
				t.Errorf("killed at %s, run again: %s left", points[i], n)
			}
		}
	}
	// Run again once more, it changes nothing.
	if res, err := Repair(context.Background(), dir); err != nil || res.Changed() {
		t.Errorf("a repaired directory repaired again: %+v %v", res, err)
	}
}
