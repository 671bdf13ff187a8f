package actors

import (
	"context"
	"errors"
	"io"
	"net/http"
	"testing"
)

func TestCachedAnswersOnce(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(`{"patch": []}`, 100, 10, 0))
	})
	dir := t.TempDir()
	live := newTestActor(t, "openai:test-model", s.URL, Params{})
	c := &Cached{Actor: live, Dir: dir}
	req := testReq
	req.Round, req.Attempt = 1, 1
	first, err := c.Propose(context.Background(), req)
	if err != nil || first.Cached {
		t.Fatal(first, err)
	}
	second, err := c.Propose(context.Background(), req)
	if err != nil || !second.Cached || second.Raw != first.Raw || *second.Usage != *first.Usage || second.Latency != first.Latency.Truncate(1e6) {
		t.Fatalf("second: %+v %v", second, err)
	}
	if s.calls.Load() != 1 {
		t.Errorf("%d requests, want 1", s.calls.Load())
	}
	// Another round is another request: rounds stay independent.
	req.Round = 2
	if _, err := c.Propose(context.Background(), req); err != nil {
		t.Fatal(err)
	}
	if s.calls.Load() != 2 {
		t.Errorf("%d requests after a new round, want 2", s.calls.Load())
	}
	// Replaying offline: hits answer, a miss is ErrCacheMiss and sends nothing.
	only := &Cached{Actor: live, Dir: dir, Only: true}
	if r, err := only.Propose(context.Background(), req); err != nil || !r.Cached {
		t.Fatal(r, err)
	}
	req.Round = 3
	if _, err := only.Propose(context.Background(), req); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("miss: %v", err)
	}
	if s.calls.Load() != 2 {
		t.Errorf("cache-only sent a request")
	}
	// Another temperature is another key.
	temp := 0.7
	other := &Cached{Actor: newTestActor(t, "openai:test-model", s.URL, Params{Temperature: &temp}), Dir: dir, Only: true}
	req.Round = 1
	if _, err := other.Propose(context.Background(), req); !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("a different temperature hit the cache: %v", err)
	}
}

// An empty answer (a 200 holding an error) is not cached.
func TestCacheKeepsNoEmptyAnswer(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, `{"error": {"message": "quota", "type": "insufficient_quota"}}`)
	})
	c := &Cached{Actor: newTestActor(t, "openai:m", s.URL, Params{}), Dir: t.TempDir()}
	for i := 0; i < 2; i++ {
		if r, err := c.Propose(context.Background(), testReq); err == nil && r.Cached {
			t.Fatalf("attempt %d: an empty answer came from the cache", i+1)
		}
	}
	if s.calls.Load() != 2 {
		t.Errorf("%d requests, want 2 (nothing cached)", s.calls.Load())
	}
}
