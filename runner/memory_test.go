package runner

import (
	"context"
	"runtime"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
)

// heapProbe answers every attempt with a new copy of raw and notes the
// live heap (after a collection) when each attempt is asked for.
type heapProbe struct {
	raw  string
	heap []uint64
}

func (*heapProbe) Name() string { return "heap-probe" }
func (a *heapProbe) Propose(context.Context, actors.Request) (actors.Response, error) {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	a.heap = append(a.heap, m.HeapAlloc)
	return actors.Response{Raw: strings.Clone(a.raw)}, nil // new each time, as a program's answer is
}

// TestRetriesDoNotHoldEarlierAnswers answers a step 14 times with 3 MB of
// text and no proposal (with the answer limit raised, a 15
// MB answer rejected 30 times peaked at 2.4 GB): the run held every
// answer twice, as an output its leaks were looked for in at the end and
// as an earlier attempt the record would cut only when written. Leaks are
// now looked for as answers come, and once the run's texts pass what a
// record may hold the earlier attempts are cut as they come: the live
// heap does not grow with the attempts, and the record is what it was.
func TestRetriesDoNotHoldEarlierAnswers(t *testing.T) {
	if testing.Short() {
		t.Skip("fourteen attempts of 3 MiB answers, with the live heap measured after each")
	}
	c, cfgs := loadExample(t)
	tc, err := newCounter("")
	if err != nil {
		t.Fatal(err)
	}
	const attempts = 14
	probe := &heapProbe{raw: strings.Repeat("y", 3<<20)}
	o := Options{Spec: runspec.Spec{MaxAttempts: attempts, MaxAnswerBytes: 4 << 20, PassThreshold: 0.8}}
	rec, err := runOne(context.Background(), o, tc, Job{Case: c, Config: configNamed(t, cfgs, "unconstrained"), Actor: probe, Round: 1})
	if err != nil {
		t.Fatal(err)
	}
	if len(probe.heap) < attempts {
		t.Fatalf("%d attempts asked for, want at least %d", len(probe.heap), attempts)
	}
	growth := int64(probe.heap[attempts-1]) - int64(probe.heap[1])
	t.Logf("live heap at attempt 2: %d MB; at attempt %d: %d MB", probe.heap[1]>>20, attempts, probe.heap[attempts-1]>>20)
	if growth > 20<<20 {
		t.Errorf("the live heap grew by %d MB from attempt 2 to attempt %d, want it not to grow with the attempts", growth>>20, attempts)
	}
	s := rec.Steps[0]
	if s.Attempts != attempts || len(s.Earlier) != attempts-1 {
		t.Fatalf("%d attempts, %d earlier", s.Attempts, len(s.Earlier))
	}
	// As Record.shrink cuts a record whose line is too long to write: the
	// last attempt too.
	if len(s.RawResponse) != rundir.KeptBytes || len(s.Truncated) != 1 {
		t.Errorf("the last attempt: %d bytes kept, truncated %+v", len(s.RawResponse), s.Truncated)
	}
	for k, a := range s.Earlier {
		if len(a.RawResponse) != rundir.KeptBytes || len(a.Truncated) != 1 || a.Truncated[0].Length != 3<<20 {
			t.Fatalf("earlier attempt %d: %d bytes kept, truncated %+v", k+1, len(a.RawResponse), a.Truncated)
		}
	}
}
