package browse

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestInTurnDropsAbandonedRequests checks that a request waiting for a
// turn to make its page is dropped, unanswered and its page not made,
// when its client goes, and that a request is served once a turn is free
// (issue 23: pages of clients long gone kept the server busy 50 s).
func TestInTurnDropsAbandonedRequests(t *testing.T) {
	turns := make(chan struct{}, 1)
	made := 0
	h := inTurn(turns, func(w http.ResponseWriter, r *http.Request) { made++; w.Write([]byte("page")) })
	turns <- struct{}{} // every turn taken
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	rec := httptest.NewRecorder()
	go func() {
		h(rec, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		close(done)
	}()
	cancel()
	<-done
	if made != 0 || rec.Body.Len() != 0 {
		t.Errorf("an abandoned request was served: %d pages, body %q", made, rec.Body)
	}
	<-turns
	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/", nil))
	if made != 1 || rec.Body.String() != "page" || len(turns) != 0 {
		t.Errorf("a free turn: %d pages, body %q, %d turns held", made, rec.Body, len(turns))
	}
	// A client gone before its turn came is not served either.
	ctx, cancel = context.WithCancel(context.Background())
	cancel()
	h(httptest.NewRecorder(), httptest.NewRequest("GET", "/", nil).WithContext(ctx))
	if made != 1 {
		t.Errorf("a request whose client had gone was served")
	}
}
