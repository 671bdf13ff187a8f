package browse

import (
	"context"
	"flag"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/patchbench/patchbench/internal/testenv"
)

// These tests drive a real browser, headless Chromium (Debian's chromium
// package, which .ci/run installs), through chromedp. Without Chromium
// they are skipped, unless PATCHBENCH_REQUIRE_BROWSER is set (as .ci/run
// sets it). They wait for elements and events, never for a time; the
// deadline of each test only stops a browser that hangs.

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

// newBrowser starts headless Chromium with a fresh profile and returns a
// tab's context.
func newBrowser(t *testing.T) context.Context {
	t.Helper()
	path := chromiumPath(t)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	actx, acancel := chromedp.NewExecAllocator(ctx,
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
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	t.Cleanup(acancel)
	tab, tcancel := chromedp.NewContext(actx)
	t.Cleanup(tcancel)
	if err := chromedp.Do(tab); err != nil {
		t.Fatalf("start %s: %v", path, err)
	}
	return tab
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
// run's page is shown from its fragment, with the leaks marked and no
// secret in the file.
func TestBrowserStaticFile(t *testing.T) {
	ctx := newBrowser(t)
	dir := makeRun(t, testCases, []string{"reference", "oversharer"}, 1)
	b := openRun(t, dir)
	path := filepath.Join(t.TempDir(), "report.html")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteHTML(f); err != nil {
		t.Fatal(err)
	}
	f.Close()
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
	// Changing a filter in the page applies at once.
	evaluate[bool](t, ctx, `(() => { const s = document.querySelector('select[name=outcome]'); s.value = 'passed'; s.dispatchEvent(new Event('change', {bubbles: true})); return true; })()`)
	for _, v := range evaluate[[]string](t, ctx, `Array.from(document.querySelectorAll('table.runs tbody tr')).filter(tr => !tr.hidden).map(tr => tr.dataset.outcomes)`) {
		if v != "passed" {
			t.Errorf("a run with outcomes %q is visible under passed", v)
		}
	}

	// A run's page, from its fragment.
	const leakedRun = "fin-expense-review/unconstrained/oversharer/1"
	if err := chromedp.Do(ctx, chromedp.Navigate(fileURL+"#run-"+leakedRun), chromedp.WaitVisible(chromedp.CSS(`main.run-page:target mark.leak`))); err != nil {
		t.Fatal(err)
	}
	if hidden := evaluate[bool](t, ctx, `getComputedStyle(document.getElementById('overview')).display === 'none'`); !hidden {
		t.Error("the overview is still shown beside a run's page")
	}
	b2, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range canaries(t, testCases...) {
		if strings.Contains(string(b2), s) {
			t.Errorf("secret %q is in the file", s)
		}
	}
}

// count is the number of runs with an outcome among their flags.
func (b *B) count(o Outcome) int {
	n := 0
	for _, r := range b.runs {
		if r.Flags.Has(o) {
			n++
		}
	}
	return n
}
