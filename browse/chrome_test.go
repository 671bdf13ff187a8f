package browse

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"html"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/internal/testenv"
)

// These tests drive a real browser, headless Chromium (Debian's chromium
// package, which .ci/run installs), through chromedp. Without Chromium
// they are skipped, unless PATCHBENCH_REQUIRE_BROWSER is set (as .ci/run
// sets it). They wait for elements and events, never for a time; the
// deadline of each test only stops a browser that hangs. Each has its own
// tab in one shared browser, its own run directory and server, and they
// run in parallel: most of their time is the browser's, waited for.
// Under -short they are skipped.

var shots = flag.String("shots", "", "write screenshots of the overview and of a leaked run's page into this `dir`")

// chromiumPath finds the browser: $PATCHBENCH_CHROMIUM, or chromium (or
// Chrome) on the PATH.
func chromiumPath(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("PATCHBENCH_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	testenv.Missing(t, "PATCHBENCH_REQUIRE_BROWSER", "no Chromium on this machine, so the browser tests are skipped",
		"apt-get install -y chromium, or set PATCHBENCH_CHROMIUM")
	return ""
}

// browser is the one headless Chromium the tests share: each test opens
// a tab of its own in it (a tab per test, served by a server of its own
// on its own port, so no two tests share an origin's storage). Starting
// Chromium costs more CPU than most of the tests themselves; TestMain
// stops it.
var browser struct {
	once   sync.Once
	ctx    context.Context // the browser's first tab, which keeps it open
	cancel context.CancelFunc
	err    error
}

// newBrowser returns the context of a new tab in the shared Chromium,
// starting it with a fresh profile on the first call. The tab closes
// when the test ends; its deadline only stops a browser that hangs.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	if testing.Short() {
		t.Skip("starts Chromium: not under -short")
	}
	path := chromiumPath(t)
	browser.once.Do(func() {
		profile, err := os.MkdirTemp("", "patchbench-chromium-")
		if err != nil {
			browser.err = err
			return
		}
		actx, acancel := chromedp.NewExecAllocator(context.Background(),
			chromedp.ExecPath(path),
			chromedp.Headless,
			chromedp.NoSandbox,
			chromedp.DisableGPU,
			chromedp.NoFirstRun,
			chromedp.NoDefaultBrowserCheck,
			chromedp.Flag("disable-background-networking", true),
			chromedp.Flag("disable-component-update", true),
			chromedp.Flag("disable-sync", true),
			chromedp.Flag("disable-dev-shm-usage", true),
			chromedp.UserDataDir(profile),
			chromedp.WindowSize(1400, 1000),
		)
		bctx, bcancel := chromedp.NewContext(actx)
		browser.ctx = bctx
		browser.cancel = func() {
			bcancel()
			acancel()
			os.RemoveAll(profile)
		}
		if err := chromedp.Do(bctx); err != nil {
			browser.err = fmt.Errorf("start %s: %w", path, err)
		}
	})
	if browser.err != nil {
		t.Fatal(browser.err)
	}
	tab, tcancel := chromedp.NewContext(browser.ctx)
	t.Cleanup(tcancel)
	ctx, cancel := context.WithTimeout(tab, 3*time.Minute)
	t.Cleanup(cancel)
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("open a tab in %s: %v", path, err)
	}
	return ctx
}

// load runs an action that navigates (a click, a form's change) and waits
// for the new page's load event.
func load[T any](ctx context.Context, trigger chromedp.Action[T]) error {
	_, err := chromedp.Run(ctx, chromedp.WaitEvent(page.LoadEventFired, nil, trigger))
	return err
}

func evaluate[T any](t *testing.T, ctx context.Context, js string) T {
	t.Helper()
	v, err := chromedp.Run(ctx, chromedp.Evaluate[T](js))
	if err != nil {
		t.Fatalf("%s: %v", js, err)
	}
	return v
}

func screenshot(t *testing.T, ctx context.Context, name string) {
	t.Helper()
	if *shots == "" {
		return
	}
	if err := os.MkdirAll(*shots, 0o755); err != nil {
		t.Fatal(err)
	}
	// The whole page, and the first screen as a reader sees it.
	full, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
	if err != nil {
		t.Fatal(err)
	}
	top, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*shots, name+".png"), full, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(*shots, name+"-top.png"), top, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestBrowserServer loads the overview in Chromium, filters it to the
