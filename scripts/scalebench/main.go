// Command scalebench is the harness's side of scripts/bench-scale.sh: it
// writes a large state of records as a file and times, on that text, what
// a run at scale does with it (docs/scale.md, "Figures measured"). Each
// command prints one JSON line of figures: wall and CPU milliseconds
// (CPU: the process's user and system time, every thread, the garbage
// collector's included), medians over the rounds.
//
//	scalebench write FILE RECORDS
//	    writes a state of RECORDS records of about 1 KB under "/records"
//	    (100,000 make about 100 MB), with "meta", "summary" and "phase"
//	scalebench tools FILE ROUNDS
//	    parses FILE, then times a read_state page of 50 records (from
//	    the middle), a
//	    query_state filter that selects 1 % of the records, a
//	    search_state, one step's verification (a committing patch of two
//	    operations, the state verified against once before) and the
//	    committed state's text (Document.Bytes) beside a copy of the text
//	scalebench query FILE
//	    the filter of "tools" answered once from the text: read FILE
//	    (untimed), parse, build the value, run query_state; prints the
//	    matches' ids with the figures (for the gojq peer, which does the
//	    same: scripts/peers/gojq)
//	scalebench grow CASE SIZE ROUNDS
//	    grows the embedded case CASE to SIZE ROUNDS times: MB/s (the
//	    median), and whether every round gave the same bytes (SHA-256)
//	scalebench table FIGURES.jsonl
//	    the table of figures a-f (docs/scale.md) from the lines the
//	    other commands printed, with the suite's line the script writes
//	    ({"stack":"suite","runs","wall_s","cpu_s","rss_mb"}) and the
//	    shared-state check's ({"stack":"shared","ok"}), each beside its
//	    target
package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/tools"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

const usage = "usage: scalebench write FILE RECORDS | tools FILE ROUNDS | query FILE | grow CASE SIZE ROUNDS | table FIGURES.jsonl"

func run(args []string, stdout, stderr io.Writer) int {
	var err error
	switch {
	case len(args) == 3 && args[0] == "write":
		var n int
		if n, err = strconv.Atoi(args[2]); err == nil {
			err = write(args[1], n)
		}
	case len(args) == 3 && args[0] == "tools":
		var rounds int
		if rounds, err = strconv.Atoi(args[2]); err == nil {
			err = timeTools(stdout, args[1], max(rounds, 1))
		}
	case len(args) == 2 && args[0] == "query":
		err = timeQuery(stdout, args[1])
	case len(args) == 2 && args[0] == "table":
		err = table(stdout, args[1])
	case len(args) == 4 && args[0] == "grow":
		var rounds int
		if rounds, err = strconv.Atoi(args[3]); err == nil {
			err = timeGrow(stdout, args[1], args[2], max(rounds, 1))
		}
	default:
		err = errors.New(usage)
	}
	if err != nil {
		fmt.Fprintln(stderr, "scalebench:", err)
		return 1
	}
	return 0
}

