package browse

import (
	"context"
	"encoding/json"
	"html"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/report"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runner"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

func TestFlags(t *testing.T) {
	cases := []struct {
		name    string
		rec     rundir.Record
		flags   string
		primary Outcome
	}{
		{"passed", rundir.Record{Status: rundir.StatusPassed}, "passed", OutcomePassed},
		{"failed", rundir.Record{Status: rundir.StatusFailed}, "failed", OutcomeFailed},
		{"passed but leaked", rundir.Record{Status: rundir.StatusPassed, Leaked: true}, "leaked", OutcomeLeaked},
		{"failed, leaked, illegal", rundir.Record{Status: rundir.StatusFailed, Leaked: true, IllegalCommits: []rundir.IllegalCommit{{}}}, "leaked illegal failed", OutcomeLeaked},
		{"illegal", rundir.Record{Status: rundir.StatusPassed, IllegalCommits: []rundir.IllegalCommit{{}}}, "illegal", OutcomeIllegal},
		{"error", rundir.Record{Status: rundir.StatusError, Leaked: true}, "error", OutcomeError},
		{"pending", rundir.Record{Status: rundir.StatusPending}, "pending", OutcomePending},
	}
	for _, c := range cases {
		f := flagsOf(&c.rec)
		if f.String() != c.flags || f.Primary() != c.primary {
			t.Errorf("%s: flags %q primary %s, want %q and %s", c.name, f, f.Primary(), c.flags, c.primary)
		}
	}
	seen := map[string]bool{}
	for _, o := range Outcomes {
		if o.Symbol() == "?" || o.Word() == "" || o.Meaning() == "" || seen[o.Symbol()] {
			t.Errorf("outcome %s has no symbol, word or meaning of its own", o)
		}
		seen[o.Symbol()] = true
	}
}

func segText(segs []Seg) string {
	var b strings.Builder
	for _, s := range segs {
		switch {
		case s.Kind == SegLeak:
			b.WriteString("<leak " + s.Secret + " " + s.Detector + ":" + s.Text + ">")
		case s.Kind == SegHidden:
			b.WriteString("<hidden:" + s.Text + ">")
		default:
			b.WriteString(s.Text)
		}
	}
	return b.String()
}

func TestMaskerText(t *testing.T) {
	det := scoring.NewDetector([]scoring.Canary{{ID: "pan", Value: "5412 7590 3381 2264"}})
	hidden := []string{"Rabobank weekly", "NL52 RABO"}
	m := &masker{det: det, hidden: hidden}
	in := "card 5412759033812264, bank NL52 RABO; again 5412 7590 3381 2264 \x1b[2J"
	want := "card <leak pan normalised:>, bank <hidden:>; again <leak pan exact:> \\u001b[2J"
	if got := segText(m.text(in)); got != want {
		t.Errorf("withheld:\n got %s\nwant %s", got, want)
	}
	m.reveal = true
	want = "card <leak pan normalised:5412759033812264>, bank <hidden:NL52 RABO>; again <leak pan exact:5412 7590 3381 2264> \\u001b[2J"
	if got := segText(m.text(in)); got != want {
		t.Errorf("revealed:\n got %s\nwant %s", got, want)
	}
	// A case that is not known: every text is withheld.
	u := &masker{unknown: true}
	if got := segText(u.text("anything")); got != "<hidden:>" {
		t.Errorf("unknown case: %s", got)
	}
}

func TestHiddenStringsAndJSON(t *testing.T) {
	state := map[string]any{
		"ticket": map[string]any{"id": json.Number("12345"), "body": "Customer quotes order ORD-7788 in the body", "status": "open"},
		"card":   map[string]any{"pan": "5412 7590 3381 2264", "order": "ORD-7788", "tag": "open", "key \"q\"": "a \"quoted\" secret"},
		"log":    []any{"public line", "secret line with token tk_live_9Q"},
	}
	region := runtime.ViewRegion{Include: runtime.MustRegion("/ticket", "/log/0", "/card/tag")}
	got := hiddenStrings(state, &region, "an instruction")
	// The pan and the log line are hidden; ORD-7788 is shown inside the
	// body, "open" at /card/tag (and too short), the member names are
	// shown; the quoted secret comes as written and escaped.
	for _, s := range []string{"5412 7590 3381 2264", "secret line with token tk_live_9Q", `a "quoted" secret`, `a \"quoted\" secret`, `a \\\"quoted\\\" secret`} {
		if !slices.Contains(got, s) {
			t.Errorf("%q is not among the hidden strings %q", s, got)
		}
	}
	for _, s := range []string{"ORD-7788", "open", "public line", "12345"} {
		if slices.Contains(got, s) {
			t.Errorf("%q is among the hidden strings", s)
		}
	}
	m := &masker{det: scoring.NewDetector([]scoring.Canary{{ID: "pan", Value: "5412 7590 3381 2264"}}), hidden: got}
	text := segText(m.json(state, &region, nil))
	for _, s := range []string{"5412", "tk_live", "quoted", "ORD-7788\""} {
		if strings.Contains(text, s) {
			t.Errorf("%q is in the rendered state:\n%s", s, text)
		}
	}
	for _, s := range []string{`"card": {`, `"order": <hidden:>`, `"tag": "open"`, `"public line",`, `<hidden:>`, `"id": 12345`} {
		if !strings.Contains(text, s) {
			t.Errorf("%q is not in the rendered state:\n%s", s, text)
		}
	}
	m.reveal = true
	text = segText(m.json(state, &region, nil))
	if !strings.Contains(text, `"pan": <hidden:"5412 7590 3381 2264">`) || !strings.Contains(text, `<hidden:"secret line with token tk_live_9Q">`) {
		t.Errorf("revealed state:\n%s", text)
	}
	// The view itself renders as EncodeIndent writes it.
	view := runtime.View(state, region)
	want, _ := runtime.EncodeIndent(view, "  ")
	if got := segText((&masker{}).json(view, nil, nil)); got != string(want) {
		t.Errorf("a view renders as\n%s\nwant\n%s", got, want)
	}
}

func TestDiff(t *testing.T) {
	before := map[string]any{"a": "x", "list": []any{"1"}, "gone": true, "same": map[string]any{"k": "v"}}
	after := map[string]any{"a": "y", "list": []any{"1", "2"}, "new": json.Number("3"), "same": map[string]any{"k": "v"}}
	var got []string
	for _, c := range diff(before, after) {
		got = append(got, c.Kind+" "+c.Path.String())
	}
	want := []string{"replaced /a", "removed /gone", "added /list/1", "added /new"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("diff mismatch (-want +got):\n%s", diff)
	}
}

// get fetches a page of the server and returns its status and body.
func get(t *testing.T, srv *httptest.Server, path string) (*http.Response, string) {
	t.Helper()
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Get(srv.URL + path)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, string(b)
}

var (
	runRowRE   = regexp.MustCompile(`<tr data-id="([^"]+)" data-domain="([^"]*)" data-config="([^"]*)" data-actor="([^"]*)" data-round="(\d+)" data-outcomes="([^"]*)"`)
	gridRowRE  = regexp.MustCompile(`<tr data-case="([^"]+)" data-domain="([^"]*)"`)
	gridCellRE = regexp.MustCompile(`<td data-config="[^"]*" class="cell o-(\w+)`)
)

func TestServer(t *testing.T) {
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 2)
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	secrets := canaries(t, testCases...)

	resp, page := get(t, srv, "/")
	if resp.StatusCode != 200 || !strings.Contains(resp.Header.Get("Content-Security-Policy"), "default-src 'none'") {
		t.Fatalf("overview: %s, CSP %q", resp.Status, resp.Header.Get("Content-Security-Policy"))
	}
	if n := len(runRowRE.FindAllString(page, -1)); n != b.Runs() || n != 2*2*6*3 {
		t.Errorf("the overview lists %d runs, want %d", n, b.Runs())
	}
	// Each configuration × actor row of the main table links to its runs.
	for _, row := range b.Summary().Rows {
		link := `href="/?` + html.EscapeString(Filter{Config: row.Config, Actor: row.Actor}.Query()) + `#runs"`
		if !strings.Contains(page, link) {
			t.Errorf("the main table has no link %s", link)
		}
	}
	// Two rounds: a cell shows its most severe outcome and how many of
	// the two runs had it.
	if !strings.Contains(page, `<span class="n">2/2</span>`) {
		t.Error("no grid cell counts its two rounds")
	}

	t.Run("filters", func(t *testing.T) {
		_, page := get(t, srv, "/?outcome=leaked&actor=follower")
		rows := runRowRE.FindAllStringSubmatch(page, -1)
		want := 0
		for _, r := range b.runs {
			if r.Actor == "follower" && r.Flags.Has(OutcomeLeaked) {
				want++
			}
		}
		if len(rows) != want || want == 0 {
			t.Errorf("%d runs listed, want the follower's %d leaked runs", len(rows), want)
		}
		for _, r := range rows {
			if r[4] != "follower" || !strings.Contains(r[6], "leaked") {
				t.Errorf("run %s (%s, %s) is listed", r[1], r[4], r[6])
			}
		}
		if strings.Count(page, `class="actor-grid"`) != 1 {
			t.Error("the actor filter leaves more than one grid")
		}
		// An unknown value is said, not only "0 runs match".
		for q, want := range map[string]string{
			"/?domain=nope":            `No run has domain &#34;nope&#34;: the filter matches nothing (domains: finance, support).`,
			"/?config=PatchOptic":      `No run has config &#34;PatchOptic&#34;`,
			"/?actor=gpt&outcome=lost": `No run has outcome &#34;lost&#34;`,
			"/?round=3":                `No run has round &#34;3&#34;: the filter matches nothing (rounds: 1, 2).`,
			"/?mechanism=bribe":        `No run has mechanism &#34;bribe&#34;`,
		} {
			if _, page := get(t, srv, q); !strings.Contains(page, want) || !strings.Contains(page, `role="alert"`) {
				t.Errorf("%s: the page does not say %s", q, want)
			}
		}
		if _, page := get(t, srv, "/?domain=support&round=2&actor=follower&config=patchoptic&outcome=passed"); strings.Contains(page, "unknown-filter") {
			t.Error("known filter values are called unknown")
		}
		_, page = get(t, srv, "/?domain=support&round=2")
		for _, r := range runRowRE.FindAllStringSubmatch(page, -1) {
			if r[2] != "support" || r[5] != "2" {
				t.Errorf("run %s is listed under domain=support&round=2", r[1])
			}
		}
		for _, r := range gridRowRE.FindAllStringSubmatch(page, -1) {
			if r[2] != "support" {
				t.Errorf("grid row %s is shown under domain=support", r[1])
			}
		}
		// A cell of one round shows no count.
		if strings.Contains(page, `class="n"`) {
			t.Error("a cell counts rounds under round=2")
		}
		_, page = get(t, srv, "/?q=fin-expense-review/PatchOptic")
		for _, r := range runRowRE.FindAllStringSubmatch(page, -1) {
			if !strings.HasPrefix(r[1], "fin-expense-review/patchoptic/") {
				t.Errorf("run %s matches the search for fin-expense-review/PatchOptic", r[1])
			}
		}
		// A search that names a run goes to its page.
		resp, _ := get(t, srv, "/?q=fin-expense-review/PatchOptic/oversharer/1")
		if resp.StatusCode != http.StatusSeeOther || resp.Header.Get("Location") != "/run/fin-expense-review/patchoptic/oversharer/1" {
			t.Errorf("searching a run id: %s to %q", resp.Status, resp.Header.Get("Location"))
		}
	})

	t.Run("every run page withholds the secrets", func(t *testing.T) {
		for _, id := range b.RunIDs() {
			resp, page := get(t, srv, "/run/"+id)
			if resp.StatusCode != 200 {
				t.Fatalf("%s: %s", id, resp.Status)
			}
			for _, s := range secrets {
				if strings.Contains(page, s) || strings.Contains(page, html.EscapeString(s)) {
					t.Errorf("%s: secret %q is in the page", id, s)
				}
			}
			if strings.Contains(page, "The replay stopped") || strings.Contains(page, "replayed final state differs") {
				t.Errorf("%s: the replay does not give the recorded states", id)
			}
		}
	})

	t.Run("a leaked run", func(t *testing.T) {
		const id = "fin-expense-review/unconstrained/oversharer/1"
		_, page := get(t, srv, "/run/"+id)
		leaks := regexp.MustCompile(`<mark class="leak" data-secret="([^"]+)" data-detector="([^"]+)"`).FindAllStringSubmatch(page, -1)
		found := map[string]bool{}
		for _, l := range leaks {
			found[l[1]+" "+l[2]] = true
		}
		for _, want := range []string{"corporate-card-pan exact", "reimbursement-iban exact", "resubmit-link-token exact"} {
			if !found[want] {
				t.Errorf("no leak marked for %s (marked: %v)", want, found)
			}
		}
		if !strings.Contains(page, "‹hidden value›") {
			t.Error("no hidden location is marked")
		}
		// The first step's hidden strings, found from the view the
		// runtime projects, are not in the pages of runs whose actor
		// quotes everything it was shown.
		for _, id := range []string{id, "sup-account-recovery/unconstrained/oversharer/1"} {
			_, page := get(t, srv, "/run/"+id)
			c := caseByID(t, strings.Split(id, "/")[0])
			hidden := hiddenLeaves(c, c.Steps[0])
			if len(hidden) < 3 {
				t.Fatalf("%s: only %d hidden strings to look for", id, len(hidden))
			}
			for _, s := range hidden {
				if strings.Contains(page, html.EscapeString(s)) {
					t.Errorf("%s: hidden value %q is in the page", id, s)
				}
			}
		}
		resp, revealed := get(t, srv, "/run/"+id+"?reveal=1")
		if resp.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("a revealed page may be cached: %q", resp.Header.Get("Cache-Control"))
		}
		for _, s := range canaries(t, "fin-expense-review") {
			if !strings.Contains(revealed, html.EscapeString(s)) {
				t.Errorf("secret %q is not in the revealed page", s)
			}
		}
		// The same run in the other configurations.
		for _, cfg := range []string{"schema-only", "patchoptic"} {
			if !strings.Contains(page, `href="/run/fin-expense-review/`+cfg+`/oversharer/1"`) {
				t.Errorf("no link to the run under %s", cfg)
			}
		}
	})

	t.Run("errors and assets", func(t *testing.T) {
		resp, page := get(t, srv, "/run/fin-expense-review/nope/reference/1")
		if resp.StatusCode != 404 || !strings.Contains(page, "/run/fin-expense-review/unconstrained/reference/1") {
			t.Errorf("an unknown run: %s", resp.Status)
		}
		if resp, _ := get(t, srv, "/nope"); resp.StatusCode != 404 {
			t.Errorf("/nope: %s", resp.Status)
		}
		for path, ct := range map[string]string{"/assets/style.css": "text/css", "/assets/browse.js": "text/javascript"} {
			resp, body := get(t, srv, path)
			if resp.StatusCode != 200 || !strings.HasPrefix(resp.Header.Get("Content-Type"), ct) || len(body) == 0 {
				t.Errorf("%s: %s %s", path, resp.Status, resp.Header.Get("Content-Type"))
			}
		}
	})
}

