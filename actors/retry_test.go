package actors

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestRetryServerErrorSooner checks the backoff after a 5xx: from
// Base/ServerErrorDivisor without a Retry-After, and never shorter than a
// Retry-After asks.
func TestRetryServerErrorSooner(t *testing.T) {
	r := Retry{MaxRetries: 3, Base: time.Second, Max: time.Minute}
	for _, tc := range []struct {
		name     string
		err      *HTTPError
		min, max time.Duration
	}{
		{"500 without Retry-After", &HTTPError{Status: 500}, 0, 3 * time.Second / ServerErrorDivisor},
		{"503 with Retry-After", &HTTPError{Status: 503, RetryAfter: 300 * time.Millisecond}, 300 * time.Millisecond, 2 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			calls := 0
			start := time.Now()
			n, err := r.Do(context.Background(), func(context.Context) error {
				if calls++; calls == 1 {
					return tc.err
				}
				return nil
			})
			took := time.Since(start)
			if err != nil || n != 1 {
				t.Fatalf("Do: %d retries, %v", n, err)
			}
			if took < tc.min || took > tc.max {
				t.Errorf("waited %v, want between %v and %v", took, tc.min, tc.max)
			}
		})
	}
}

// pauseLog records a Pauser's calls.
type pauseLog struct {
	calls     []string
	resumeErr error
}

func (p *pauseLog) Pause() { p.calls = append(p.calls, "pause") }
func (p *pauseLog) Resume(ctx context.Context) error {
	p.calls = append(p.calls, "resume")
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return p.resumeErr
}

// A run gives its slot back (Pause) only while it waits after a 5xx
// without Retry-After, and takes one again (Resume) before it retries.
func TestRetryPausesOnlyAfterBareServerErrors(t *testing.T) {
	r := Retry{MaxRetries: 2, Base: 10 * time.Millisecond, Max: time.Second}
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"500", &HTTPError{Status: 500}, "f pause resume f"},
		{"502", &HTTPError{Status: 502}, "f pause resume f"},
		{"503 with Retry-After", &HTTPError{Status: 503, RetryAfter: time.Millisecond}, "f f"},
		{"429", &HTTPError{Status: 429}, "f f"},
		{"dropped connection", errDropped, "f f"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := &pauseLog{}
			calls := 0
			_, err := r.Do(WithPauser(context.Background(), p), func(context.Context) error {
				p.calls = append(p.calls, "f")
				if calls++; calls == 1 {
					return tc.err
				}
				return nil
			})
			if got := strings.Join(p.calls, " "); err != nil || got != tc.want {
				t.Fatalf("calls %q, error %v; want %q", got, err, tc.want)
			}
		})
	}
	// A Resume that fails (the run was cancelled while waiting for a
	// slot) ends Do with its error, without another attempt.
	p := &pauseLog{resumeErr: context.Canceled}
	n, err := r.Do(WithPauser(context.Background(), p), func(context.Context) error {
		p.calls = append(p.calls, "f")
		return &HTTPError{Status: 500}
	})
	if got := strings.Join(p.calls, " "); !errors.Is(err, context.Canceled) || n != 0 || got != "f pause resume" {
		t.Fatalf("calls %q, %d retries, error %v", got, n, err)
	}
}
