// Command loadbench is the runtime's side of scripts/bench-peers.sh (issue
// 25): it writes the load benchmarks' inputs (internal/benchload) as
// files, runs the runtime on one state as the other stacks run (parse,
// first step, chain steps, each step on the state the previous one
// committed), and compares final states.
//
//	loadbench write DIR
//	    writes DIR/state-0.6MB.json, state-6MB.json, state-60MB.json,
//	    DIR/chain.json (the patch of every step) and DIR/contract.json
//	    (schema, output schema, CEL invariants, phase) for the peers
//	loadbench run -dir DIR -size 6MB -steps 20 -out FINAL.json [-stack NAME]
//	    prints one JSON line of figures (nanoseconds; peak RSS in KiB) and
//	    writes the last committed state's text to FINAL.json
//	loadbench equal A.json B.json
//	    exit 0 when the two texts are equal JSON values (numbers by value,
//	    RFC 6902 §4.6), 1 when not, 2 on bad input
//	loadbench table FIGURES.jsonl
//	    the table per size from the figures lines of every round:
//	    medians over the rounds, each stack against the runtime, and the
//	    issue's targets
//
// Every stack reads its state from the file before its clock starts.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	goruntime "runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"github.com/patchbench/patchbench/internal/benchload"
	pbruntime "github.com/patchbench/patchbench/runtime"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "usage: loadbench write DIR | run -dir DIR -size NAME -steps N -out FILE | equal A B")
		return 2
	}
	var err error
	switch args[0] {
	case "write":
		if len(args) != 2 {
			err = errors.New("usage: loadbench write DIR")
		} else {
			err = write(args[1])
		}
	case "run":
		err = runStack(args[1:], stdout)
	case "table":
		if len(args) != 2 {
			err = errors.New("usage: loadbench table FIGURES.jsonl")
		} else {
			err = table(args[1], stdout)
		}
	case "equal":
		if len(args) != 3 {
			err = errors.New("usage: loadbench equal A B")
			break
		}
		var same bool
		if same, err = equal(args[1], args[2]); err == nil && !same {
			fmt.Fprintf(stderr, "loadbench: %s and %s differ\n", args[1], args[2])
			return 1
		}
	default:
		err = fmt.Errorf("unknown command %q", args[0])
	}
	if err != nil {
		fmt.Fprintln(stderr, "loadbench:", err)
		return 2
	}
	return 0
}

