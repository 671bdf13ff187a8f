package runner

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

// A session records its runs, marks the manifest interrupted until End,
// resumes (skipping what is recorded) and refuses other settings.
func TestDirSession(t *testing.T) {
	cases, cfgs := loadSuite(t)
	o := Options{Cases: cases[:2], Configs: cfgs[:1], Actors: []actors.Actor{actors.Reference{}}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 1}
	m := rundir.Manifest{Module: "m", Cases: 2, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Actors: []string{"reference"}, Configs: []string{cfgs[0].Name}, ExpectedRuns: len(o.Jobs())}
	for _, c := range o.Cases {
		m.CaseIDs = append(m.CaseIDs, c.ID)
	}
	dir := filepath.Join(t.TempDir(), "run")
	d, err := OpenDir(dir, m, o.Configs, false)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := rundir.ReadManifest(dir); err != nil || !got.Interrupted {
		t.Fatalf("during the session: %+v %v", got, err)
	}
	end, err := d.End(Run(context.Background(), o, d.Skip, d))
	if err != nil || end.Interrupted() || end.Down != nil || end.TokenBudgetSpent {
		t.Fatalf("end %+v, %v", end, err)
	}
	sum, tot, err := d.Summary()
	if err != nil || tot.Runs != 2 || tot.Outcomes != 2 || !sum.Complete || sum.RunsExpected != 2 {
		t.Fatalf("summary complete %v of %d, totals %+v, %v", sum.Complete, sum.RunsExpected, tot, err)
	}
	if _, err := os.Stat(filepath.Join(dir, rundir.SummaryFile)); err != nil {
		t.Fatal(err)
	}
	again, err := OpenDir(dir, m, o.Configs, false)
	if err != nil || len(again.Skip) != 2 {
		t.Fatalf("resume: %v, skip %v", err, again.Skip)
	}
	end, err = again.End(context.Canceled)
	if err != nil || !end.Interrupted() || !errors.Is(end.Err, context.Canceled) {
		t.Fatalf("a cancelled session: %+v %v", end, err)
	}
	if got, _ := rundir.ReadManifest(dir); !got.Interrupted {
		t.Error("a cancelled session is not marked interrupted")
	}
	other := m
	other.Rounds = 3
	if _, err := OpenDir(dir, other, o.Configs, false); err == nil {
		t.Error("a directory of other settings was opened")
	}
}
