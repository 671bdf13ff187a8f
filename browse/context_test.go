package browse

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/runspec"
)

// TestStepEndedWithoutTurns: a step of the json protocol whose prompt
// passed the actor's context budget says so on its run's page, and the
// overview's tools table counts it.
func TestStepEndedWithoutTurns(t *testing.T) {
	a, err := actors.New("reference", actors.Params{})
	if err != nil {
		t.Fatal(err)
	}
	dir := makeRunSpec(t, testCases[:1], []actors.Actor{a}, runspec.Spec{Rounds: 1, MaxAttempts: 1, ContextTokens: 100})
	b := openRun(t, dir)
	srv := httptest.NewServer(b.Handler())
	defer srv.Close()
	_, page := get(t, srv, "/run/fin-expense-review/patchoptic/reference/1")
	if want := "Ended without a commit: <code>context_exceeded</code>"; !strings.Contains(page, want) {
		t.Errorf("the run's page lacks %q", want)
	}
	_, page = get(t, srv, "/")
	if want := "context_exceeded 1"; !strings.Contains(page, want) {
		t.Errorf("the overview lacks %q: %s", want, page)
	}
}