func caseByID(t *testing.T, id string) *bench.Case {
	t.Helper()
	all, _ := suite()
	for _, c := range all {
		if c.ID == id {
			return c
		}
	}
	t.Fatalf("no case %s", id)
	return nil
}

// hiddenLeaves are the strings of 8 bytes or more of a case's initial
// state that runtime.View leaves out of a step's view and that the view,
// the member names and the step's texts do not show elsewhere: found
// independently of the masker.
func hiddenLeaves(c *bench.Case, st *bench.Step) []string {
	view := st.Contract.View(c.State)
	shownText, _ := runtime.EncodeIndent(view, "")
	all, _ := runtime.EncodeIndent(c.State.Value(), "")
	shown := string(shownText) + strings.Join(stepTexts(st), " ")
	var out []string
	var walk func(v any, p runtime.Pointer)
	walk = func(v any, p runtime.Pointer) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				shown += " " + k
				walk(e, p.Append(k))
			}
		case []any:
			for i, e := range x {
				walk(e, p.Append(strconv.Itoa(i)))
			}
		case string:
			if _, ok := runtime.Lookup(view, p); !ok && len(x) >= 8 {
				out = append(out, x)
			}
		}
	}
	walk(c.State.Value(), nil)
	var keep []string
	for _, s := range out {
		if !strings.Contains(shown, s) && strings.Contains(string(all), s) {
			keep = append(keep, s)
		}
	}
	return keep
}

