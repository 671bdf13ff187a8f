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
	_, err = only.Propose(context.Background(), req)
	if !errors.Is(err, ErrCacheMiss) {
		t.Fatalf("miss: %v", err)
	}
	// The miss names what its key was made with: the base URL is part
	// of it, so a replay under another one misses every request.
	if want := "the key was made with base URL " + strings.ToLower(s.URL) + "/v1, model test-model"; !strings.Contains(err.Error(), want) {
		t.Errorf("miss: %v, want %q", err, want)
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

// bigAnswer is a valid proposal of n bytes (a long note).
func bigAnswer(n int) string {
	head, tail := `{"patch": [], "note": "`, `"}`
	return head + strings.Repeat("x", n-len(head)-len(tail)) + tail
}

// cachedAt is a cache over dir of an actor whose answer limit is limit.
func cachedAt(t *testing.T, url, dir string, limit int64, only bool) *Cached {
	return &Cached{Actor: newTestActor(t, "openai:m", url, Params{MaxAnswerBytes: limit}), Dir: dir, Only: only, MaxAnswerBytes: limit}
}

// TestCacheAnswerLimit: an answer of 1.5 MiB read under a 1 MiB limit is
// cached clipped; a run with a 4 MiB limit does not replay it clipped
// (which would fail the step with limit_exceeded) but asks again, and
// under --cache-only refuses, naming the entry and the step. The whole
// answer cached then serves a 4 MiB run whole and a 1 MiB run clipped.
func TestCacheAnswerLimit(t *testing.T) {
	const size = 1573199
	answer := bigAnswer(size)
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(answer, 100, 10, 0))
	})
	dir := t.TempDir()
	req := testReq
	req.Round, req.Attempt, req.StepID = 1, 1, "s1"
	ctx := context.Background()
	small, large := int64(1<<20), int64(4<<20)

	r, err := cachedAt(t, s.URL, dir, small, false).Propose(ctx, req)
	if err != nil || r.Oversize != size || r.Cached {
		t.Fatalf("1 MiB run: oversize %d cached %v, %v", r.Oversize, r.Cached, err)
	}
	// Replayed to the same limit, or a smaller one: clipped, from the cache.
	for _, limit := range []int64{small, small / 2} {
		r, err = cachedAt(t, s.URL, dir, limit, true).Propose(ctx, req)
		if err != nil || !r.Cached || r.Oversize != size {
			t.Fatalf("limit %d, cache-only: oversize %d cached %v, %v", limit, r.Oversize, r.Cached, err)
		}
	}
	// A larger limit under --cache-only: refused, naming the entry and the step.
	_, err = cachedAt(t, s.URL, dir, large, true).Propose(ctx, req)
	var ce *CutError
	if !errors.As(err, &ce) || !errors.Is(err, ErrCacheMiss) || ce.Limit != small || ce.Bytes != size || ce.RunLimit != large ||
		ce.Step != "s1" || !strings.Contains(err.Error(), ce.Entry) || !strings.HasPrefix(ce.Entry, dir) {
		t.Fatalf("4 MiB cache-only run: %v", err)
	}
	if s.calls.Load() != 1 {
		t.Fatalf("%d requests, want 1", s.calls.Load())
	}
	// A larger limit: asked again, read whole.
	r, err = cachedAt(t, s.URL, dir, large, false).Propose(ctx, req)
	if err != nil || r.Cached || r.Oversize != 0 || r.Raw != answer {
		t.Fatalf("4 MiB run: oversize %d cached %v %d bytes, %v", r.Oversize, r.Cached, len(r.Raw), err)
	}
	if s.calls.Load() != 2 {
		t.Fatalf("%d requests, want 2 (the clipped entry asked again)", s.calls.Load())
	}
	// The whole answer serves every limit: whole at or above its size,
	// clipped below it.
	for _, limit := range []int64{large, size} {
		r, err = cachedAt(t, s.URL, dir, limit, true).Propose(ctx, req)
		if err != nil || !r.Cached || r.Oversize != 0 || r.Raw != answer {
			t.Fatalf("limit %d after the whole answer: oversize %d cached %v, %v", limit, r.Oversize, r.Cached, err)
		}
	}
	r, err = cachedAt(t, s.URL, dir, small, true).Propose(ctx, req)
	if err != nil || !r.Cached || r.Oversize != size || int64(len(r.Raw)) != small {
		t.Fatalf("1 MiB run after the whole answer: oversize %d, %d bytes kept, %v", r.Oversize, len(r.Raw), err)
	}
}

// TestCacheOldEntryWithoutCut: an entry written before the answer limit
// was recorded (no "cut" member) is still read: one not clipped serves
// every limit; one clipped serves the limits that would clip it too and
// is asked again by a run whose limit would read it whole.
func TestCacheOldEntryWithoutCut(t *testing.T) {
	const size = 1573199
	answer := bigAnswer(size)
	s := newChatServer(t, func(w http.ResponseWriter, _ map[string]any, _ int) {
		io.WriteString(w, completion(answer, 100, 10, 0))
	})
	ctx := context.Background()
	// stripCut removes the "cut" member of the one entry under dir.
	stripCut := func(dir string) {
		t.Helper()
		paths, _ := filepath.Glob(filepath.Join(dir, "*", "*.json"))
		if len(paths) != 1 {
			t.Fatalf("entries %v", paths)
		}
		b, err := os.ReadFile(paths[0])
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		if _, ok := m["cut"]; !ok {
			t.Fatalf("entry without cut: %.200s", b)
		}
		delete(m, "cut")
		b, _ = json.Marshal(m)
		if err := os.WriteFile(paths[0], b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	clipped := t.TempDir()
	if _, err := cachedAt(t, s.URL, clipped, 1<<20, false).Propose(ctx, testReq); err != nil {
		t.Fatal(err)
	}
	stripCut(clipped)
	if r, err := cachedAt(t, s.URL, clipped, 1<<20, true).Propose(ctx, testReq); err != nil || r.Oversize != size {
		t.Fatalf("old clipped entry, 1 MiB: oversize %d, %v", r.Oversize, err)
	}
	var ce *CutError
	if _, err := cachedAt(t, s.URL, clipped, size, true).Propose(ctx, testReq); !errors.As(err, &ce) || ce.Limit != 0 ||
		!strings.Contains(err.Error(), "a limit it does not record") {
		t.Fatalf("old clipped entry, a limit of its size, cache-only: %v", err)
	}
	whole := t.TempDir()
	if _, err := cachedAt(t, s.URL, whole, 4<<20, false).Propose(ctx, testReq); err != nil {
		t.Fatal(err)
	}
	stripCut(whole)
	if r, err := cachedAt(t, s.URL, whole, 2<<20, true).Propose(ctx, testReq); err != nil || r.Oversize != 0 || r.Raw != answer {
		t.Fatalf("old whole entry, 2 MiB: oversize %d, %v", r.Oversize, err)
	}
	if r, err := cachedAt(t, s.URL, whole, 1<<20, true).Propose(ctx, testReq); err != nil || r.Oversize != size {
		t.Fatalf("old whole entry, 1 MiB: oversize %d, %v", r.Oversize, err)
	}
	if s.calls.Load() != 2 {
		t.Errorf("%d requests, want 2", s.calls.Load())
	}
}
