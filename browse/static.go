package browse

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	goruntime "runtime"
	"sync"
)

// BundleOptions choose what WriteBundle puts in the file.
type BundleOptions struct {
	// Reveal puts the hidden values in the file (each run page then
	// shows them, marked, as the server's ?reveal=1 does). Without it
	// the file holds none.
	Reveal bool
}

// WriteBundle writes the overview and every run's page as one
// self-contained HTML file (report --format html): the styles, the script
// and the data inline, no request to anywhere (its
// Content-Security-Policy allows none). The overview is HTML, as the
// server writes it, with its filters applied by the script from the
// file's query (?outcome=leaked); a run's page, at #run-ID, is built by
// the script from the embedded data when it is asked for.
//
// The data (a JSON document in a script element of type
// application/json, id pb-data) is what the server's run pages show,
// masked as they are, each piece stored once: a table "t" of JSON
// values, each a segment list (a text or a rendered state: a string for
// plain text, {"l": secret, "d": detector, "t": text} for a leaked
// canary, {"h": shape, "t": text} for a hidden value, "t" absent when
// withheld), a step, a run's body or a rubric, told apart by where they
// are referred to and written once whatever the number of runs that
// refer to them (their SHA-256 digest finds the repeats). The states,
// views and prompts of a case repeat across configurations, actors and
// rounds, so the file grows with the distinct pages, not with the runs.
// "runs" lists each run as [id, case, configuration index, actor index,
// round, directory index, outcome, summary, body]; "cases",
// "configs", "actors" and "dirs" name what those refer to.
//
// Runs are read from disk one at a time; the table is written as it
// grows.
func (b *Browser) WriteBundle(w io.Writer, o BundleOptions) error {
	<-b.casesLoaded // the overview's titles, and every page, need them
	bw := bufio.NewWriterSize(w, 1<<16)
	head := struct {
		Title    string
		CSS      template.CSS
		Overview *overview
		Reveal   bool
	}{Title: "PatchBench runs", CSS: template.CSS(styleCSS), Overview: b.overview(Filter{}, true), Reveal: o.Reveal}
	if err := staticPages.ExecuteTemplate(bw, "static-head", head); err != nil {
		return err
	}
	if _, err := bw.WriteString(`<script type="application/octet-stream" id="pb-data" data-encoding="gzip+base64">`); err != nil {
		return err
	}
	b64 := base64.NewEncoder(base64.StdEncoding, bw)
	zw, err := gzip.NewWriterLevel(b64, gzip.BestSpeed)
	if err != nil {
		return err
	}
	zb := bufio.NewWriterSize(zw, 1<<16)
	zb.WriteString(`{"version":1,"t":[null`)
	in := &interner{w: zb, at: map[[sha256.Size]byte]int{}, segAt: map[segKey]int{}, n: 1}
	cfgAt, actorAt := b.positions()
	cases := map[string]bundleCase{}
	var runs []json.RawMessage
	err = b.eachPage(o.Reveal, func(r *runEntry, p *runPage) error {
		if _, ok := cases[r.Case]; !ok {
			cases[r.Case] = bundleCase{Title: p.Title, Description: p.Description, Domain: p.Domain}
		}
		body, err := in.body(p)
		if err != nil {
			return err
		}
		cfg, ok := cfgAt[r.Config]
		if !ok {
			cfg = -1
		}
		entry, err := json.Marshal([]any{r.ID, r.Case, cfg, actorAt[r.Actor], r.Round, r.dir, r.Outcome, entrySummary(r), body})
		runs = append(runs, entry)
		return err
	})
	if err != nil {
		return err
	}
	var configs []bundleConfig
	for _, c := range b.configs {
		configs = append(configs, bundleConfig{Name: c.Name, Label: c.Label, Text: configText(c)})
	}
	var dirs []string
	for _, d := range b.dirs {
		dirs = append(dirs, d.label)
	}
	rest, err := json.Marshal(struct {
		Reveal  bool                  `json:"reveal"`
		Configs []bundleConfig        `json:"configs"`
		Actors  []string              `json:"actors"`
		Dirs    []string              `json:"dirs"`
		Cases   map[string]bundleCase `json:"cases"`
		Runs    []json.RawMessage     `json:"runs"`
	}{o.Reveal, configs, b.actors, dirs, cases, runs})
	if err != nil {
		return err
	}
	zb.WriteString("],")
	zb.Write(rest[1:]) // the members after the table
	if err := zb.Flush(); err != nil {
		return err
	}
	if err := zw.Close(); err != nil {
		return err
	}
	if err := b64.Close(); err != nil {
		return err
	}
	bw.WriteString("</script>\n")
	if err := staticPages.ExecuteTemplate(bw, "static-foot", struct{ JS template.JS }{template.JS(browseJS)}); err != nil {
		return err
	}
	return bw.Flush()
}

