// Command gonaive is the Go stack a user would assemble instead of the
// PatchBench runtime, run by scripts/bench-peers.sh on the
// runtime's own inputs (scripts/loadbench write): every step applies the
// patch with evanphx/json-patch/v5 to the whole text, decodes the whole
// result, validates it whole with santhosh-tekuri/jsonschema/v6 (and the
// output schema at its path), and evaluates the same CEL invariants with
// cel-go over pre and post; the step commits when all pass. It is its own
// module, so that nothing of the runtime is in it.
//
//	gonaive -dir DIR -size 6MB -steps 20 -out FINAL.json
//
// prints one JSON line with the figures loadbench prints (nanoseconds,
// peak RSS in KiB) and writes the last committed text to FINAL.json.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
	"unsafe"

	"cel.dev/cel-go/cel"
	jsonpatch "github.com/evanphx/json-patch/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
)

type contractFile struct {
	Schema       json.RawMessage `json:"schema"`
	OutputPath   string          `json:"output_path"`
	OutputSchema json.RawMessage `json:"output_schema"`
	Invariants   []struct {
		Name string `json:"name"`
		Rule string `json:"rule"`
	} `json:"invariants"`
}

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
	ParseCPUNS int64  `json:"parse_cpu_ns"`
	FirstCPUNS int64  `json:"first_cpu_ns"`
	StepCPUNS  int64  `json:"step_cpu_ns"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "gonaive:", err)
		os.Exit(2)
	}
}

func run() error {
	dir := flag.String("dir", "", "the inputs `DIR` (loadbench write)")
	size := flag.String("size", "6MB", "the state: 0.6MB, 6MB or 60MB")
	steps := flag.Int("steps", 20, "steps in all, the first included")
	out := flag.String("out", "", "where to write the last committed state's text")
	flag.Parse()
	if *dir == "" || *out == "" || *steps < 2 {
		return errors.New("needs -dir, -out and -steps of 2 or more")
	}
	text, err := os.ReadFile(filepath.Join(*dir, "state-"+*size+".json"))
	if err != nil {
		return err
	}
	patchText, err := os.ReadFile(filepath.Join(*dir, "chain.json"))
	if err != nil {
		return err
	}
	cb, err := os.ReadFile(filepath.Join(*dir, "contract.json"))
	if err != nil {
		return err
	}
	var cf contractFile
	if err := json.Unmarshal(cb, &cf); err != nil {
		return err
	}
	schema, err := compile(cf.Schema)
	if err != nil {
		return err
	}
	output, err := compile(cf.OutputSchema)
	if err != nil {
		return err
	}
	env, err := cel.NewEnv(cel.Variable("pre", cel.DynType), cel.Variable("post", cel.DynType))
	if err != nil {
		return err
	}
	var rules []cel.Program
	for _, inv := range cf.Invariants {
		ast, iss := env.Compile(inv.Rule)
		if iss.Err() != nil {
			return iss.Err()
		}
		prg, err := env.Program(ast)
		if err != nil {
			return err
		}
		rules = append(rules, prg)
	}
	opts := jsonpatch.NewApplyOptions()
	opts.SupportNegativeIndices = false
	opts.AccumulatedCopySizeLimit = 1 << 20
	opts.EscapeHTML = false
	outPtr := strings.Split(strings.TrimPrefix(cf.OutputPath, "/"), "/")

	f := figures{Stack: "go-naive", Size: *size, TextBytes: len(text), Steps: *steps}
	t0, c0 := time.Now(), cpuNow()
	value, err := decode(text)
	f.ParseNS, f.ParseCPUNS = time.Since(t0).Nanoseconds(), cpuNow()-c0
	if err != nil {
		return err
	}
	step := func() error {
		p, err := jsonpatch.DecodePatch(patchText)
		if err != nil {
			return err
		}
		next, err := p.ApplyWithOptions(text, opts)
		if err != nil {
			return err
		}
		post, err := decode(next)
		if err != nil {
			return err
		}
		if err := schema.Validate(post); err != nil {
			return err
		}
		if v, ok := lookup(post, outPtr); ok {
			if err := output.Validate(v); err != nil {
				return err
			}
		}
		for i, prg := range rules {
			res, _, err := prg.Eval(map[string]any{"pre": value, "post": post})
			if err != nil {
				return fmt.Errorf("invariant %q: %w", cf.Invariants[i].Name, err)
			}
			if ok, _ := res.Value().(bool); !ok {
				return fmt.Errorf("invariant %q does not hold", cf.Invariants[i].Name)
			}
		}
		text, value = next, post // commit
		return nil
	}
	var times []int64
	for i := range *steps {
		t, c := time.Now(), cpuNow()
		if i == 1 {
			c0 = c
		}
		if err := step(); err != nil {
			return fmt.Errorf("step %d: %w", i, err)
		}
		if ns := time.Since(t).Nanoseconds(); i == 0 {
			f.FirstNS, f.FirstCPUNS = ns, cpuNow()-c
			runtime.GC() // the steps after start clean (every stack does this)
		} else {
			times = append(times, ns)
		}
	}
	f.StepCPUNS = (cpuNow() - c0) / int64(*steps-1)
	slices.Sort(times)
	f.StepNS = times[len(times)/2]
	if len(times)%2 == 0 {
		f.StepNS = (times[len(times)/2-1] + times[len(times)/2]) / 2
	}
	f.FinalBytes = len(text)
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) == nil {
		f.MaxRSSKiB = ru.Maxrss
	}
	if err := os.WriteFile(*out, text, 0o644); err != nil {
		return err
	}
	return json.NewEncoder(os.Stdout).Encode(f)
}

// decode is what the schema library asks for (numbers as json.Number)
// and what CEL reads (numbers as float64): a naive stack decodes once,
// with float64, which both accept.
// cpuNow is the process's CPU time (CLOCK_PROCESS_CPUTIME_ID, Linux).
func cpuNow() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 2, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func decode(b []byte) (any, error) {
	var v any
	err := json.Unmarshal(b, &v)
	return v, err
}

func compile(schema json.RawMessage) (*jsonschema.Schema, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		return nil, err
	}
	return c.Compile("mem:///schema.json")
}

func lookup(v any, toks []string) (any, bool) {
	for _, t := range toks {
		m, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		if v, ok = m[t]; !ok {
			return nil, false
		}
	}
	return v, true
}
