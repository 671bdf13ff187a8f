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
// cache does not hold.
var ErrCacheMiss = errors.New("not in the response cache (--cache-only)")

// Cached wraps a live actor with a response cache on disk: one JSON file
// per request, named by the SHA-256 of the request's key, holding the raw
// answer, its usage, the model, the fingerprint and the latency. A hit
// returns the recorded answer with its original usage and latency, so a
// cache shipped with a run directory reproduces it bit for bit. With Only,
// a miss is ErrCacheMiss and nothing is sent.
type Cached struct {
	Actor Actor
	Dir   string
	Only  bool

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
}

// Name implements Actor: the wrapped actor's name.
func (c *Cached) Name() string { return c.Actor.Name() }

// Propose implements Actor.
func (c *Cached) Propose(ctx context.Context, req Request) (Response, error) {
	k, ok := c.Actor.(Keyer)
	if !ok {
		return c.Actor.Propose(ctx, req)
	}
	key, err := json.Marshal(map[string]any{"actor": k.CacheKey(), "messages": req.Messages, "round": req.Round, "attempt": req.Attempt})
	if err != nil {
		return Response{}, err
	}
	sum := sha256.Sum256(key)
	name := hex.EncodeToString(sum[:])
	path := filepath.Join(c.Dir, name[:2], name+".json")
	if b, err := os.ReadFile(path); err == nil {
		var e cacheEntry
		if err := json.Unmarshal(b, &e); err == nil && string(e.Key) == string(key) {
			return Response{Raw: e.Raw, Usage: e.Usage, Model: e.Model, Fingerprint: e.Fingerprint,
				Latency: time.Duration(e.LatencyMS) * time.Millisecond, Cached: true, Oversize: e.AnswerBytes}, nil
		}
	}
	if c.Only {
		return Response{}, fmt.Errorf("%s: %w", c.Actor.Name(), ErrCacheMiss)
	}
	sent := false
	v, err, shared := c.inflight.Do(name, func() (any, error) {
		sent = true
		start := time.Now()
		resp, err := c.Actor.Propose(ctx, req)
		if err != nil {
			return resp, err
		}
		if resp.Latency == 0 {
			resp.Latency = time.Since(start)
		}
		if resp.Raw == "" {
			// An empty answer (a 200 holding an error, no choices) is
			// not kept: the next run asks again.
			return resp, nil
		}
		e := cacheEntry{Key: key, Raw: resp.Raw, Usage: resp.Usage, Model: resp.Model, Fingerprint: resp.Fingerprint,
			LatencyMS: resp.Latency.Milliseconds(), AnswerBytes: resp.Oversize}
		if err := writeAtomic(path, e); err != nil {
			return resp, fmt.Errorf("response cache: %w", err)
		}
		return resp, nil
	})
	resp, _ := v.(Response)
	if shared && !sent && err == nil {
		resp.Cached = true // another identical request sent it
	}
	return resp, err
}

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

// writeAtomic writes v as JSON to path through a temporary file renamed
// into place, so that a crash never leaves half an entry.
func writeAtomic(path string, v any) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return writeBytesAtomic(path, b, 0o600)
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
