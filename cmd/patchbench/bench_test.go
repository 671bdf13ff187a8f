package main

import (
	"context"
	"io"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkDefaultRun is the default `patchbench run` (the embedded suite,
// every configuration, the three no-model actors, one round) into a new
// directory each time: the runs, their records and the summary.
func BenchmarkDefaultRun(b *testing.B) {
	dir := b.TempDir()
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		i++
		out := filepath.Join(dir, strconv.Itoa(i))
		if code := run(context.Background(), []string{"run", "--out", out, "--progress", "0"}, io.Discard, io.Discard); code != 0 {
			b.Fatalf("exit %d", code)
		}
	}
}
