package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
)

// stacks are the columns of the table, in order, with their labels; a
// stack without figures is left out.
var stacks = []struct{ id, label string }{
	{"runtime-base", "runtime before"},
	{"runtime", "PatchBench runtime"},
	{"go-naive", "Go naive"},
	{"node", "Node rfc6902 + ajv"},
}

func table(name string, w io.Writer) error {
	f, err := os.Open(name)
	if err != nil {
		return err
	}
	defer f.Close()
	all := map[[2]string][]figures{} // by stack and size
	var sizes []string
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		var fg figures
		if err := json.Unmarshal(sc.Bytes(), &fg); err != nil {
			return fmt.Errorf("%s:%d: %w", name, n, err)
		}
		k := [2]string{fg.Stack, fg.Size}
		all[k] = append(all[k], fg)
		if !slices.Contains(sizes, fg.Size) {
			sizes = append(sizes, fg.Size)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	type med struct{ parse, first, step, rss, parseCPU, firstCPU, stepCPU float64 }
	meds := map[[2]string]med{}
	for k, fs := range all {
		get := func(g func(figures) int64) float64 {
			v := make([]int64, len(fs))
			for i, f := range fs {
				v[i] = g(f)
			}
			return float64(median(v))
		}
		meds[k] = med{
			get(func(f figures) int64 { return f.ParseNS }), get(func(f figures) int64 { return f.FirstNS }),
			get(func(f figures) int64 { return f.StepNS }), get(func(f figures) int64 { return f.MaxRSSKiB }),
			get(func(f figures) int64 { return f.ParseCPUNS }), get(func(f figures) int64 { return f.FirstCPUNS }),
			get(func(f figures) int64 { return f.StepCPUNS }),
		}
	}
	for _, size := range sizes {
		var cols []string
		for _, s := range stacks {
			if _, ok := meds[[2]string{s.id, size}]; ok {
				cols = append(cols, s.id)
			}
		}
		rt, hasRT := meds[[2]string{"runtime", size}]
		rounds := len(all[[2]string{"runtime", size}])
		fmt.Fprintf(w, "\n### At %s (%.2f MB of text; medians of %d rounds; × = the stack's figure / the runtime's; CPU time counts every thread)\n\n", size, float64(textBytes(all, size))/1e6, rounds)
		head := "| at " + size + " |"
		rule := "|---|"
		for _, c := range cols {
			head += " " + label(c) + " |"
			rule += "---|"
		}
		fmt.Fprintln(w, head)
		fmt.Fprintln(w, rule)
		rows := []struct {
			name string
			get  func(med) float64
			show func(float64) string
		}{
			{"one step on a committed state (median)", func(m med) float64 { return m.step }, dur},
			{"first step on a freshly parsed state", func(m med) float64 { return m.first }, dur},
			{"parsing the state", func(m med) float64 { return m.parse }, dur},
			{"peak RSS", func(m med) float64 { return m.rss }, func(k float64) string { return mib(k * 1024) }},
			{"CPU time of a step on a committed state (mean)", func(m med) float64 { return m.stepCPU }, dur},
			{"CPU time of the first step", func(m med) float64 { return m.firstCPU }, dur},
			{"CPU time of the parse", func(m med) float64 { return m.parseCPU }, dur},
		}
		for _, r := range rows {
			line := "| " + r.name + " |"
			for _, c := range cols {
				v := r.get(meds[[2]string{c, size}])
				cell := r.show(v)
				if hasRT && c != "runtime" && r.get(rt) > 0 {
					cell += fmt.Sprintf(" (×%s)", ratio(v/r.get(rt)))
				}
				line += " " + cell + " |"
			}
			fmt.Fprintln(w, line)
		}
	}

	fmt.Fprintln(w, "\n### Targets")
	fmt.Fprintln(w)
	if rt, ok := meds[[2]string{"runtime", "6MB"}]; ok {
		fastest, who := 0.0, ""
		for _, s := range []string{"go-naive", "node"} {
			if m, ok := meds[[2]string{s, "6MB"}]; ok && (who == "" || m.first < fastest) {
				fastest, who = m.first, label(s)
			}
		}
		if who != "" {
			fmt.Fprintf(w, "- first step at 6 MB: %s, the fastest peer's (%s) %s: ×%s (target ≤ 0.5): %s\n",
				dur(rt.first), who, dur(fastest), ratio(rt.first/fastest), met(rt.first <= fastest/2))
		}
		if b, ok := meds[[2]string{"runtime-base", "6MB"}]; ok {
			fmt.Fprintf(w, "- parsing 6 MB: %s before, %s after: %s× faster (target ≥ 3): %s\n",
				dur(b.parse), dur(rt.parse), ratio(b.parse/rt.parse), met(b.parse >= 3*rt.parse))
		}
		if big, ok := meds[[2]string{"runtime", "60MB"}]; ok {
			fmt.Fprintf(w, "- cost at 60 MB / at 6 MB (linear: about 10 for what reads the state, 1 for a step): parse ×%s (CPU ×%s), first step ×%s (CPU ×%s), chain step ×%s (CPU ×%s), peak RSS ×%s\n",
				ratio(big.parse/rt.parse), ratio(big.parseCPU/rt.parseCPU), ratio(big.first/rt.first), ratio(big.firstCPU/rt.firstCPU),
				ratio(big.step/rt.step), ratio(big.stepCPU/rt.stepCPU), ratio(big.rss/rt.rss))
		}
	}
	return nil
}

func label(id string) string {
	for _, s := range stacks {
		if s.id == id {
			return s.label
		}
	}
	return id
}

func textBytes(all map[[2]string][]figures, size string) int {
	for k, fs := range all {
		if k[1] == size && len(fs) > 0 {
			return fs[0].TextBytes
		}
	}
	return 0
}

func dur(ns float64) string {
	switch {
	case ns >= 1e9:
		return fmt.Sprintf("%.2f s", ns/1e9)
	case ns >= 1e6:
		return fmt.Sprintf("%.1f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.0f µs", ns/1e3)
	}
	return fmt.Sprintf("%.0f ns", ns)
}

func mib(b float64) string { return fmt.Sprintf("%.0f MiB", b/(1<<20)) }

func ratio(r float64) string {
	switch {
	case r >= 100:
		return strings.ReplaceAll(fmt.Sprintf("%.0f", r), ".", "")
	case r >= 10:
		return fmt.Sprintf("%.1f", r)
	}
	return fmt.Sprintf("%.2f", r)
}

func met(ok bool) string {
	if ok {
		return "met"
	}
	return "NOT met"
}
