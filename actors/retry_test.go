package actors

import (
	"context"
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