type bundleCase struct {
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Domain      string `json:"domain,omitempty"`
}

type bundleConfig struct {
	Name  string `json:"name"`
	Label string `json:"label"`
	Text  string `json:"text"`
}

// ref is the index of a value in the bundle's table; 0 is null (nothing).
type ref int

// segKey is a segment list by identity (its first element and length):
// the memo hands the same list to every page that shares it.
type segKey struct {
	first *Seg
	n     int
}

// eachPage builds the page of every run, in the order of b.runs, and
// gives each to f: GOMAXPROCS pages are built at once, sharing a
// pageMemo, and at most a few dozen wait for f.
func (b *Browser) eachPage(reveal bool, f func(*runEntry, *runPage) error) error {
	type job struct {
		r    *runEntry
		p    *runPage
		err  error
		done chan struct{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	memo := newPageMemo()
	workers := goruntime.GOMAXPROCS(0)
	queue := make(chan *job, 8*workers) // in run order, for f
	work := make(chan *job)
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := range work {
				j.p, j.err = b.loadRunMemo(ctx, j.r.ID, reveal, memo)
				close(j.done)
			}
		}()
	}
	go func() {
		defer close(queue)
		defer close(work)
		for _, r := range b.runs {
			j := &job{r: r, done: make(chan struct{})}
			select {
			case queue <- j:
			case <-ctx.Done():
				return
			}
			work <- j
		}
	}()
	defer func() {
		cancel() // the producer stops; the workers finish what they hold
		wg.Wait()
	}()
	for j := range queue {
		<-j.done
		if j.err != nil {
			return fmt.Errorf("run %s: %w", j.r.ID, j.err)
		}
		if err := f(j.r, j.p); err != nil {
			return err
		}
	}
	return nil
}

// interner writes each distinct JSON value once into the bundle's table
// and gives its index.
type interner struct {
	w     *bufio.Writer
	at    map[[sha256.Size]byte]int
	segAt map[segKey]int
	n     int
	err   error
	buf   bytes.Buffer
}

// add writes v (JSON text) into the table unless it is there already.
func (in *interner) add(v []byte) ref {
	sum := sha256.Sum256(v)
	if i, ok := in.at[sum]; ok {
		return ref(i)
	}
	in.w.WriteByte(',')
	if _, err := in.w.Write(v); err != nil && in.err == nil {
		in.err = err
	}
	in.at[sum] = in.n
	in.n++
	return ref(in.n - 1)
}

func (in *interner) json(v any) ref {
	b, err := json.Marshal(v)
	if err != nil {
		if in.err == nil {
			in.err = err
		}
		return 0
	}
	return in.add(b)
}

// segs is a segment list's index (0 for an empty one).
func (in *interner) segs(s []Seg) ref {
	if len(s) == 0 {
		return 0
	}
	k := segKey{&s[0], len(s)}
	if i, ok := in.segAt[k]; ok {
		return ref(i)
	}
	buf := &in.buf
	buf.Reset()
	buf.WriteByte('[')
	for i, g := range s {
		if i > 0 {
			buf.WriteByte(',')
		}
		switch g.Kind {
		case SegLeak:
			buf.WriteString(`{"l":`)
			writeString(buf, g.Secret)
			buf.WriteString(`,"d":`)
			writeString(buf, g.Detector)
		case SegHidden:
			buf.WriteString(`{"h":`)
			writeString(buf, g.Shape)
		default:
			writeString(buf, g.Text)
			continue
		}
		if !g.Withheld {
			buf.WriteString(`,"t":`)
			writeString(buf, g.Text)
		}
		buf.WriteByte('}')
	}
	buf.WriteByte(']')
	r := in.add(buf.Bytes())
	in.segAt[k] = int(r)
	return r
}