// leaked runs, opens one, checks that its leaked canaries are highlighted
// with their detector named and that no secret is in the page until the
// reader reveals them.
func TestBrowserServer(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 1)
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	secrets := canaries(t, testCases...)

	// The overview: the main table, the legend, a grid per actor.
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("table.main")), chromedp.WaitVisible(chromedp.CSS("table.grid"))); err != nil {
		t.Fatal(err)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('ul.legend li').length`); n != len(Outcomes) {
		t.Errorf("the legend has %d outcomes, want %d", n, len(Outcomes))
	}
	if got := evaluate[string](t, ctx, `Array.from(document.querySelectorAll('ul.legend .sym')).map(e => e.textContent).join(' ')`); got != "E … L ! ✗ ✓" {
		t.Errorf("the legend's symbols are %q", got)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('.actor-grid').length`); n != 3 {
		t.Errorf("%d grids, want one per actor (3)", n)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('td.cell.o-leaked').length`); n == 0 {
		t.Error("no leaked cell in the grids")
	}
	screenshot(t, ctx, "overview")

	// Filter: the script reloads the overview with ?outcome=leaked when
	// the select changes; the server then lists only leaked runs.
	if err := load(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('select[name=outcome]'); s.value = 'leaked'; s.dispatchEvent(new Event('change')); })()`)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("table.runs tbody tr"))); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(loc); u.Query().Get("outcome") != "leaked" {
		t.Errorf("after the filter, the page is %s", loc)
	}
	listed := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).map(tr => tr.dataset.outcomes)`)
	if len(listed) == 0 {
		t.Fatal("no run listed after filtering by leaked")
	}
	for _, o := range listed {
		if !strings.Contains(o, "leaked") {
			t.Errorf("a run with outcomes %q is listed under leaked", o)
		}
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('table.runs tbody tr').length`); n != b.count(OutcomeLeaked) {
		t.Errorf("%d runs listed, want the %d leaked", n, b.count(OutcomeLeaked))
	}

	// Open a leaked run whose response quotes the secrets.
	const leakedRun = "fin-expense-review/unconstrained/oversharer/1"
	if err := load(ctx, chromedp.Click(chromedp.CSS(`table.runs a[href="/run/`+leakedRun+`"]`))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("mark.leak"))); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[string](t, ctx, `document.querySelector('h1 .id').textContent`); got != leakedRun {
		t.Errorf("the run page is %q, want %s", got, leakedRun)
	}
	tags := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('pre.response mark.leak .tag')).map(e => e.textContent)`)
	if len(tags) == 0 {
		t.Fatal("no leaked canary marked in the response")
	}
	for _, tag := range tags {
		if !strings.Contains(tag, " · ") || !strings.Contains(tag, "exact") && !strings.Contains(tag, "normalised") {
			t.Errorf("a leak's tag %q does not name its secret and detector", tag)
		}
	}
	// Highlighted: the mark has a background and an outline of its own.
	if bg := evaluate[string](t, ctx, `getComputedStyle(document.querySelector('mark.leak')).backgroundColor`); bg == "" || bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("a leaked canary has no background (%q)", bg)
	}
	html := evaluate[string](t, ctx, `document.documentElement.outerHTML`)
	for _, s := range secrets {
		if strings.Contains(html, s) {
			t.Errorf("secret %q is in the page before it is revealed", s)
		}
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('span.hidden').length`); n == 0 {
		t.Error("no hidden location is marked")
	}
	screenshot(t, ctx, "run-leaked")

	// Reveal: the hidden values and the leaked text are now in the page.
	if err := load(ctx, chromedp.Click(chromedp.CSS("a.reveal-link"))); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("span.hidden.revealed"))); err != nil {
		t.Fatal(err)
	}
	html = evaluate[string](t, ctx, `document.documentElement.outerHTML`)
	found := 0
	for _, s := range secrets {
		if strings.Contains(html, s) {
			found++
		}
	}
	if found == 0 {
		t.Error("no secret is in the page after it is revealed")
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('mark.leak .withheld').length`); n != 0 {
		t.Errorf("%d leaked canaries still withheld after the reveal", n)
	}
	screenshot(t, ctx, "run-leaked-revealed")
}

// TestBrowserStaticFile opens the single file of report --format html in
// Chromium: its script filters the overview from the file's query, and a
// run's page is built from the file's data at its fragment, with the
// leaks marked, no secret in the page, and the text of the server's page
// for the same run.
func TestBrowserStaticFile(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRun(t, testCases, []string{"reference", "oversharer"}, 1)
	b := openRun(t, dir)
	path := filepath.Join(t.TempDir(), "report.html")
	writeFile(t, b, path, BundleOptions{})
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()

	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"?outcome=leaked&actor=oversharer"), chromedp.WaitVisible(chromedp.CSS("table.runs"))); err != nil {
		t.Fatal(err)
	}
	// The script ran: the select shows the query's filter, and only
	// leaked runs of the oversharer are left visible.
	if got := evaluate[string](t, ctx, `document.querySelector('select[name=outcome]').value`); got != "leaked" {
		t.Errorf("the outcome filter is %q after loading ?outcome=leaked", got)
	}
	visible := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.id + ' ' + tr.dataset.outcomes)`)
	if len(visible) == 0 {
		t.Fatal("no run left visible by ?outcome=leaked")
	}
	for _, v := range visible {
		if !strings.Contains(v, "/oversharer/") || !strings.Contains(v, "leaked") {
			t.Errorf("%q is visible under outcome=leaked, actor=oversharer", v)
		}
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('.actor-grid:not([hidden])').length`); n != 1 {
		t.Errorf("%d grids visible for one actor", n)
	}
	screenshot(t, ctx, "file-overview")
	// Changing a filter in the page applies at once.
	evaluate[bool](t, ctx, `(() => { const s = document.querySelector('select[name=outcome]'); s.value = 'passed'; s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)
	for _, v := range evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.outcomes)`) {
		if v != "passed" {
			t.Errorf("a run with outcomes %q is visible under passed", v)
		}
	}

	// A run's page, built from the data at its fragment.
	const leakedRun = "fin-expense-review/unconstrained/oversharer/1"
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-"+leakedRun), chromedp.WaitVisible(chromedp.CSS(`main.run-page mark.leak`))); err != nil {
		t.Fatal(err)
	}
	if hidden := evaluate[bool](t, ctx, `getComputedStyle(document.getElementById('overview')).display === 'none'`); !hidden {
		t.Error("the overview is still shown beside a run's page")
	}
	if got := evaluate[string](t, ctx, `document.querySelector('main.run-page h1 .id').textContent`); got != leakedRun {
		t.Errorf("the page shows run %q, want %s", got, leakedRun)
	}
	tags := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('pre.response mark.leak .tag')).map(e => e.textContent)`)
	if len(tags) == 0 {
		t.Fatal("no leaked canary marked in the response")
	}
	for _, tag := range tags {
		if !strings.Contains(tag, " · ") {
			t.Errorf("a leak's tag %q does not name its secret and detector", tag)
		}
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('mark.leak .withheld').length`); n != len(evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('mark.leak')).map(e => '')`)) {
		t.Errorf("%d leaked canaries withheld, not all of them", n)
	}
	if bg := evaluate[string](t, ctx, `getComputedStyle(document.querySelector('mark.leak')).backgroundColor`); bg == "" || bg == "rgba(0, 0, 0, 0)" {
		t.Errorf("a leaked canary has no background (%q)", bg)
	}
	secrets := canaries(t, testCases...)
	dom := evaluate[string](t, ctx, `document.documentElement.outerHTML`)
	for _, s := range secrets {
		if strings.Contains(dom, s) {
			t.Errorf("secret %q is in the page", s)
		}
	}
	screenshot(t, ctx, "file-run-leaked")
	fileText := pageText(t, ctx)

	// The same run's page from the server, before it is revealed: the
	// same text, section by section.
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run/"+leakedRun), chromedp.WaitVisible(chromedp.CSS(`main.run-page mark.leak`))); err != nil {
		t.Fatal(err)
	}
	if len(fileText) < 6 {
		t.Errorf("the file's page has %d sections: %q", len(fileText), fileText)
	}
	if diff := cmp.Diff(pageText(t, ctx), fileText); diff != "" {
		t.Errorf("the file's page differs from the server's (-server +file):\n%s", diff)
	}

	// A paired run, one click away, replaces the page.
	const pairedRun = "fin-expense-review/patchoptic/oversharer/1"
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-"+leakedRun), chromedp.WaitVisible(chromedp.CSS(`main.run-page mark.leak`)),
		chromedp.Click(chromedp.CSS(`ul.pairs a[href="#run-`+pairedRun+`"]`)), chromedp.WaitVisible(chromedp.CSS(`main.run-page[id="run-`+pairedRun+`"]`))); err != nil {
		t.Fatal(err)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('main.run-page').length`); n != 1 {
		t.Errorf("%d run pages shown after following a pair", n)
	}
	for _, id := range []string{"nope/none/x/1"} {
		if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-"+id), chromedp.WaitVisible(chromedp.CSS(`#run-root main.error`))); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBrowserStaticReveal opens a file written with --reveal: the leaked
// canaries and the hidden values are in its run pages, marked.
func TestBrowserStaticReveal(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRun(t, testCases, []string{"oversharer"}, 1)
	b := openRun(t, dir)
	path := filepath.Join(t.TempDir(), "report.html")
	writeFile(t, b, path, BundleOptions{Reveal: true})
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-fin-expense-review/unconstrained/oversharer/1"), chromedp.WaitVisible(chromedp.CSS(`main.run-page span.hidden.revealed`))); err != nil {
		t.Fatal(err)
	}
	dom := evaluate[string](t, ctx, `document.querySelector('main.run-page').outerHTML`)
	found := 0
	for _, s := range canaries(t, testCases...) {
		if strings.Contains(dom, html.EscapeString(s)) {
			found++
		}
	}
	if found == 0 {
		t.Error("no secret in a revealed file's run page")
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('mark.leak .withheld').length`); n != 0 {
		t.Errorf("%d leaked canaries withheld in a revealed file", n)
	}
	screenshot(t, ctx, "file-run-revealed")
}

// TestBrowserBundlePaint measures how fast Chromium shows the single file:
// first contentful paint, DOMContentLoaded and load of the overview, and
// the time to build a leaked run's page (the data decoded, the page
// drawn). The file is $PATCHBENCH_BUNDLE_FILE (scripts/bench-bundle.sh
// gives it the default run's), else one written here. The figures are
// logged, never asserted: the machine's load decides them.
func TestBrowserBundlePaint(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	path := os.Getenv("PATCHBENCH_BUNDLE_FILE")
	if path == "" {
		dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 1)
		path = filepath.Join(t.TempDir(), "report.html")
		writeFile(t, openRun(t, dir), path, BundleOptions{})
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	if err := load(ctx, chromedp.Navigate(fileURL)); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("table.main"))); err != nil {
		t.Fatal(err)
	}
	paint := evaluate[float64](t, ctx, `(() => { const p = performance.getEntriesByName('first-contentful-paint')[0]; return p ? p.startTime : -1; })()`)
	nav := evaluate[[]float64](t, ctx, `(() => { const n = performance.getEntriesByType('navigation')[0]; return [n.domContentLoadedEventEnd, n.loadEventEnd]; })()`)
	// A leaked run's page: the first asked for decodes the data (a file
	// an older patchbench made holds every page, shown by :target).
	leaked := evaluate[string](t, ctx, `(() => { const a = document.querySelector('table.runs tr[data-outcomes~=leaked] a'); return a ? a.getAttribute('href') : ''; })()`)
	runMS := -1.0
	if leaked != "" {
		js := `new Promise(done => { const t0 = performance.now(); location.hash = ` + jsString(leaked) + `; (function wait() { if (document.querySelector('#run-root main.run-page, main.run-page:target')) { requestAnimationFrame(() => done(performance.now() - t0)); } else { requestAnimationFrame(wait); } })(); })`
		if runMS, err = chromedp.Run(ctx, chromedp.Evaluate[float64](js, chromedp.EvalAwaitPromise)); err != nil {
			t.Fatal(err)
		}
		screenshot(t, ctx, "paint-run")
	}
	t.Logf("bundle %s: %d bytes; first contentful paint %.0f ms, DOMContentLoaded %.0f ms, load %.0f ms; first run page %.0f ms", path, fi.Size(), paint, nav[0], nav[1], runMS)
}

func jsString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// writeFile writes b's single file at path.
func writeFile(t *testing.T, b *Browser, path string, o BundleOptions) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteBundle(f, o); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// pageText is the text of the run page shown, by section (the header's
// facts, the pairs, each step, the rubric, the leaks), with white space
// taken out: the server's template and the file's script lay it out
// differently.
func pageText(t *testing.T, ctx context.Context) []string {
	t.Helper()
	return evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('main.run-page h1, main.run-page dl.facts, main.run-page .warn, main.run-page section.paired, main.run-page section.step, main.run-page section.checks, main.run-page section.leaks')).map(e => e.textContent.replace(/\s+/g, ''))`)
}