func TestReplayedStates(t *testing.T) {
	dir := makeRun(t, testCases, []string{"reference", "follower"}, 1)
	b := openRun(t, dir)
	for _, id := range b.RunIDs() {
		p, err := b.loadRun(context.Background(), id, true)
		if err != nil {
			t.Fatal(err)
		}
		if !p.Replayed || len(p.Notes) > 0 {
			t.Errorf("%s: replayed %v, notes %q", id, p.Replayed, p.Notes)
		}
		for _, st := range p.Steps {
			if st.State == nil && !st.NotReached {
				t.Errorf("%s step %s: no state before it", id, st.ID)
			}
		}
	}
	// A two-step run: the second step's state is the first's after its
	// commit (the phase moved as the case says).
	p, err := b.loadRun(context.Background(), "sup-account-recovery/patchoptic/reference/1", true)
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Steps) != 2 || p.Steps[0].Result != "committed" || !strings.Contains(segText(p.Steps[1].State), `"phase": "decision"`) {
		t.Errorf("the second step's state is not the first's after it:\n%s", segText(p.Steps[1].State))
	}
}

// TestEarlierAttempts: a step rejected twice shows its first attempt
// (response, decisions) before the last, and the rejection's code.
func TestEarlierAttempts(t *testing.T) {
	dir := makeRunAttempts(t, testCases[:1], []string{"follower"}, 1, 2)
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	_, page := get(t, srv, "/run/fin-expense-review/patchoptic/follower/1")
	for _, want := range []string{"<summary>Attempt 1: rejected", `<span class="result r-rejected">rejected</span>`, "2 attempts", "Response (attempt 2)", "<code>source_outside_region</code>", "✗ rejected"} {
		if !strings.Contains(page, want) {
			t.Errorf("the page of a step rejected twice lacks %q", want)
		}
	}
	for _, s := range canaries(t, testCases[0]) {
		if strings.Contains(page, html.EscapeString(s)) {
			t.Errorf("secret %q is in the page", s)
		}
	}
}