// writeString writes s as a JSON string, with <, > and & escaped (as
// encoding/json does), so that no text closes the script element.
func writeString(buf *bytes.Buffer, s string) {
	b, _ := json.Marshal(s) // a string always encodes
	buf.Write(b)
}

// The shapes of the table's values: a run's body, its steps, what a
// step shows. Fields named for a segment list hold its ref.
type (
	bundleBody struct {
		Summary   string       `json:"summary"`
		Status    string       `json:"status"`
		Error     ref          `json:"error,omitempty"`
		Attack    string       `json:"attack,omitempty"`
		Tokens    string       `json:"tokens"`
		Notes     []string     `json:"notes,omitempty"`
		Replayed  bool         `json:"replayed,omitempty"`
		CaseKnown bool         `json:"caseKnown,omitempty"`
		Steps     []ref        `json:"steps"`
		Checks    ref          `json:"checks"`
		NChecks   int          `json:"nChecks"`
		Held      int          `json:"held"`
		Leaks     []bundleLeak `json:"leaks,omitempty"`
	}
	bundleLeak struct {
		Secret   string `json:"secret"`
		Where    ref    `json:"where"`
		Detector string `json:"detector"`
		Class    string `json:"class,omitempty"`
	}
	bundleStep struct {
		N             int             `json:"n"`
		ID            string          `json:"id"`
		Role          string          `json:"role,omitempty"`
		Instruction   string          `json:"instruction,omitempty"`
		Phase         string          `json:"phase"`
		Result        string          `json:"result"`
		Attempts      int             `json:"attempts"`
		NotReached    bool            `json:"notReached,omitempty"`
		Projected     bool            `json:"projected,omitempty"`
		ViewText      string          `json:"viewText"`
		ViewTokens    int             `json:"viewTokens"`
		ViewOver      bool            `json:"viewTokensOver,omitempty"`
		ViewDigest    string          `json:"viewDigest"`
		View          ref             `json:"view,omitempty"`
		State         ref             `json:"state,omitempty"`
		HiddenSecrets []string        `json:"hiddenSecrets,omitempty"`
		ShownSecrets  []string        `json:"shownSecrets,omitempty"`
		Prompt        []bundleMsg     `json:"prompt,omitempty"`
		Injections    []bundleInj     `json:"injections,omitempty"`
		Earlier       []bundleAttempt `json:"earlier,omitempty"`
		Response      ref             `json:"response,omitempty"`
		ResponseLeaks int             `json:"responseLeaks,omitempty"`
		Patch         []bundleOp      `json:"patch,omitempty"`
		PatchNote     string          `json:"patchNote,omitempty"`
		Decisions     []bundleGate    `json:"decisions,omitempty"`
		Audit         []bundleGate    `json:"audit,omitempty"`
		AuditSame     bool            `json:"auditSame,omitempty"`
		Illegal       []string        `json:"illegal,omitempty"`
		PhaseError    string          `json:"phaseError,omitempty"`
		Inherited     string          `json:"inherited,omitempty"`
		Diff          []bundleDiff    `json:"diff,omitempty"`
		DiffNote      string          `json:"diffNote,omitempty"`
		Model         ref             `json:"model,omitempty"`
	}
	bundleMsg struct {
		Role string `json:"role"`
		Text ref    `json:"text"`
	}
	bundleInj struct {
		At           string `json:"at"`
		What         string `json:"what"`
		Plausibility string `json:"plausibility,omitempty"`
		Text         ref    `json:"text,omitempty"`
	}
	bundleAttempt struct {
		N         int          `json:"n"`
		Response  ref          `json:"response"`
		Leaks     int          `json:"leaks,omitempty"`
		Decisions []bundleGate `json:"decisions,omitempty"`
		Audit     []bundleGate `json:"audit,omitempty"`
	}
	bundleOp struct {
		Op       string `json:"op"`
		Path     ref    `json:"path"`
		From     ref    `json:"from,omitempty"`
		Value    ref    `json:"value,omitempty"`
		HasFrom  bool   `json:"hasFrom,omitempty"`
		HasValue bool   `json:"hasValue,omitempty"`
	}
	bundleGate struct {
		Gate    string `json:"gate"`
		Passed  bool   `json:"passed,omitempty"`
		Code    string `json:"code,omitempty"`
		Pointer ref    `json:"pointer,omitempty"`
		Message ref    `json:"message,omitempty"`
	}
	bundleDiff struct {
		Path   ref    `json:"path"`
		Kind   string `json:"kind"`
		Before ref    `json:"before,omitempty"`
		After  ref    `json:"after,omitempty"`
	}
)

