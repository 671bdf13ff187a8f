package actors

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/patchbench/patchbench/internal/textcut"
)

// Retry is the retry policy of a live actor: exponential backoff from
// Base, doubled each attempt up to Max, with full jitter, at most
// MaxRetries retries; a server's Retry-After wins when it asks for longer.
// A 5xx without a Retry-After backs off from Base/ServerErrorDivisor
// instead (50 ms with DefaultRetry), with the same doubling, cap, jitter
// and number of retries: at most 1.55 s of waiting over 5 retries instead
// of 31 s, during which the run's slot serves other runs (Pauser). A
// Retry-After is never cut short.
type Retry struct {
	MaxRetries int
	Base, Max  time.Duration
	// Breaker, when set, is the circuit breaker of the actor's endpoint
	// (Breakers.For): Do reports every attempt's outcome to it, makes no
	// attempt while it is open (returning its *EndpointDownError), and
	// stops waiting for a backoff when it opens.
	Breaker *Breaker
}

// ServerErrorDivisor divides Retry.Base for a 5xx answer without a
// Retry-After header.
const ServerErrorDivisor = 20

// DefaultRetry retries 5 times, from 1 s up to 60 s (from 50 ms after a
// 5xx without Retry-After).
var DefaultRetry = Retry{MaxRetries: 5, Base: time.Second, Max: time.Minute}

// HTTPError is a provider's HTTP error: the status and the provider's
// message; Param, the request parameter the provider's API error names
// (OpenAI's error.param), when it names one; RetryAfter, the wait the
// server asked for. Retryable says whether another attempt may succeed
// (429, 5xx).
type HTTPError struct {
	Status     int
	Message    string
	Param      string
	RetryAfter time.Duration
}

// Error gives the status and the provider's message, cut to 2048 bytes
// and made safe to print (textcut.OneLine).
func (e *HTTPError) Error() string {
	msg := e.Message
	if len(msg) > 2048 {
		msg = textcut.Cut(msg, 2048) + "…"
	}
	msg = textcut.OneLine(msg)
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return fmt.Sprintf("HTTP %d: %s (check the API key)", e.Status, msg)
	case http.StatusNotFound:
		return fmt.Sprintf("HTTP %d: %s (check the model name and the base URL)", e.Status, msg)
	}
	return fmt.Sprintf("HTTP %d: %s", e.Status, msg)
}

// Retryable reports whether the status may pass on a later attempt.
func (e *HTTPError) Retryable() bool {
	return e.Status == http.StatusTooManyRequests || e.Status == http.StatusRequestTimeout || e.Status >= 500
}

// retryable reports whether err is worth another attempt: a retryable
// HTTP status, a timeout or a dropped connection, but never a cancelled
// run.
func retryable(ctx context.Context, err error) bool {
	if ctx.Err() != nil {
		return false
	}
	var he *HTTPError
	if errors.As(err, &he) {
		return he.Retryable()
	}
	var down *EndpointDownError
	if errors.As(err, &down) {
		return false
	}
	var ne net.Error
	if errors.As(err, &ne) {
		return true
	}
	return errors.Is(err, context.DeadlineExceeded) || errors.Is(err, errDropped)
}

// maxRetryAfter caps a server's Retry-After: a run waits at most this
// long between two attempts, whatever it is told.
const maxRetryAfter = 10 * time.Minute

// errDropped marks a connection closed before a response.
var errDropped = errors.New("connection closed before a response")

// A Pauser hears when a caller of Retry.Do stops sending for a while (a
// backoff between two attempts) and when it wants to send again. The
// runner's pauser gives the run's concurrency slot back for the wait, so
// that other runs' requests fill it, and takes one again before the
// retry (Resume blocks until it has one, or returns ctx's error). A
// backoff that waits for a slot may thus last longer than its timer,
// never shorter.
type Pauser interface {
	Pause()
	Resume(ctx context.Context) error
}

type pauserKey struct{}

// WithPauser returns ctx carrying p, for Retry.Do to tell of its backoffs.
func WithPauser(ctx context.Context, p Pauser) context.Context {
	return context.WithValue(ctx, pauserKey{}, p)
}

