package testenv

import (
	"math"
	"runtime/debug"
	"testing"
)

// TestTuneGC: TuneGC sets GCPercent and MemoryLimit where the
// environment sets neither, and leaves each one the environment sets.
func TestTuneGC(t *testing.T) {
	restore := func(percent int, limit int64) {
		debug.SetGCPercent(percent)
		debug.SetMemoryLimit(limit)
	}
	defer restore(debug.SetGCPercent(100), debug.SetMemoryLimit(math.MaxInt64))
	for _, tc := range []struct {
		gogc, gomemlimit string
		percent          int
		limit            int64
	}{
		{"", "", GCPercent, MemoryLimit},
		{"50", "", 100, MemoryLimit},
		{"", "2GiB", GCPercent, math.MaxInt64},
		{"off", "2GiB", 100, math.MaxInt64},
	} {
		t.Setenv("GOGC", tc.gogc)
		t.Setenv("GOMEMLIMIT", tc.gomemlimit)
		restore(100, math.MaxInt64)
		TuneGC()
		if p, l := debug.SetGCPercent(100), debug.SetMemoryLimit(-1); p != tc.percent || l != tc.limit {
			t.Errorf("GOGC=%q GOMEMLIMIT=%q: GC percent %d, memory limit %d; want %d, %d", tc.gogc, tc.gomemlimit, p, l, tc.percent, tc.limit)
		}
	}
}
