package browse

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"golang.org/x/sync/semaphore"
)

// TestInTurnDropsAbandonedRequests checks that a request waiting for a
// turn to make its page is dropped, unanswered and its page not made,
// when its client goes, and that a request is served once a turn is free
// (pages of clients long gone kept the server busy 50 s).
func TestInTurnDropsAbandonedRequests(t *testing.T) {
	p := &pages{turns: make(chan struct{}, 1), pending: semaphore.NewWeighted(4), budget: 4}
	turns := p.turns
	made := 0
	h := p.inTurn(func(w http.ResponseWriter, r *http.Request) { made++; w.Write([]byte("page")) })
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
	// Pages waiting to be written past the budget (a client that does
	// not read holds it): the next page is made, not written, and its
	// request is dropped when its client goes.
	p.pending.Acquire(context.Background(), 4)
	ctx, cancel = context.WithCancel(context.Background())
	rec = httptest.NewRecorder()
	done = make(chan struct{})
	go func() {
		h(rec, httptest.NewRequest("GET", "/", nil).WithContext(ctx))
		close(done)
	}()
	cancel()
	<-done
	if rec.Body.Len() != 0 || len(turns) != 0 {
		t.Errorf("past the budget: body %q, %d turns held", rec.Body, len(turns))
	}
	p.pending.Release(4)
	rec = httptest.NewRecorder()
	h(rec, httptest.NewRequest("GET", "/", nil))
	if rec.Body.String() != "page" || rec.Code != http.StatusOK {
		t.Errorf("within the budget again: %d %q", rec.Code, rec.Body)
	}
}