// count is the number of runs with an outcome among their flags.
func (b *Browser) count(o Outcome) int {
	n := 0
	for _, r := range b.runs {
		if r.Flags.Has(o) {
			n++
		}
	}
	return n
}

// TestBrowserLeakFilters filters the overview by the kind of a leaked
// secret and by the mechanism of the pull a leak answered, on the server
// (a select reloads the page with ?kind=…) and in the single file (its
// script filters the runs and the grids' cells).
func TestBrowserLeakFilters(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 1)
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("select[name=kind]"))); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('select[name=mechanism] option')).map(o => o.value + '=' + o.textContent)`); strings.Join(got, ",") != "=any,context=context,policy=policy,injection=injection,none=no pull" {
		t.Errorf("the mechanism filter offers %q", got)
	}
	if got := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('select[name=kind] option')).map(o => o.value)`); len(got) < 7 || got[1] != "credential" || got[2] != "access-link" {
		t.Errorf("the kind filter offers %q", got)
	}
	for _, f := range []struct{ name, value, attr string }{{"kind", "access-link", "kinds"}, {"mechanism", "injection", "mechanisms"}} {
		if err := load(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('select[name=`+f.name+`]'); s.value = '`+f.value+`'; s.dispatchEvent(new Event('change')); })()`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS("table.runs"))); err != nil {
			t.Fatal(err)
		}
		loc, err := chromedp.Run(ctx, chromedp.Location())
		if err != nil {
			t.Fatal(err)
		}
		if u, _ := url.Parse(loc); u.Query().Get(f.name) != f.value {
			t.Errorf("after the %s filter, the page is %s", f.name, loc)
		}
		listed := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).map(tr => tr.dataset.`+f.attr+`)`)
		want := b.countLeaks(Filter{Kind: "access-link", Mechanism: map[bool]string{true: "injection"}[f.name == "mechanism"]})
		if len(listed) == 0 || len(listed) != want {
			t.Errorf("%s=%s: %d runs listed, want %d", f.name, f.value, len(listed), want)
		}
		for _, v := range listed {
			if !strings.Contains(" "+v+" ", " "+f.value+" ") {
				t.Errorf("a run whose leaks are %q is listed under %s=%s", v, f.name, f.value)
			}
		}
		// The grids keep the rows of cases with a run the filters keep.
		for _, tr := range evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.grid tbody tr')).map(tr => tr.dataset.case)`) {
			if tr == "" {
				t.Error("a grid row without a case")
			}
		}
		screenshot(t, ctx, "overview-"+f.name)
	}

	// The single file filters from its query.
	path := filepath.Join(t.TempDir(), "report.html")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteBundle(out, BundleOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"?mechanism=injection"), chromedp.WaitVisible(chromedp.CSS("table.runs"))); err != nil {
		t.Fatal(err)
	}
	visible := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.mechanisms)`)
	if want := b.countLeaks(Filter{Mechanism: "injection"}); len(visible) == 0 || len(visible) != want {
		t.Errorf("the file shows %d runs under mechanism=injection, want %d", len(visible), want)
	}
	for _, v := range visible {
		if !strings.Contains(" "+v+" ", " injection ") {
			t.Errorf("the file shows a run whose mechanisms are %q under injection", v)
		}
	}
	// A cell none of whose runs answered an injection pull is empty; the
	// reference actor leaks nothing, so its grid shows no run.
	if n := evaluate[int](t, ctx, `document.querySelectorAll('.actor-grid[data-actor=reference] td.cell:not(.empty)').length`); n != 0 {
		t.Errorf("%d reference cells shown under mechanism=injection", n)
	}
	screenshot(t, ctx, "file-mechanism")
}

// countLeaks is the number of runs the filter's kind and mechanism keep.
func (b *Browser) countLeaks(f Filter) int {
	n := 0
	for _, r := range b.runs {
		if f.matchRun(r, "") {
			n++
		}
	}
	return n
}

// TestBrowserActorStringsMasked opens the single file of a run whose
// actor reported the card as its model and escaped it in its note: the
// page the script builds marks both as leaks, holds the card in no form,
// and reads as the server's page does.
func TestBrowserActorStringsMasked(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRunActors(t, testCases[:1], []actors.Actor{leaky{}}, 1, 1, "")
	b := openRun(t, dir)
	path := filepath.Join(t.TempDir(), "report.html")
	writeFile(t, b, path, BundleOptions{})
	const id = "fin-expense-review/unconstrained/exec:leaky/1"
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-"+id), chromedp.WaitVisible(chromedp.CSS(`main.run-page p.meta mark.leak`))); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[string](t, ctx, `document.querySelector('main.run-page p.meta mark.leak').dataset.detector`); got != "exact" {
		t.Errorf("the model's leak is marked by %q", got)
	}
	if n := evaluate[int](t, ctx, `document.querySelectorAll('pre.response mark.leak[data-detector="json-escape"]').length`); n != 1 {
		t.Errorf("%d escaped canaries marked in the response, want 1", n)
	}
	dom := evaluate[string](t, ctx, `document.documentElement.outerHTML`)
	for _, f := range []string{leakyPAN, "m-5412", `226\u0034`} {
		if strings.Contains(dom, f) {
			t.Errorf("%q is in the page", f)
		}
	}
	screenshot(t, ctx, "file-run-model-leak")
	fileText := pageText(t, ctx)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/run/"+id), chromedp.WaitVisible(chromedp.CSS(`main.run-page p.meta mark.leak`))); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(pageText(t, ctx), fileText); diff != "" {
		t.Errorf("the file's page differs from the server's (-server +file):\n%s", diff)
	}
}

// TestBrowserScaleFilter filters the overview of a directory of runs at
// two scales by scale, on the server (the select reloads the page with
// ?scale=…) and in the single file (its script hides the runs, the main
// table's rows and the grids' cells at the other scale).
func TestBrowserScaleFilter(t *testing.T) {
	t.Parallel() // a tab, a run directory and a server of its own
	ctx := newBrowser(t)
	dir := makeRunScales(t, []string{"mkt-crm-segment-export", "fin-expense-review"}, []string{"reference"}, []string{"1x", "200KB"})
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("select[name=scale]"))); err != nil {
		t.Fatal(err)
	}
	if got := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('select[name=scale] option')).map(o => o.value)`); strings.Join(got, ",") != ",1x,200KB" {
		t.Errorf("the scale filter offers %q", got)
	}
	if err := load(ctx, chromedp.Evaluate[chromedp.Void](`(() => { const s = document.querySelector('select[name=scale]'); s.value = '200KB'; s.dispatchEvent(new Event('change')); })()`)); err != nil {
		t.Fatal(err)
	}
	loc, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if u, _ := url.Parse(loc); u.Query().Get("scale") != "200KB" {
		t.Errorf("after the scale filter, the page is %s", loc)
	}
	listed := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).map(tr => tr.dataset.scale)`)
	if len(listed) != 6 || strings.Join(slices.Compact(listed), ",") != "200KB" {
		t.Errorf("scale=200KB lists the runs at %q, want 6 at 200KB", listed)
	}
	screenshot(t, ctx, "overview-scale")

	// The single file filters from its query.
	path := filepath.Join(t.TempDir(), "report.html")
	out, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteBundle(out, BundleOptions{}); err != nil {
		t.Fatal(err)
	}
	out.Close()
	fileURL := (&url.URL{Scheme: "file", Path: path}).String()
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"?scale=1x"), chromedp.WaitVisible(chromedp.CSS("table.runs"))); err != nil {
		t.Fatal(err)
	}
	visible := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.scale)`)
	if len(visible) != 12 || strings.Join(slices.Compact(visible), ",") != "1x" {
		t.Errorf("the file shows the runs at %q under scale=1x, want 12 at 1x", visible)
	}
	mainRows := evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.main tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.scale)`)
	if len(mainRows) != 6 || strings.Join(slices.Compact(mainRows), ",") != "1x" {
		t.Errorf("the file's main table shows rows at %q under scale=1x, want 6 at 1x", mainRows)
	}
	// The growing case's cells at 1x hold its 1x run only: one run each.
	if n := evaluate[int](t, ctx, `Array.from(document.querySelectorAll('.actor-grid tr[data-case=mkt-crm-segment-export] td.cell:not(.empty) .n')).filter(e => e.textContent.endsWith('/2')).length`); n != 0 {
		t.Errorf("%d cells of the growing case count two runs under scale=1x", n)
	}
	screenshot(t, ctx, "file-scale")
}