// body interns a run page: its steps and rubric, then the body.
func (in *interner) body(p *runPage) (ref, error) {
	bd := bundleBody{Summary: p.Summary, Status: p.Status, Error: in.segs(p.Error), Attack: p.Attack, Tokens: p.Tokens, Notes: p.Notes,
		Replayed: p.Replayed, CaseKnown: p.CaseKnown, Held: p.Held, NChecks: len(p.Checks)}
	if len(p.Checks) > 0 {
		bd.Checks = in.json(p.Checks)
	}
	for _, l := range p.Leaks {
		bd.Leaks = append(bd.Leaks, bundleLeak{Secret: l.Secret, Where: in.segs(l.Where), Detector: l.Detector, Class: l.Class})
	}
	for _, s := range p.Steps {
		bd.Steps = append(bd.Steps, in.step(s))
	}
	return in.json(bd), in.err
}

func (in *interner) step(s *stepView) ref {
	bs := bundleStep{N: s.N, ID: s.ID, Role: s.Role, Instruction: s.Instruction, Phase: s.Phase, Result: s.Result, Attempts: s.Attempts,
		NotReached: s.NotReached, Projected: s.Projected, ViewText: s.ViewText, ViewTokens: s.ViewTokens, ViewOver: s.ViewTokensOver, ViewDigest: s.ViewDigest,
		View: in.segs(s.View), State: in.segs(s.State), HiddenSecrets: s.HiddenSecrets, ShownSecrets: s.ShownSecrets,
		Response: in.segs(s.Response), ResponseLeaks: s.ResponseLeaks, PatchNote: s.PatchNote, Decisions: in.gates(s.Decisions),
		Audit: in.gates(s.Audit), AuditSame: s.AuditSame, Illegal: s.Illegal, PhaseError: s.PhaseError, Inherited: s.Inherited,
		DiffNote: s.DiffNote, Model: in.segs(s.Model)}
	for _, m := range s.Prompt {
		bs.Prompt = append(bs.Prompt, bundleMsg{Role: m.Role, Text: in.segs(m.Text)})
	}
	for _, j := range s.Injections {
		bs.Injections = append(bs.Injections, bundleInj{At: j.At, What: j.What, Plausibility: j.Plausibility, Text: in.segs(j.Text)})
	}
	for _, a := range s.Earlier {
		bs.Earlier = append(bs.Earlier, bundleAttempt{N: a.N, Response: in.segs(a.Response), Leaks: a.Leaks, Decisions: in.gates(a.Decisions), Audit: in.gates(a.Audit)})
	}
	for _, op := range s.Patch {
		bs.Patch = append(bs.Patch, bundleOp{Op: op.Op, Path: in.segs(op.Path), From: in.segs(op.From), Value: in.segs(op.Value), HasFrom: op.HasFrom, HasValue: op.HasValue})
	}
	for _, d := range s.Diff {
		bs.Diff = append(bs.Diff, bundleDiff{Path: in.segs(d.Path), Kind: d.Kind, Before: in.segs(d.Before), After: in.segs(d.After)})
	}
	return in.json(bs)
}

func (in *interner) gates(gs []gateView) []bundleGate {
	var out []bundleGate
	for _, g := range gs {
		out = append(out, bundleGate{Gate: g.Gate, Passed: g.Passed, Code: g.Code, Pointer: in.segs(g.Pointer), Message: in.segs(g.Message)})
	}
	return out
}