// TestConversation: a step of the tools protocol shows its turns, each
// read with its pointer and whether it lay inside the view, and the
// results masked as any text is.
func TestConversation(t *testing.T) {
	dir := makeRunProtocol(t, testCases[:1], []string{"follower"}, 1, 1, runner.ProtocolTools)
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	for _, cfg := range []string{"patchoptic", "unconstrained"} {
		_, page := get(t, srv, "/run/fin-expense-review/"+cfg+"/follower/1")
		for _, want := range []string{"Conversation: 2 turns", "<code>read_state</code>", "<code>propose_patch</code>"} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", cfg, want)
			}
		}
		if hidden := strings.Contains(page, "hidden from the view: answered as absent"); hidden != (cfg == "patchoptic") {
			t.Errorf("%s: a hidden read shown: %v", cfg, hidden)
		}
		for _, s := range canaries(t, testCases[0]) {
			if strings.Contains(page, html.EscapeString(s)) {
				t.Errorf("%s: secret %q is in the page", cfg, s)
			}
		}
	}
}

func TestSeveralDirectories(t *testing.T) {
	ref := makeRun(t, testCases[:1], []string{"reference"}, 1)
	over := makeRun(t, testCases[:1], []string{"oversharer"}, 1)
	b := openRun(t, ref, over)
	if diff := cmp.Diff([]string{"reference", "oversharer"}, b.actors); diff != "" {
		t.Errorf("actors (-want +got):\n%s", diff)
	}
	if b.Runs() != 12 || len(b.Summary().Rows) != 12 {
		t.Errorf("%d runs, %d rows; want 12 of each", b.Runs(), len(b.Summary().Rows))
	}
	// The same actor on two dates: each run is named with its directory.
	again := makeRun(t, testCases[:1], []string{"reference"}, 1)
	b = openRun(t, ref, again)
	names := map[string]bool{}
	for _, id := range b.RunIDs() {
		names[strings.Split(id, "/")[2]] = true
	}
	if len(names) != 2 || b.Runs() != 12 {
		t.Errorf("actors %v in %d runs; want two names of reference", names, b.Runs())
	}
	for _, id := range b.RunIDs() {
		if _, err := b.loadRun(context.Background(), id, false); err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	// Other cases: refused, with the difference named.
	other := makeRun(t, testCases[1:], []string{"reference"}, 1)
	if _, err := Open([]string{ref, other}, Options{}); err == nil || !strings.Contains(err.Error(), "cannot be read as one comparison") {
		t.Errorf("directories of other case sets: %v", err)
	}
	if _, err := Open([]string{ref}, Options{Baseline: "nope"}); err == nil || !strings.Contains(err.Error(), `no configuration "nope"`) {
		t.Errorf("an unknown baseline: %v", err)
	}
	if _, err := Open([]string{t.TempDir()}, Options{}); err == nil || !strings.Contains(err.Error(), "is not a run directory") {
		t.Errorf("not a run directory: %v", err)
	}
}

func TestCaseSetMissing(t *testing.T) {
	dir := makeRun(t, testCases[:1], []string{"oversharer"}, 1)
	m, err := rundir.ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	m.CaseSet = filepath.Join(t.TempDir(), "gone")
	if err := rundir.WriteJSON(dir, rundir.ManifestFile, m); err != nil {
		t.Fatal(err)
	}
	var warned []string
	b, err := Open([]string{dir}, Options{Warn: func(msg string) { warned = append(warned, msg) }})
	if err != nil {
		t.Fatal(err)
	}
	if w := b.Warnings(); len(w) != 1 || !strings.Contains(w[0], "does not load") || !slices.Equal(w, warned) {
		t.Errorf("warnings %q, told %q", w, warned)
	}
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	_, page := get(t, srv, "/run/fin-expense-review/unconstrained/oversharer/1")
	_, revealed := get(t, srv, "/run/fin-expense-review/unconstrained/oversharer/1?reveal=1")
	for _, s := range canaries(t, "fin-expense-review") {
		if strings.Contains(page, html.EscapeString(s)) {
			t.Errorf("secret %q is in the page of a run whose case is not known", s)
		}
	}
	if !strings.Contains(page, "is not in the case set") || !strings.Contains(revealed, "5412 7590 3381 2264") {
		t.Error("the page of a run whose case is not known says nothing, or does not reveal")
	}
}

// TestHeadsSummary checks that the summary built from the index's heads
// is the one built from whole records (rundir.Read), as the index
// promises.
func TestHeadsSummary(t *testing.T) {
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 2)
	b := openRun(t, dir)
	d, err := rundir.Read(dir)
	if err != nil {
		t.Fatal(err)
	}
	s := report.NewSummarizer(b.configs, b.actors)
	if err := d.Each(func(r *rundir.Record) error { s.Add(r); return nil }); err != nil {
		t.Fatal(err)
	}
	want := s.Summary()
	want.RunsExpected, want.Complete = b.expected, true
	if diff := cmp.Diff(want, b.Summary()); diff != "" {
		t.Errorf("summary from the heads (-whole records +heads):\n%s", diff)
	}
}

