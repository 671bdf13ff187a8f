package actors

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sync/singleflight"
)

// Keyer is a live actor whose answers can be cached: CacheKey describes
// everything that decides an answer (provider, base URL, model, sampling
// parameters) for one request; the cache adds the messages and the round.
type Keyer interface {
	CacheKey() map[string]any
}

// ErrCacheMiss is the error of a cache-only actor asked something its
// cache does not hold, or holds only cut shorter than the run's answer
// limit allows (*CutError wraps it).
var ErrCacheMiss = errors.New("not in the response cache (--cache-only)")

// CutError is a cache-only actor's refusal of an entry whose answer was
// clipped at a smaller answer limit than the run's: the run would read
// the whole answer, which the entry no longer holds. It wraps
// ErrCacheMiss. Its message names the actor and the entry; the runner's
// names the step.
type CutError struct {
	Actor, Step string
	// Entry is the entry's file; Limit the answer limit it was cut at
	// (0: not recorded, an older entry), Bytes the answer's full length,
	// RunLimit the run's limit (bytes).
	Entry                  string
	Limit, Bytes, RunLimit int64
}

func (e *CutError) Error() string {
	at := fmt.Sprintf("the limit %d", e.Limit)
	if e.Limit == 0 {
		at = "a limit it does not record (an older entry)"
	}
	return fmt.Sprintf("%s: the response cache entry %s holds an answer of %d bytes clipped at %s, "+
		"which this run's limit %d would read whole (run without --cache-only to ask again): %v",
		e.Actor, e.Entry, e.Bytes, at, e.RunLimit, ErrCacheMiss)
}

func (e *CutError) Unwrap() error { return ErrCacheMiss }

// Cached wraps a live actor with a response cache on disk: one JSON file
// per request, named by the SHA-256 of the request's key, holding the raw
// answer, its usage, the model, the fingerprint and the latency. A hit
// returns the recorded answer with its original usage and latency, so a
// cache shipped with a run directory reproduces it bit for bit. With Only,
// a miss is ErrCacheMiss and nothing is sent.
//
// Concurrent identical requests share one flight, and the flight reads the
// cache again before it sends: a request that missed just as another
// identical flight finished takes that flight's answer, so each distinct
// request is sent once. The cache is an optimisation: an answer that
// cannot be written to it (a full disk) is still returned, and
// OnWriteError, when set, is told why.
//
// An entry records the answer limit it was read under (cacheCut): an
// answer clipped at a limit serves runs of that limit or a smaller one
// (it would be clipped for them too), and a run of a larger limit asks
// again, so that a clipped answer is never replayed to a run that would
// have read it whole (with Only, that is a *CutError). An answer that was
// not clipped serves every run, clipped (Response.Clip) for a run whose
// limit it exceeds.
type Cached struct {
	Actor Actor
	Dir   string
	Only  bool
	// MaxAnswerBytes is the answer limit the wrapped actor clips at
	// (Params.MaxAnswerBytes; 0: DefaultMaxAnswerBytes).
	MaxAnswerBytes int64
	// OnWriteError, when set, is called (from any goroutine) with each
	// failure to keep an answer in the cache; the answer is returned
	// all the same.
	OnWriteError func(error)

	// inflight makes concurrent identical requests (the full-state
	// configurations send the same prompt) share one answer.
	inflight singleflight.Group
}

type cacheEntry struct {
	Key         json.RawMessage `json:"key"`
	Raw         string          `json:"raw"`
	Usage       *Usage          `json:"usage"`
	Model       string          `json:"model,omitempty"`
	Fingerprint string          `json:"fingerprint,omitempty"`
	LatencyMS   int64           `json:"latency_ms"`
	// AnswerBytes is an over-long answer's full length (Response.Oversize);
	// Raw is then its start.
	AnswerBytes int64 `json:"answer_bytes,omitempty"`
	// Calls are the answer's tool calls (the tools protocol).
	Calls []ToolCall `json:"calls,omitempty"`
	// Body is the answer as sent (Response.Body), so that a replayed
	// answer is scanned for leaks as the first was.
	Body string `json:"body,omitempty"`
	// Cut says how the answer was read. Entries written before it was
	// recorded have none: see cut.
	Cut *cacheCut `json:"cut,omitempty"`
}

// cacheCut is how a cached answer was read: Limit is the answer limit
// (bytes) it was read under, Clipped whether the answer text or the
// arguments of a tool call were longer and cut (Response.Clip), Bytes the
// full length of the longest of them.
type cacheCut struct {
	Limit   int64 `json:"limit"`
	Clipped bool  `json:"clipped"`
	Bytes   int64 `json:"bytes"`
}

