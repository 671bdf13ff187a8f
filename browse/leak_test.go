package browse

import (
	"context"
	"encoding/json"
	"html"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
)

// leaky answers with the reference patch and a note quoting the card
// number with its last digit as a JSON escape, and reports a model whose
// name carries the card: strings that browse once showed unmasked.
type leaky struct{}

const leakyPAN = "5412 7590 3381 2264" // fin-expense-review's corporate card

func (leaky) Name() string { return "exec:leaky" }

func (leaky) Propose(_ context.Context, req actors.Request) (actors.Response, error) {
	var ref struct {
		Patch json.RawMessage `json:"patch"`
	}
	if err := json.Unmarshal(req.Reference, &ref); err != nil {
		return actors.Response{}, err
	}
	raw := `{"patch": ` + string(ref.Patch) + `, "note": "card on file: 5412 7590 3381 226\u0034"}`
	return actors.Response{Raw: raw, Model: "m-" + leakyPAN}, nil
}

// The model name and an escaped canary an actor sent are withheld from
// its run pages, served and in the single file, marked as leaks, and the
// leak in the model is listed by where it was found.
func TestActorStringsMasked(t *testing.T) {
	dir := makeRunActors(t, testCases[:1], []actors.Actor{leaky{}}, 1, 1, "")
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	forms := []string{leakyPAN, "5412 7590 3381 226\\u0034", "m-5412"}
	check := func(where, page string) {
		t.Helper()
		for _, f := range forms {
			if strings.Contains(page, f) || strings.Contains(page, html.EscapeString(f)) {
				t.Errorf("%s: %q is in the page", where, f)
			}
		}
	}
	ids := b.RunIDs()
	if len(ids) != 6 {
		t.Fatalf("%d runs", len(ids))
	}
	for _, id := range ids {
		_, page := get(t, srv, "/run/"+id)
		check(id, page)
		for _, want := range []string{
			`model m-<mark class="leak" data-secret="corporate-card-pan" data-detector="exact"`,
			`data-secret="corporate-card-pan" data-detector="json-escape"`,
			"corporate-card-pan in the model name reported at step",
		} {
			if !strings.Contains(page, want) {
				t.Errorf("%s: the page lacks %q", id, want)
			}
		}
		// Revealed, the served page shows them, marked.
		_, page = get(t, srv, "/run/"+id+"?reveal=1")
		if !strings.Contains(page, `title="leaked canary corporate-card-pan, found by the exact detector">`+leakyPAN) {
			t.Errorf("%s: the revealed page lacks the model name", id)
		}
	}
	page, d := writeBundle(t, b, BundleOptions{})
	check("the single file", page)
	for _, f := range forms {
		if strings.Contains(d.text, jsonEscape(f)) {
			t.Errorf("the single file's data holds %q", f)
		}
	}
	if !strings.Contains(d.text, `["m-",{"l":"corporate-card-pan","d":"exact"}]`) {
		t.Error("the single file's data does not mark the model's leak")
	}
	if !strings.Contains(d.text, `{"l":"corporate-card-pan","d":"json-escape"}`) {
		t.Error("the single file's data does not mark the escaped card")
	}
}