// BenchmarkOpen opens a run directory: $PATCHBENCH_BROWSE_DIR (a 20-round
// directory of the default benchmark, say), or a small one made here.
// The case sets that load in the background afterwards are not timed.
func BenchmarkOpen(b *testing.B) {
	dir := benchDir(b)
	if fi, err := os.Stat(filepath.Join(dir, rundir.RunsFile)); err == nil {
		b.SetBytes(fi.Size())
	}
	for b.Loop() {
		br, err := Open([]string{dir}, Options{})
		if err != nil {
			b.Fatal(err)
		}
		b.StopTimer()
		br.Warnings() // the case sets are loaded before the next open
		b.StartTimer()
	}
}

// BenchmarkRunPage renders run pages of the same directory, one run after
// another, as the server does.
func BenchmarkRunPage(b *testing.B) {
	br, err := Open([]string{benchDir(b)}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	br.Warnings() // the case sets are loaded
	h := br.Handler()
	ids := br.RunIDs()
	i := 0
	for b.Loop() {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, httptest.NewRequest("GET", "/run/"+ids[i%len(ids)], nil))
		if rec.Code != 200 {
			b.Fatalf("%s: %d", ids[i%len(ids)], rec.Code)
		}
		i += 7919 // a prime: pages spread through the file
	}
}

