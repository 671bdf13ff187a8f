package runner

import (
	"context"
	"errors"
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
	d, err := OpenDir(dir, m, false)
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
	if tot := d.Totals(); !d.Fresh() || tot.Runs != 2 || tot.Outcomes != 2 || tot.Settled != 2 || tot.Errors != 0 || len(tot.Pending) != 0 {
		t.Fatalf("fresh %v, totals %+v", d.Fresh(), tot)
	}
	again, err := OpenDir(dir, m, false)
	if err != nil || len(again.Skip) != 2 || again.Fresh() || again.Totals().Runs != 0 {
		t.Fatalf("resume: %v, skip %v, fresh %v, totals %+v", err, again.Skip, again.Fresh(), again.Totals())
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
	if _, err := OpenDir(dir, other, false); err == nil {
		t.Error("a directory of other settings was opened")
	}
}