// Do calls f until it succeeds, fails for good, or the retries are spent,
// sleeping between attempts (interrupted by ctx). It returns the last
// error and the number of retries made. With a Breaker, each attempt's
// outcome is counted by it, and once it is open Do returns its
// *EndpointDownError instead of attempting or waiting any more. When ctx
// carries a Pauser (WithPauser), a wait after a 5xx without Retry-After
// is bracketed by its Pause and Resume.
func (r Retry) Do(ctx context.Context, f func(context.Context) error) (int, error) {
	pauser, _ := ctx.Value(pauserKey{}).(Pauser)
	for attempt := 0; ; attempt++ {
		if down := r.Breaker.Open(); down != nil {
			return attempt, down
		}
		err := f(ctx)
		if down := r.Breaker.observe(ctx, err); down != nil {
			return attempt, down
		}
		if err == nil || attempt >= r.MaxRetries || !retryable(ctx, err) {
			return attempt, err
		}
		var he *HTTPError
		isHTTP := errors.As(err, &he)
		base := r.Base
		var p Pauser
		if isHTTP && he.Status >= 500 && he.RetryAfter == 0 {
			// A server error that asks for no wait is most often one
			// request's failure: retried sooner (ServerErrorDivisor),
			// and the wait lets others' requests use the slot. After a
			// 429, a Retry-After or a failed connection the run keeps
			// its slot: fewer requests while the provider is strained.
			base = max(r.Base/ServerErrorDivisor, time.Millisecond)
			p = pauser
		}
		wait := base << attempt
		if wait > r.Max || wait <= 0 {
			wait = r.Max
		}
		wait = time.Duration(rand.Int64N(int64(wait) + 1))
		if isHTTP && he.RetryAfter > wait {
			wait = min(he.RetryAfter, maxRetryAfter)
		}
		if err := sleep(ctx, wait, r.Breaker.Down(), p); err != nil {
			return attempt, err
		}
	}
}

// sleep waits for d, until ctx is done (its error is returned) or down is
// closed (nil: the caller's next turn sees the breaker open); a pauser
// hears of the wait before it and takes its slot back after it.
func sleep(ctx context.Context, d time.Duration, down <-chan struct{}, pauser Pauser) error {
	if pauser != nil {
		pauser.Pause()
	}
	t := time.NewTimer(d)
	var err error
	select {
	case <-ctx.Done():
		err = ctx.Err()
	case <-down:
	case <-t.C:
	}
	t.Stop()
	if pauser != nil {
		if rerr := pauser.Resume(ctx); err == nil {
			err = rerr
		}
	}
	return err
}

// parseRetryAfter reads a Retry-After header: seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil && s >= 0 {
		if s > int64(maxRetryAfter/time.Second) {
			return maxRetryAfter // and no overflow
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

// headerRecorder is an http.RoundTripper that keeps the Retry-After
// header of the last response of each request, keyed by the request's
// context, for client libraries that do not expose headers.
type headerRecorder struct {
	next http.RoundTripper
	mu   sync.Mutex
	last map[context.Context]string
}

func (h *headerRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := h.next.RoundTrip(req)
	if err == nil {
		h.mu.Lock()
		if h.last == nil {
			h.last = map[context.Context]string{}
		}
		h.last[req.Context()] = resp.Header.Get("Retry-After")
		h.mu.Unlock()
	}
	return resp, err
}

// take returns and forgets the Retry-After recorded for ctx.
func (h *headerRecorder) take(ctx context.Context) string {
	h.mu.Lock()
	defer h.mu.Unlock()
	v := h.last[ctx]
	delete(h.last, ctx)
	return v
}

// refuseRedirects stops at any redirect: a provider's API does not
// redirect, and following one would send the key and the prompt (which
// may hold a full state's secrets) elsewhere.
func refuseRedirects(req *http.Request, _ []*http.Request) error {
	return fmt.Errorf("the server redirected to %s; not followed (set the final URL)", req.URL.Redacted())
}