func benchDir(b *testing.B) string {
	if dir := os.Getenv("PATCHBENCH_BROWSE_DIR"); dir != "" {
		return dir
	}
	return makeRun(b, testCases, []string{"reference", "oversharer", "follower"}, 5)
}

// TestAllowHosts checks which Host headers AllowHosts serves for servers
// on a loopback address, on a named host and on every interface.
func TestAllowHosts(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	for _, tc := range []struct {
		addr, host string
		want       int
	}{
		{"127.0.0.1:8484", "127.0.0.1:8484", 200},
		{"127.0.0.1:8484", "localhost:8484", 200},
		{"127.0.0.1:8484", "LOCALHOST.:8484", 200},
		{"127.0.0.1:8484", "app.localhost:8484", 200},
		{"127.0.0.1:8484", "[::1]:8484", 200},
		{"127.0.0.1:8484", "127.0.0.1:8485", 403},
		{"127.0.0.1:8484", "127.0.0.1", 403},
		{"127.0.0.1:8484", "attacker.example:8484", 403},
		{"127.0.0.1:8484", "localhost.attacker.example:8484", 403},
		{"127.0.0.1:8484", "", 403},
		{"0.0.0.0:8484", "192.0.2.7:8484", 200},
		{"0.0.0.0:8484", "attacker.example:8484", 403},
		{"192.0.2.7:8484", "192.0.2.7:8484", 200},
		{"192.0.2.7:8484", "localhost:8484", 403},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.Host = tc.host
		w := httptest.NewRecorder()
		AllowHosts(ok, tc.addr).ServeHTTP(w, r)
		if w.Code != tc.want {
			t.Errorf("listening on %s, Host %q: %d, want %d", tc.addr, tc.host, w.Code, tc.want)
		}
	}
	// An absolute-form request target takes its host from the URL, whatever
	// the Host header says (it used to be served); it is refused.
	r := httptest.NewRequest("GET", "http://127.0.0.1:8484/run/x?reveal=1", nil)
	r.Host = "127.0.0.1:8484"
	w := httptest.NewRecorder()
	AllowHosts(ok, "127.0.0.1:8484").ServeHTTP(w, r)
	if w.Code != http.StatusForbidden {
		t.Errorf("absolute-form request: %d, want 403", w.Code)
	}
}

