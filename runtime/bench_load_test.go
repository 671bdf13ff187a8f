package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"reflect"
	"sync"
	"testing"

	"github.com/patchbench/patchbench/internal/benchload"
)

// The load benchmarks (docs/development.md), at the states of 0.6, 6 and
// 60 MB of JSON (benchload.Sizes): what loading a state costs (ParseDocument,
// beside encoding/json decoding the same text into any), the first step on a
// freshly parsed state, and a chain step, so that cost can be read against
// size. scripts/bench-peers.sh runs the same inputs through the stacks a
// user would otherwise assemble, and measures peak RSS per size.

// loadStates keeps the states of the load benchmarks, built when a
// benchmark that runs first needs them (the 60 MB one takes seconds).
var loadStates sync.Map

func loadState(size int) []byte {
	if b, ok := loadStates.Load(size); ok {
		return b.([]byte)
	}
	b := benchState(size)
	loadStates.Store(size, b)
	return b
}

// cpuClock reports, at Stop, the process's CPU time per operation
// ("cpu-ns/op", every thread, the collector's included): on a shared
// machine it moves less than the wall clock does.
type cpuClock struct{ start int64 }

func startCPU() cpuClock {
	t, _ := processCPU()
	return cpuClock{t}
}

func (c cpuClock) stop(b *testing.B) {
	if t, ok := processCPU(); ok && b.N > 0 {
		b.ReportMetric(float64(t-c.start)/float64(b.N), "cpu-ns/op")
	}
}

// TestBenchloadInputs: the inputs scripts/bench-peers.sh gives every stack
// are the ones the runtime's benchmarks use.
func TestBenchloadInputs(t *testing.T) {
	if got, want := mustJSON(t, benchload.Schema), benchSpec.Schema; !reflect.DeepEqual(got, want) {
		t.Errorf("benchload.Schema = %v, benchSpec.Schema = %v", got, want)
	}
	if got, want := mustJSON(t, benchload.OutputSchema), benchSpec.OutputSchema[benchload.OutputPath]; !reflect.DeepEqual(got, want) {
		t.Errorf("benchload.OutputSchema = %v, benchSpec's = %v", got, want)
	}
	if len(benchload.Invariants) != len(benchSpec.Invariants) {
		t.Fatalf("%d invariants, benchSpec has %d", len(benchload.Invariants), len(benchSpec.Invariants))
	}
	for i, inv := range benchSpec.Invariants {
		if benchload.Invariants[i] != [2]string{inv.Name, inv.Rule} {
			t.Errorf("invariant %d: %q, benchSpec has %q", i, benchload.Invariants[i], inv)
		}
	}
	regions := [][2][]string{
		{benchload.ViewInclude, benchSpec.View.Include}, {benchload.ViewExclude, benchSpec.View.Exclude},
		{benchload.Write, benchSpec.Write}, {benchload.Source, benchSpec.Source},
	}
	for _, r := range regions {
		if !reflect.DeepEqual(r[0], r[1]) {
			t.Errorf("benchload region %q, benchSpec's %q", r[0], r[1])
		}
	}
	if benchload.ChainPatch != chainPatch || benchload.Phase != benchSpec.Phases[0] {
		t.Error("benchload.ChainPatch or Phase differ from the runtime benchmarks'")
	}
}

// BenchmarkLoadParse: ParseDocument of each state, and encoding/json
// decoding the same text into any (numbers as json.Number), in the same
// run. text-B is the text's size, to read B/op against.
func BenchmarkLoadParse(b *testing.B) {
	for _, s := range benchload.Sizes {
		b.Run("runtime/"+s.Name, func(b *testing.B) {
			raw := loadState(s.Size)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				if _, err := ParseDocument(raw); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(raw)), "text-B")
		})
		b.Run("runtime-value/"+s.Name, func(b *testing.B) {
			raw := loadState(s.Size)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				d, err := ParseDocument(raw)
				if err != nil {
					b.Fatal(err)
				}
				_ = d.Value()
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(raw)), "text-B")
		})
		b.Run("encoding-json/"+s.Name, func(b *testing.B) {
			raw := loadState(s.Size)
			b.ReportAllocs()
			cpu := startCPU()
			for b.Loop() {
				d := json.NewDecoder(bytes.NewReader(raw))
				d.UseNumber()
				var v any
				if err := d.Decode(&v); err != nil {
					b.Fatal(err)
				}
			}
			cpu.stop(b)
			b.ReportMetric(float64(len(raw)), "text-B")
		})
	}
}

// BenchmarkLoadFirst: the first step (benchPatch, all four gates, it
// commits) on a freshly parsed state; the parse is not timed.
func BenchmarkLoadFirst(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: benchload.Phase}
	for _, s := range benchload.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			raw := loadState(s.Size)
			b.ReportAllocs()
			var cpu int64
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				doc, err := ParseDocument(raw)
				if err != nil {
					b.Fatal(err)
				}
				t0, _ := processCPU()
				b.StartTimer()
				d, err := c.Verify(context.Background(), doc, []byte(benchPatch), opts)
				b.StopTimer()
				t1, _ := processCPU()
				cpu += t1 - t0
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N), "cpu-ns/op")
		})
	}
}

// BenchmarkLoadChain: steps that each verify the state the last one
// committed (chainPatch), after a first step; every tenth state's text is
// built, as BenchmarkRuntimeChain does.
func BenchmarkLoadChain(b *testing.B) {
	c := MustCompile(benchSpec)
	opts := VerifyOptions{Gates: DefaultGates, Phase: benchload.Phase}
	for _, s := range benchload.Sizes {
		b.Run(s.Name, func(b *testing.B) {
			doc, err := ParseDocument(loadState(s.Size))
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			first, err := c.Verify(context.Background(), doc, []byte(chainPatch), opts)
			if err != nil || !first.Committed {
				b.Fatalf("%v %+v", err, first.Rejection())
			}
			state := first.State
			n := 0
			cpu := startCPU()
			for b.Loop() {
				d, err := c.Verify(context.Background(), state, []byte(chainPatch), opts)
				if err != nil || !d.Committed {
					b.Fatalf("%v %+v", err, d.Rejection())
				}
				state = d.State
				if n++; n%10 == 0 {
					_ = state.Bytes()
				}
			}
			cpu.stop(b)
		})
	}
}
