package actors

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
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

// TestCacheOneRequestPerKey: 64 goroutines ask the same 16 requests in
// different orders through one fresh cache, as a run at --concurrency 64
// does (the four full-state configurations send the same prompts). Every
// distinct request reaches the provider exactly once: the cache is
// checked again inside the shared flight, so a request that missed just
// before another flight finished finds that flight's answer.
func TestCacheOneRequestPerKey(t *testing.T) {
	const workers, keys = 64, 16
	var mu sync.Mutex
	perBody := map[string]int{}
	s := newChatServer(t, func(w http.ResponseWriter, body map[string]any, _ int) {
		b, _ := json.Marshal(body["messages"])
		mu.Lock()
		perBody[string(b)]++
		mu.Unlock()
		time.Sleep(time.Millisecond)
		io.WriteString(w, completion(`{"patch": [], "note": "ok"}`, 10, 5, 0))
	})
	c := &Cached{Actor: newTestActor(t, "openai:m", s.URL, Params{}), Dir: t.TempDir()}
	// A goroutine that missed the cache is sometimes descheduled before
	// it joins the flight, as on a loaded machine: by then the flight it
	// would have joined may have ended.
	var n atomic.Int32
	afterMiss = func() {
		if n.Add(1)%3 == 0 {
			time.Sleep(2 * time.Millisecond)
		}
	}
	defer func() { afterMiss = func() {} }()
	var wg sync.WaitGroup
	var failed atomic.Int32
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < keys; i++ {
				k := (i*7 + w) % keys // each worker its own order
				req := Request{Round: 1, Attempt: 1, Messages: []Message{{Role: "user", Content: fmt.Sprintf("task %d", k)}}}
				if _, err := c.Propose(context.Background(), req); err != nil {
					failed.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d requests failed", failed.Load())
	}
	dups := 0
	for body, n := range perBody {
		if n != 1 {
			dups += n - 1
			t.Errorf("%s sent %d times", body, n)
		}
	}
	if len(perBody) != keys {
		t.Errorf("%d distinct requests sent, want %d", len(perBody), keys)
	}
	t.Logf("%d distinct requests, %d requests sent, %d duplicates", len(perBody), s.calls.Load(), dups)
}

// TestCacheWriteFailureKeepsTheAnswer: a response cache that cannot be
// written (here a file stands where its directory should be; a full disk
// fails the same way) never turns an answer already paid for into an
// error: the answer is returned, and OnWriteError says what failed.
func TestCacheWriteFailureKeepsTheAnswer(t *testing.T) {
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(`{"patch": [], "note": "paid for"}`, 10, 5, 0))
	})
	blocked := filepath.Join(t.TempDir(), "cache")
	if err := os.WriteFile(blocked, []byte("not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	var warned []error
	c := &Cached{Actor: newTestActor(t, "openai:m", s.URL, Params{}), Dir: blocked, OnWriteError: func(err error) { warned = append(warned, err) }}
	r, err := c.Propose(context.Background(), testReq)
	if err != nil || r.Raw != `{"patch": [], "note": "paid for"}` || r.Cached {
		t.Fatalf("%+v %v", r, err)
	}
	if len(warned) != 1 || !strings.HasPrefix(warned[0].Error(), "response cache: writing "+blocked+"/") {
		t.Errorf("warnings %v", warned)
	}
}