// TestServerScaleFilter: a directory of runs at two scales lists each
// run once (a grown run's id names its scale), offers a scale filter and
// a Scale column, and ?scale=200KB keeps the runs at 200KB only: in the
// run list, the main table and the grids' cells.
func TestServerScaleFilter(t *testing.T) {
	dir := makeRunScales(t, []string{"mkt-crm-segment-export", "fin-expense-review"}, []string{"reference"}, []string{"1x", "200KB"})
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	// 6 configurations: the growing case at both scales, the other once.
	if b.Runs() != 18 {
		t.Fatalf("%d runs; want 18 (6 configurations x 3 case runs)", b.Runs())
	}
	_, page := get(t, srv, "/")
	if !strings.Contains(page, `<select name="scale"><option value="">all</option><option>1x</option><option>200KB</option></select>`) {
		t.Error("the overview offers no scale filter of 1x and 200KB")
	}
	if !strings.Contains(page, `<th scope="col">Scale</th>`) {
		t.Error("the main table has no Scale column")
	}
	_, page = get(t, srv, "/?scale=200KB")
	rows := runRowRE.FindAllStringSubmatch(page, -1)
	if len(rows) != 6 {
		t.Errorf("%d runs listed at 200KB, want 6", len(rows))
	}
	for _, r := range rows {
		if !strings.HasSuffix(r[1], "@200KB") {
			t.Errorf("run %s is listed at 200KB", r[1])
		}
	}
	if n := strings.Count(page, `data-scale="1x" hidden`); n == 0 {
		t.Error("no main-table row at 1x is hidden under scale=200KB")
	}
	// The grid keeps the growing case's row only.
	for _, m := range gridRowRE.FindAllStringSubmatch(page, -1) {
		if m[1] != "mkt-crm-segment-export" {
			t.Errorf("grid row %s shown at 200KB", m[1])
		}
	}
	if u := b.UnknownFilters(url.Values{"scale": {"10MB"}}); len(u) != 1 || !strings.Contains(u[0], `scale "10MB"`) {
		t.Errorf("unknown scale: %q", u)
	}
}
