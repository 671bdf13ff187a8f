package browse

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"html"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// bundle is the data of a single file, decoded as its script decodes it.
type bundle struct {
	Version int               `json:"version"`
	T       []json.RawMessage `json:"t"`
	Reveal  bool              `json:"reveal"`
	Configs []bundleConfig    `json:"configs"`
	Actors  []string          `json:"actors"`
	Cases   map[string]bundleCase
	Runs    [][]json.RawMessage `json:"runs"`
	// text is the decoded JSON document.
	text string
}

// decodeBundle finds the data element of a single file and decodes it:
// base64, gzip, JSON.
func decodeBundle(t *testing.T, page string) *bundle {
	t.Helper()
	const open = `<script type="application/octet-stream" id="pb-data" data-encoding="gzip+base64">`
	i := strings.Index(page, open)
	if i < 0 {
		t.Fatal("the file has no data element")
	}
	rest := page[i+len(open):]
	j := strings.Index(rest, "</script>")
	if j < 0 {
		t.Fatal("the data element is not closed")
	}
	z, err := base64.StdEncoding.DecodeString(rest[:j])
	if err != nil {
		t.Fatalf("the data is not base64: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(z))
	if err != nil {
		t.Fatalf("the data is not gzip: %v", err)
	}
	text, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	var d bundle
	if err := json.Unmarshal(text, &d); err != nil {
		t.Fatalf("the data is not JSON: %v", err)
	}
	d.text = string(text)
	return &d
}

func writeBundle(t *testing.T, b *Browser, o BundleOptions) (string, *bundle) {
	t.Helper()
	var buf strings.Builder
	if err := b.WriteBundle(&buf, o); err != nil {
		t.Fatal(err)
	}
	return buf.String(), decodeBundle(t, buf.String())
}

// TestWriteBundle checks the single file without Reveal: every run listed in the overview
// and in the data, no secret in the file or in its decoded data, nothing
// fetched from anywhere, and every value of the data's table written once.
func TestWriteBundle(t *testing.T) {
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 1)
	b := openRun(t, dir)
	page, d := writeBundle(t, b, BundleOptions{})
	listed := map[string]bool{}
	for _, r := range d.Runs {
		var id string
		json.Unmarshal(r[0], &id)
		listed[id] = true
		var body int
		json.Unmarshal(r[8], &body)
		if body <= 0 || body >= len(d.T) {
			t.Errorf("run %s: body %d is not in the table (%d values)", id, body, len(d.T))
		}
	}
	for _, id := range b.RunIDs() {
		if !listed[id] {
			t.Errorf("run %s is not in the data", id)
		}
		if !strings.Contains(page, `href="#run-`+id+`"`) {
			t.Errorf("no link to run %s", id)
		}
	}
	if len(listed) != b.Runs() {
		t.Errorf("%d runs in the data, %d in the comparison", len(listed), b.Runs())
	}
	for _, s := range canaries(t, testCases...) {
		if strings.Contains(page, s) || strings.Contains(page, html.EscapeString(s)) {
			t.Errorf("secret %q is in the file", s)
		}
		if strings.Contains(d.text, s) || strings.Contains(d.text, jsonEscape(s)) {
			t.Errorf("secret %q is in the file's data", s)
		}
	}
	if !strings.Contains(d.text, `{"l":"`) {
		t.Error("the data marks no leaked canary")
	}
	if d.Reveal || strings.Contains(d.text, `"t":`) && strings.Contains(d.text, `{"h":"value","t":`) {
		t.Error("the data holds revealed values")
	}
	seen := map[string]bool{}
	for i, v := range d.T {
		if seen[string(v)] {
			t.Errorf("the table holds value %d twice: %.80s", i, v)
		}
		seen[string(v)] = true
	}
	// Self-contained: no stylesheet, script or image from anywhere.
	for _, bad := range []string{"<link", "<script src", "<img", "@import", "?reveal=1"} {
		if strings.Contains(page, bad) {
			t.Errorf("the file holds %q", bad)
		}
	}
	if !strings.Contains(page, "<style>") || !strings.Contains(page, "<script>") || !strings.Contains(page, `data-mode="static"`) {
		t.Error("the file lacks its inline style or script")
	}
}

// TestWriteBundleReveal checks that a file written with Reveal holds the
// hidden values and the leaked canaries, and says so.
func TestWriteBundleReveal(t *testing.T) {
	dir := makeRun(t, testCases, []string{"oversharer"}, 1)
	b := openRun(t, dir)
	page, d := writeBundle(t, b, BundleOptions{Reveal: true})
	if !d.Reveal || !strings.Contains(page, `data-reveal="1"`) {
		t.Error("a revealed file does not say so")
	}
	found := 0
	for _, s := range canaries(t, testCases...) {
		if strings.Contains(d.text, jsonEscape(s)) || strings.Contains(d.text, s) {
			found++
		}
	}
	if found == 0 {
		t.Error("no secret in a revealed file's data")
	}
	if !strings.Contains(d.text, `{"h":"value","t":`) {
		t.Error("no hidden value revealed in the data")
	}
}

// TestBundleRepeatsStoredOnce checks that runs which repeat (the no-model
// actors answer alike in every round) add nothing to the table but their
// entries: three rounds hold the values of one.
func TestBundleRepeatsStoredOnce(t *testing.T) {
	actors := []string{"reference", "oversharer", "follower"}
	_, one := writeBundle(t, openRun(t, makeRun(t, testCases, actors, 1)), BundleOptions{})
	_, three := writeBundle(t, openRun(t, makeRun(t, testCases, actors, 3)), BundleOptions{})
	if len(three.Runs) != 3*len(one.Runs) {
		t.Fatalf("%d runs in three rounds, %d in one", len(three.Runs), len(one.Runs))
	}
	if len(three.T) != len(one.T) {
		t.Errorf("the table holds %d values for three rounds, %d for one: repeats are stored again", len(three.T), len(one.T))
	}
}

// TestPageMemo checks that the pages the single file is built from, which
// share masked texts, states and diffs through a pageMemo, are the pages
// built one at a time, withheld and revealed.
func TestPageMemo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds every page of a run twice, withheld and revealed")
	}
	dir := makeRun(t, testCases, []string{"reference", "oversharer", "follower"}, 2)
	b := openRun(t, dir)
	for _, reveal := range []bool{false, true} {
		memo := newPageMemo()
		for _, id := range b.RunIDs() {
			want, err := b.loadRun(context.Background(), id, reveal)
			if err != nil {
				t.Fatal(err)
			}
			got, err := b.loadRunMemo(context.Background(), id, reveal, memo)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s (reveal %v): the page built with the memo differs (-alone +memo):\n%s", id, reveal, diff)
			}
		}
	}
}

// BenchmarkWriteBundle writes the single file of the same directory as
// BenchmarkOpen ($PATCHBENCH_BROWSE_DIR, or a small one made here); the
// file's size is reported as bytes/file.
func BenchmarkWriteBundle(b *testing.B) {
	br, err := Open([]string{benchDir(b)}, Options{})
	if err != nil {
		b.Fatal(err)
	}
	br.Warnings()
	var n countWriter
	for b.Loop() {
		n = 0
		if err := br.WriteBundle(&n, BundleOptions{}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(n), "bytes/file")
}

type countWriter int64

func (c *countWriter) Write(p []byte) (int, error) {
	*c += countWriter(len(p))
	return len(p), nil
}