// answerSize is the full length, in bytes, of the longest part of r (its
// text, or the arguments of one tool call) and whether any part was
// clipped.
func answerSize(r Response) (n int64, clipped bool) {
	n, clipped = max(r.Oversize, int64(len(r.Raw))), r.Oversize > 0
	for _, c := range r.Calls {
		n, clipped = max(n, c.Oversize, int64(len(c.Arguments))), clipped || c.Oversize > 0
	}
	return n, clipped
}

// cut is how the entry's answer was read. An entry without the record
// (written by an older patchbench) is judged by what it holds: one not
// clipped is whole; one clipped was cut at some limit below its full
// length, taken as the largest (Bytes-1), so that it serves the runs
// whose limit would clip it too and not those that would read it whole.
func (e *cacheEntry) cut() cacheCut {
	if e.Cut != nil {
		return *e.Cut
	}
	n, clipped := answerSize(e.response())
	c := cacheCut{Clipped: clipped, Bytes: n}
	if clipped {
		c.Limit = n - 1
	}
	return c
}

// response is the entry's answer, marked cached.
func (e *cacheEntry) response() Response {
	return Response{Raw: e.Raw, Usage: e.Usage, Model: e.Model, Fingerprint: e.Fingerprint,
		Latency: time.Duration(e.LatencyMS) * time.Millisecond, Cached: true, Oversize: e.AnswerBytes, Calls: e.Calls, Body: e.Body}
}

// Name implements Actor: the wrapped actor's name.
func (c *Cached) Name() string { return c.Actor.Name() }

// Unwrap implements Wrapper: the actor whose answers it keeps.
func (c *Cached) Unwrap() []Actor { return []Actor{c.Actor} }

// Propose implements Actor.
func (c *Cached) Propose(ctx context.Context, req Request) (Response, error) {
	k, ok := c.Actor.(Keyer)
	if !ok {
		return c.Actor.Propose(ctx, req)
	}
	km := map[string]any{"actor": k.CacheKey(), "messages": req.Messages, "round": req.Round, "attempt": req.Attempt}
	if req.Tools != nil {
		km["tools"] = req.Tools // the whole conversation is in messages
	}
	key, err := json.Marshal(km)
	if err != nil {
		return Response{}, err
	}
	sum := sha256.Sum256(key)
	name := hex.EncodeToString(sum[:])
	path := filepath.Join(c.Dir, name[:2], name+".json")
	limit := c.limit()
	resp, ok, stale := lookup(path, key, limit)
	if ok {
		return resp, nil
	}
	if c.Only {
		if stale != nil {
			return Response{}, &CutError{Actor: c.Actor.Name(), Step: req.StepID, Entry: path,
				Limit: stale.Limit, Bytes: stale.Bytes, RunLimit: limit}
		}
		return Response{}, fmt.Errorf("%s: %w; the key was made with %s (the base URL is part of the key: answers recorded from another server, or under another OPENAI_BASE_URL or OLLAMA_HOST, do not match)",
			c.Actor.Name(), ErrCacheMiss, keyMadeWith(k.CacheKey()))
	}
	afterMiss()
	sent := false
	v, err, shared := c.inflight.Do(name, func() (any, error) {
		// Checked again inside the flight: an identical flight may
		// have ended, and kept its answer, since the miss above.
		if resp, ok, _ := lookup(path, key, limit); ok {
			return resp, nil
		}
		sent = true
		start := time.Now()
		resp, err := c.Actor.Propose(ctx, req)
		if err != nil {
			return resp, err
		}
		if resp.Latency == 0 {
			resp.Latency = time.Since(start)
		}
		if resp.Raw == "" && len(resp.Calls) == 0 {
			// An empty answer (a 200 holding an error, no choices) is
			// not kept: the next run asks again.
			return resp, nil
		}
		n, clipped := answerSize(resp)
		e := cacheEntry{Key: key, Raw: resp.Raw, Usage: resp.Usage, Model: resp.Model, Fingerprint: resp.Fingerprint,
			LatencyMS: resp.Latency.Milliseconds(), AnswerBytes: resp.Oversize, Calls: resp.Calls, Body: resp.Body,
			Cut: &cacheCut{Limit: limit, Clipped: clipped, Bytes: n}}
		if err := writeAtomic(path, e); err != nil && c.OnWriteError != nil {
			// The answer is paid for: the run keeps it in its record.
			c.OnWriteError(fmt.Errorf("response cache: %w", err))
		}
		return resp, nil
	})
	resp, _ = v.(Response)
	if shared && !sent && err == nil {
		resp.Cached = true // another identical request sent it
	}
	return resp, err
}

