package testenv

import (
	"os"
	"runtime/debug"
	"testing"
)

// GCPercent and MemoryLimit are the collector's settings in a test
// process (TuneGC): a collection when the heap has grown to five times
// what was live after the last one (GOGC=400), and a soft limit of 1 GiB
// on the process's memory, near which the collector works harder again.
const (
	GCPercent   = 400
	MemoryLimit = 1 << 30
)

// TuneGC makes the garbage collector of a test process collect less
// often (GCPercent, under MemoryLimit). The module's tests allocate much
// and keep little (runs of the whole suite, records decoded and dropped):
// at Go's default (GOGC=100) collecting took about a fifth of their CPU
// time, and a test process peaks under 1 GiB at GCPercent. A GOGC or
// GOMEMLIMIT set in the environment is left to rule (both settings, then,
// as the runtime read them). What tests assert is not changed: a test
// that measures the live heap collects first (runtime.GC), and the
// settings change only when collections happen.
func TuneGC() {
	if os.Getenv("GOGC") == "" {
		debug.SetGCPercent(GCPercent)
	}
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
	}
}

// Main is the TestMain of a package that needs no other setup: TuneGC,
// then the tests, exiting with their code.
func Main(m *testing.M) {
	TuneGC()
	os.Exit(m.Run())
}