// contractFile is DIR/contract.json.
type contractFile struct {
	Schema       json.RawMessage `json:"schema"`
	OutputPath   string          `json:"output_path"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Invariants   []invariant     `json:"invariants"`
	Phase        string          `json:"phase"`
}

type invariant struct {
	Name string `json:"name"`
	Rule string `json:"rule"`
}

func write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, s := range benchload.Sizes {
		if err := os.WriteFile(filepath.Join(dir, "state-"+s.Name+".json"), benchload.State(s.Size), 0o644); err != nil {
			return err
		}
	}
	return writeContract(dir)
}

// writeContract writes DIR/contract.json and DIR/chain.json.
func writeContract(dir string) error {
	cf := contractFile{Schema: json.RawMessage(benchload.Schema), OutputPath: benchload.OutputPath,
		OutputSchema: json.RawMessage(benchload.OutputSchema), Phase: benchload.Phase}
	for _, inv := range benchload.Invariants {
		cf.Invariants = append(cf.Invariants, invariant{inv[0], inv[1]})
	}
	b, err := json.MarshalIndent(cf, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(dir, "contract.json"), b, 0o644); err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(dir, "chain.json"), []byte(benchload.ChainPatch), 0o644)
}

// figures is the line every stack prints: times in nanoseconds, the
// median of the steps after the first, peak RSS in KiB.
type figures struct {
	Stack      string `json:"stack"`
	Size       string `json:"size"`
	TextBytes  int    `json:"text_bytes"`
	ParseNS    int64  `json:"parse_ns"`
	FirstNS    int64  `json:"first_ns"`
	StepNS     int64  `json:"step_ns"`
	Steps      int    `json:"steps"`
	MaxRSSKiB  int64  `json:"max_rss_kib"`
	FinalBytes int    `json:"final_bytes"`
	// CPU time of the process (all threads: the collector's and any
	// parallel work included), for the parse, the first step, and per
	// step after it (their mean).
	ParseCPUNS int64 `json:"parse_cpu_ns"`
	FirstCPUNS int64 `json:"first_cpu_ns"`
	StepCPUNS  int64 `json:"step_cpu_ns"`
}

func runStack(args []string, stdout io.Writer) error {
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	dir := fs.String("dir", "", "the inputs `DIR` (loadbench write)")
	size := fs.String("size", "6MB", "the state: 0.6MB, 6MB or 60MB")
	steps := fs.Int("steps", 20, "steps in all, the first included")
	out := fs.String("out", "", "where to write the last committed state's text")
	stack := fs.String("stack", "runtime", "the stack's name in the figures (runtime-base for a build of an earlier revision)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dir == "" || *out == "" || *steps < 2 {
		return errors.New("run needs -dir, -out and -steps of 2 or more")
	}
	text, err := os.ReadFile(filepath.Join(*dir, "state-"+*size+".json"))
	if err != nil {
		return err
	}
	patch, err := os.ReadFile(filepath.Join(*dir, "chain.json"))
	if err != nil {
		return err
	}
	spec := pbruntime.ContractSpec{
		View:   pbruntime.ViewSpec{Include: benchload.ViewInclude, Exclude: benchload.ViewExclude},
		Write:  benchload.Write,
		Source: benchload.Source,
		Phases: []string{benchload.Phase},
	}
	if spec.Schema, err = decodeNumbers(benchload.Schema); err != nil {
		return err
	}
	out1, err := decodeNumbers(benchload.OutputSchema)
	if err != nil {
		return err
	}
	spec.OutputSchema = map[string]any{benchload.OutputPath: out1}
	for _, inv := range benchload.Invariants {
		spec.Invariants = append(spec.Invariants, pbruntime.InvariantSpec{Name: inv[0], Rule: inv[1]})
	}
	c, err := pbruntime.Compile(spec)
	if err != nil {
		return err
	}
	opts := pbruntime.VerifyOptions{Gates: pbruntime.DefaultGates, Phase: benchload.Phase}
	f := figures{Stack: *stack, Size: *size, TextBytes: len(text), Steps: *steps}

	t0, c0 := time.Now(), cpuNow()
	state, err := pbruntime.ParseDocument(text)
	f.ParseNS, f.ParseCPUNS = time.Since(t0).Nanoseconds(), cpuNow()-c0
	if err != nil {
		return err
	}
	var times []int64
	for i := range *steps {
		t, ct := time.Now(), cpuNow()
		if i == 1 {
			c0 = ct
		}
		d, err := c.Verify(context.Background(), state, patch, opts)
		if err != nil {
			return err
		}
		if !d.Committed {
			return fmt.Errorf("step %d rejected: %+v", i, d.Rejection())
		}
		state = d.State
		if (i+1)%10 == 0 {
			_ = state.Bytes() // as BenchmarkRuntimeChain: a text every tenth state
		}
		ns := time.Since(t).Nanoseconds()
		if i == 0 {
			f.FirstNS, f.FirstCPUNS = ns, cpuNow()-ct
			goruntime.GC() // the steps after start clean (every stack does this)
		} else {
			times = append(times, ns)
		}
	}
	f.StepNS, f.StepCPUNS = median(times), (cpuNow()-c0)/int64(*steps-1)
	final := state.Bytes()
	f.FinalBytes = len(final)
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err == nil {
		f.MaxRSSKiB = ru.Maxrss
	}
	if err := os.WriteFile(*out, final, 0o644); err != nil {
		return err
	}
	return json.NewEncoder(stdout).Encode(f)
}

// decodeNumbers decodes JSON text with numbers as json.Number, as the
// runtime's contracts take schemas.
func decodeNumbers(s string) (any, error) {
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var v any
	err := d.Decode(&v)
	return v, err
}

// cpuNow is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, Linux).
func cpuNow() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 2, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func median(v []int64) int64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func equal(a, b string) (bool, error) {
	var docs [2]*pbruntime.Document
	for i, name := range []string{a, b} {
		text, err := os.ReadFile(name)
		if err != nil {
			return false, err
		}
		if docs[i], err = pbruntime.ParseDocument(text); err != nil {
			return false, fmt.Errorf("%s: %w", name, err)
		}
	}
	return pbruntime.EqualJSON(docs[0].Value(), docs[1].Value()), nil
}