// cacheEntryBound bounds a cache entry read for a run whose answer limit
// is limit bytes: at least maxCacheEntryBytes, and room for the entry's
// answer and body (bodyBound) escaped once more, each byte at most six
// (a control character as \u0000), so that an entry written under that
// limit is never refused as too long and fetched again.
func cacheEntryBound(limit int64) int64 {
	return max(maxCacheEntryBytes, 6*(answerLimit(limit)+bodyBound(limit)))
}

// maxCacheEntryBytes is the least bound of a cache entry read (64 MiB: an answer of at
// most 16 MiB, --max-answer-bytes's bound, escaped).
const maxCacheEntryBytes = 64 << 20

// limit is the answer limit of the wrapped actor, in bytes.
func (c *Cached) limit() int64 { return answerLimit(c.MaxAnswerBytes) }

// lookup reads the cache entry at path (a regular file of at most
// cacheEntryBound) for a run whose answer limit is limit bytes, and
// returns its answer clipped at that limit. ok is false when there is
// none, it holds another key, or its answer was clipped at a smaller
// limit than limit (stale then says how it was cut; its Limit is 0 when
// the entry does not record it).
func lookup(path string, key []byte, limit int64) (resp Response, ok bool, stale *cacheCut) {
	b, err := readLimited(path, cacheEntryBound(limit))
	if err != nil {
		return Response{}, false, nil
	}
	var e cacheEntry
	if err := json.Unmarshal(b, &e); err != nil || string(e.Key) != string(key) {
		return Response{}, false, nil
	}
	if cut := e.cut(); cut.Clipped && limit > cut.Limit {
		if e.Cut == nil {
			cut.Limit = 0 // inferred, not recorded
		}
		return Response{}, false, &cut
	}
	return e.response().Clip(limit), true, nil
}

// afterMiss runs between a cache miss and the flight; tests make it
// sleep, as a goroutine descheduled there on a loaded machine does.
var afterMiss = func() {}

// normalURL writes a base URL the same way however it was typed: lower
// case, no trailing slash.
// A password written into the URL is left out of the key (it is stored
// in every entry, and caches are shipped).
func normalURL(u string) string {
	if p, err := url.Parse(u); err == nil && p.User != nil {
		p.User = nil
		u = p.String()
	}
	return strings.TrimRight(strings.ToLower(u), "/")
}

// keyMadeWith says which server and model a cache key km (Keyer.CacheKey)
// names: "base URL http://127.0.0.1:8000/v1, model gpt-5-mini" (Ollama's
// host for a base URL; the URL without a password, as the key holds it).
func keyMadeWith(km map[string]any) string {
	what, url := "base URL", ""
	if u, ok := km["base_url"].(string); ok {
		url = u
	} else if h, ok := km["host"].(string); ok {
		what, url = "host", h
	}
	if url == "" {
		url = "unset (the provider's default)"
	}
	model, _ := km["model"].(string)
	return fmt.Sprintf("%s %s, model %s", what, url, model)
}

// writeAtomic writes v as JSON to path through a temporary file renamed
// into place, so that a crash never leaves half an entry. The error names
// path and the system's cause, not the temporary file.
func writeAtomic(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	err = os.MkdirAll(filepath.Dir(path), 0o755)
	if err == nil {
		err = writeBytesAtomic(path, b, 0o600)
	}
	if err != nil {
		var pe *os.PathError
		var le *os.LinkError
		switch {
		case errors.As(err, &pe):
			err = pe.Err
		case errors.As(err, &le):
			err = le.Err
		}
		return fmt.Errorf("writing %s: %w", path, err)
	}
	return nil
}

// writeBytesAtomic writes b to path, with the permission bits perm,
// through a temporary file in the same directory renamed into place;
// nothing is left behind on failure.
func writeBytesAtomic(path string, b []byte, perm os.FileMode) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	if err := tmp.Chmod(perm); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// CacheKey implements Keyer.
func (a *OpenAI) CacheKey() map[string]any {
	return map[string]any{"provider": "openai", "base_url": normalURL(a.params.OpenAIBaseURL), "model": a.model,
		"temperature": a.params.Temperature, "seed": a.params.Seed, "max_output_tokens": a.params.MaxOutputTokens,
		"structured": a.params.Structured}
}

// CacheKey implements Keyer.
func (a *Ollama) CacheKey() map[string]any {
	return map[string]any{"provider": "ollama", "host": normalURL(a.host), "model": a.model, "temperature": a.params.Temperature,
		"seed": a.params.Seed, "max_output_tokens": a.params.MaxOutputTokens, "num_ctx": a.numCtx,
		"structured": a.params.Structured}
}