// write writes a state of n records to file.
func write(file string, n int) error {
	words := []string{"customer", "asked", "about", "the", "delivery", "of", "order", "invoice", "refund", "called", "again", "on", "monday"}
	var b bytes.Buffer
	b.WriteString(`{"meta":{"version":1},"phase":"review","summary":{"total":0,"note":""},"records":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		var note strings.Builder
		for k := 0; note.Len() < 850; k++ {
			note.WriteString(words[(i*7+k*k)%len(words)])
			note.WriteByte(' ')
		}
		fmt.Fprintf(&b, `{"id":%d,"name":"Customer %d","email":"user%d@example.com","status":%q,"total":%d.%02d,"tags":["a","t%d"],"address":{"zip":"%05d"},"notes":%q}`,
			i, i, i, []string{"open", "closed", "pending"}[i%3], i%1000, i%100, i%50, i, note.String()[:850])
	}
	b.WriteString("]}")
	return os.WriteFile(file, b.Bytes(), 0o644)
}

// The filter of the figures: 1 % of the records (status open, a third,
// and total at least 970, 3 in 100).
const filterQuery = `$.records[?@.status == 'open' && @.total >= 970].id`

// step is a tools.Step on a whole state: it sees all of it and proposes
// nothing.
type step struct{ root any }

func (s step) Lookup(p runtime.Pointer) (any, bool) { return runtime.Lookup(s.root, p) }
func (s step) ResultLimit() int                     { return tools.DefaultResultBytes }
func (s step) Propose(context.Context, string) (tools.Verdict, error) {
	return tools.Verdict{}, errors.New("scalebench proposes nothing")
}

// cpuNow is the process's CPU time so far (user and system, every
// thread).
func cpuNow() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// timing is one figure: medians over rounds, in milliseconds.
type timing struct {
	WallMS float64 `json:"wall_ms"`
	CPUMS  float64 `json:"cpu_ms"`
}

// measure runs fn rounds times: the medians of its wall and CPU times.
func measure(rounds int, fn func() error) (timing, error) {
	var walls, cpus []float64
	for range rounds {
		c0, t0 := cpuNow(), time.Now()
		if err := fn(); err != nil {
			return timing{}, err
		}
		walls = append(walls, float64(time.Since(t0).Microseconds())/1000)
		cpus = append(cpus, float64((cpuNow()-c0).Microseconds())/1000)
	}
	return timing{WallMS: median(walls), CPUMS: median(cpus)}, nil
}

// medianOf is the medians of ts' wall and CPU times.
func medianOf(ts []timing) timing {
	var w, c []float64
	for _, t := range ts {
		w, c = append(w, t.WallMS), append(c, t.CPUMS)
	}
	return timing{WallMS: median(w), CPUMS: median(c)}
}

func median(x []float64) float64 {
	slices.Sort(x)
	return x[len(x)/2]
}

// call runs one tool call, failing on an error result.
func call(s tools.Step, d tools.Def, args string) (tools.Result, error) {
	res, err := d.Call(context.Background(), s, args)
	if err == nil && res.Code != "" {
		err = fmt.Errorf("%s(%s): %s: %.200s", d.Name, args, res.Code, res.Text)
	}
	return res, err
}

// contract is the step's contract of the verification figure.
var contract = runtime.MustCompile(runtime.ContractSpec{
	View:   runtime.ViewSpec{Include: []string{"/records", "/summary", "/phase"}},
	Write:  []string{"/summary", "/records/*/tags"},
	Phases: []string{"review"},
	Schema: map[string]any{"type": "object", "required": []any{"records", "summary"}, "properties": map[string]any{
		"records": map[string]any{"type": "array", "items": map[string]any{"type": "object", "required": []any{"id", "status"}}},
	}},
	Invariants: []runtime.InvariantSpec{{Name: "records kept", Rule: "size(post.records) == size(pre.records)"}},
	Limits:     runtime.Limits{MaxDocumentBytes: 1 << 30}, // a state of 100 MB and more
})

const verifyPatch = `[{"op":"replace","path":"/summary/total","value":12.5},{"op":"add","path":"/records/5/tags/-","value":"flagged"}]`

func timeTools(w io.Writer, file string, rounds int) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var doc *runtime.Document
	parse, err := measure(1, func() (err error) {
		doc, err = runtime.ParseDocument(text)
		if err == nil {
			doc.Value()
		}
		return err
	})
	if err != nil {
		return err
	}
	s := step{root: doc.Value()}
	recs, _ := runtime.Lookup(s.root, runtime.Pointer{"records"})
	n, _ := recs.([]any)
	out := map[string]any{"stack": "tools", "bytes": len(text), "records": len(n), "rounds": rounds, "parse": parse}
	for _, c := range []struct {
		name string
		d    tools.Def
		args string
	}{
		{"read_page", tools.ReadState, fmt.Sprintf(`{"pointer": "/records", "offset": %d, "limit": 50, "depth": 1}`, len(n)/2)},
		{"query_filter", tools.QueryState, fmt.Sprintf(`{"path": %q}`, filterQuery)},
		{"search", tools.SearchState, `{"text": "USER99999@"}`},
	} {
		if out[c.name], err = measure(rounds, func() error { _, err := call(s, c.d, c.args); return err }); err != nil {
			return err
		}
	}
	opts := runtime.VerifyOptions{Gates: runtime.DefaultGates, Phase: "review"}
	if d, err := contract.Verify(context.Background(), doc, []byte(verifyPatch), opts); err != nil || !d.Committed {
		return fmt.Errorf("the verification did not commit: %v %+v", err, d.Rejection())
	}
	if out["verify"], err = measure(rounds, func() error {
		d, err := contract.Verify(context.Background(), doc, []byte(verifyPatch), opts)
		if err == nil && !d.Committed {
			err = fmt.Errorf("rejected: %+v", d.Rejection())
		}
		return err
	}); err != nil {
		return err
	}
	// The committed state's text and a copy of the text, in turn, each
	// dropped and the memory given back before the next, so that both
	// write fresh pages (a new commit each round: a state builds its
	// text once).
	var texts, copies []timing
	for range rounds {
		d, err := contract.Verify(context.Background(), doc, []byte(verifyPatch), opts)
		if err != nil || !d.Committed {
			return fmt.Errorf("the verification did not commit: %v", err)
		}
		debug.FreeOSMemory()
		t, err := measure(1, func() error {
			if len(d.State.Bytes()) < len(text)/2 {
				return errors.New("the committed text is short")
			}
			return nil
		})
		if err != nil {
			return err
		}
		texts = append(texts, t)
		d = nil
		debug.FreeOSMemory()
		c, _ := measure(1, func() error {
			if len(bytes.Clone(text)) == 0 {
				return errors.New("no text")
			}
			return nil
		})
		copies = append(copies, c)
		debug.FreeOSMemory()
	}
	out["committed_text"], out["text_copy"] = medianOf(texts), medianOf(copies)
	return json.NewEncoder(w).Encode(out)
}

func timeQuery(w io.Writer, file string) error {
	text, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	var ids []string
	t, err := measure(1, func() error {
		doc, err := runtime.ParseDocument(text)
		if err != nil {
			return err
		}
		// All the matches: a page as long as the result limit allows,
		// read on until the last.
		s := step{root: doc.Value()}
		for offset := 0; ; {
			res, err := call(s, tools.QueryState, fmt.Sprintf(`{"path": %q, "offset": %d, "limit": 1000000}`, filterQuery, offset))
			if err != nil {
				return err
			}
			var pg struct {
				Total, Shown int
				Matches      []struct{ Value json.Number }
			}
			if err := json.Unmarshal([]byte(res.Text), &pg); err != nil {
				return err
			}
			for _, m := range pg.Matches {
				ids = append(ids, m.Value.String())
			}
			offset += pg.Shown
			if offset >= pg.Total || pg.Shown == 0 {
				return nil
			}
		}
	})
	if err != nil {
		return err
	}
	sum := sha256.Sum256([]byte(strings.Join(ids, ",")))
	return json.NewEncoder(w).Encode(map[string]any{"stack": "query_state", "bytes": len(text), "matches": len(ids), "ids_sha256": hex.EncodeToString(sum[:]), "total": t})
}

func timeGrow(w io.Writer, id, size string, rounds int) error {
	cases, ps, err := bench.LoadEmbeddedCases()
	if err != nil {
		return err
	}
	if len(ps) > 0 {
		return fmt.Errorf("the embedded cases: %v", ps[0])
	}
	i := slices.IndexFunc(cases, func(c *bench.Case) bool { return c.ID == id })
	if i < 0 {
		return fmt.Errorf("no case %s", id)
	}
	scale, err := bench.ParseScale(size)
	if err != nil {
		return err
	}
	digests := map[string]bool{}
	var n int
	t, err := measure(rounds, func() error {
		g, err := cases[i].Grown(scale, bench.DefaultScaleSeed)
		if err != nil {
			return err
		}
		b := g.State.Bytes()
		n = len(b)
		sum := sha256.Sum256(b)
		digests[hex.EncodeToString(sum[:])] = true
		return nil
	})
	if err != nil {
		return err
	}
	mbps := float64(n) / 1e6 / (t.WallMS / 1000)
	cpuMBps := float64(n) / 1e6 / (t.CPUMS / 1000)
	return json.NewEncoder(w).Encode(map[string]any{"stack": "grow", "case": id, "bytes": n, "rounds": rounds, "grow": t, "mb_per_s": mbps, "cpu_mb_per_s": cpuMBps, "identical": len(digests) == 1})
}

// figures are the lines table reads, by stack.
type figures map[string]map[string]any

func (f figures) num(stack string, path ...string) float64 {
	var v any = map[string]any(f[stack])
	for _, k := range path {
		m, _ := v.(map[string]any)
		v = m[k]
	}
	x, _ := v.(float64)
	return x
}

// table prints figures a-f beside their targets. Whether a target is
// met is judged on CPU time (c: the suite's CPU time over the cores),
// which another process's load changes less than wall time, but for f,
// which compares two programs run in turn, the medians of their wall
// times (query_state builds a parsed state's value on every core); the
// wall times are printed beside.
func table(w io.Writer, file string) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return err
	}
	f := figures{}
	rounds := map[string][]timing{} // the query_state and gojq lines: one a round
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			return fmt.Errorf("%s: %q: %w", file, line, err)
		}
		stack, _ := m["stack"].(string)
		f[stack] = m
		if stack == "query_state" || stack == "gojq" {
			rounds[stack] = append(rounds[stack], timing{WallMS: f.num(stack, "total", "wall_ms"), CPUMS: f.num(stack, "total", "cpu_ms")})
		}
	}
	for stack, ts := range rounds {
		t := medianOf(ts)
		f[stack]["total"] = map[string]any{"wall_ms": t.WallMS, "cpu_ms": t.CPUMS}
		f[stack]["rounds"] = float64(len(ts))
	}
	mb := func(n float64) string { return fmt.Sprintf("%.0f MB", n/1e6) }
	met := func(ok bool) string {
		if ok {
			return "yes"
		}
		return "NO"
	}
	type row struct{ fig, what, measured, target, met string }
	var rows []row
	if g := f["grow"]; g != nil {
		id, _ := g["identical"].(bool)
		rows = append(rows, row{"a", fmt.Sprintf("grow %v to %s (median of %v)", g["case"], mb(f.num("grow", "bytes")), g["rounds"]),
			fmt.Sprintf("%.0f MB/s wall, %.0f MB/s CPU; same bytes: %v", f.num("grow", "mb_per_s"), f.num("grow", "cpu_mb_per_s"), id),
			">= 50 MB/s, same bytes", met(f.num("grow", "cpu_mb_per_s") >= 50 && id)})
	}
	if s := f["shared"]; s != nil {
		ok, _ := s["ok"].(bool)
		rows = append(rows, row{"b", "a grown state shared read-only by its runs", fmt.Sprintf("%v (%v)", ok, s["test"]), "shared", met(ok)})
	}
	if s := f["suite"]; s != nil {
		wall, rss := f.num("suite", "wall_s"), f.num("suite", "rss_mb")
		rows = append(rows, row{"c", fmt.Sprintf("%v runs, tools protocol, --scale %v", s["runs"], s["scale"]),
			fmt.Sprintf("%.0f s wall, %.0f s CPU, %.0f MB peak RSS", wall, f.num("suite", "cpu_s"), rss),
			"<= 60 s, <= 2 GB (828 runs, 10MB, 2 idle cores)", met(f.num("suite", "cpu_s")/float64(goruntime.NumCPU()) <= 60 && rss <= 2048)})
	}
	if t := f["tools"]; t != nil {
		recs := fmt.Sprintf("%v records, %s", t["records"], mb(f.num("tools", "bytes")))
		for _, c := range []struct{ key, what string }{{"read_page", "read_state page of 50"}, {"query_filter", "query_state selecting 1 %"}, {"search", "search_state"}} {
			wall := f.num("tools", c.key, "wall_ms")
			cpu := f.num("tools", c.key, "cpu_ms")
			rows = append(rows, row{"d", c.what + " (" + recs + ")", fmt.Sprintf("%.2f ms wall, %.2f ms CPU", wall, cpu), "<= 50 ms median", met(cpu <= 50)})
		}
		v := f.num("tools", "verify", "wall_ms")
		vc := f.num("tools", "verify", "cpu_ms")
		rows = append(rows, row{"d", "a step's verify (" + recs + ")", fmt.Sprintf("%.3f ms wall, %.3f ms CPU", v, vc), "< 1 ms", met(vc < 1)})
		text, cp := f.num("tools", "committed_text", "wall_ms"), f.num("tools", "text_copy", "wall_ms")
		textCPU := f.num("tools", "committed_text", "cpu_ms")
		gbps, gbpsCPU := f.num("tools", "bytes")/1e9/(text/1000), f.num("tools", "bytes")/1e9/(textCPU/1000)
		rows = append(rows, row{"e", "a committed state's text (" + mb(f.num("tools", "bytes")) + ")",
			fmt.Sprintf("%.1f ms, %.2f GB/s (CPU %.2f GB/s); a copy %.1f ms (x%.2f)", text, gbps, gbpsCPU, cp, text/cp), ">= 1 GB/s", met(gbpsCPU >= 1)})
	}
	if q, g := f["query_state"], f["gojq"]; q != nil && g != nil {
		same := q["ids_sha256"] == g["ids_sha256"] && q["matches"] == g["matches"]
		ours, theirs := f.num("query_state", "total", "wall_ms"), f.num("gojq", "total", "wall_ms")
		rows = append(rows, row{"f", fmt.Sprintf("the 1 %% selection from %s text, parse included (median of %v)", mb(f.num("gojq", "bytes")), g["rounds"]),
			fmt.Sprintf("query_state %.0f ms (%.0f CPU), gojq %.0f ms (%.0f CPU); same ids: %v", ours, f.num("query_state", "total", "cpu_ms"), theirs, f.num("gojq", "total", "cpu_ms"), same),
			"faster than gojq", met(same && ours < theirs)})
	}
	widths := [5]int{}
	cells := func(r row) [5]string { return [5]string{r.fig, r.what, r.measured, r.target, r.met} }
	all := append([]row{{"", "figure", "measured", "target", "met"}}, rows...)
	for _, r := range all {
		for i, c := range cells(r) {
			widths[i] = max(widths[i], len([]rune(c)))
		}
	}
	for _, r := range all {
		c := cells(r)
		for i := range c {
			fmt.Fprintf(w, "%-*s", widths[i]+2, c[i])
		}
		fmt.Fprintln(w)
	}
	return nil
}
