package actors

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"
)

// BreakAfter is the number of consecutive connection failures (a refused
// connection, a host name that does not resolve, a TLS handshake or
// certificate that fails) after which an endpoint is taken as down and no
// more requests are sent to it.
const BreakAfter = 5

// ConnectionFailure reports whether err is a failure to reach a server at
// all, with no response: a dial error (refused, unreachable, a timeout
// while connecting), a DNS error, or a TLS handshake or certificate error
// (http.ErrSchemeMismatch included). It goes by the error's type (through
// any wrapping), never by its text. An HTTP status, a timeout waiting for
// an answer or a connection dropped after it was made are not connection
// failures: the server is there.
func ConnectionFailure(err error) bool {
	if err == nil {
		return false
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "dial" {
		return true
	}
	var (
		dns      *net.DNSError
		verify   *tls.CertificateVerificationError
		header   tls.RecordHeaderError
		alert    tls.AlertError
		unknown  x509.UnknownAuthorityError
		hostname x509.HostnameError
		invalid  x509.CertificateInvalidError
	)
	return errors.As(err, &dns) || errors.As(err, &verify) || errors.As(err, &header) || errors.As(err, &alert) ||
		errors.As(err, &unknown) || errors.As(err, &hostname) || errors.As(err, &invalid) ||
		errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, http.ErrSchemeMismatch)
}

// EndpointDownError is the error of a request to an endpoint whose breaker
// is open: Failures consecutive connection failures ended with Last.
// Unwrap gives Last.
type EndpointDownError struct {
	// Endpoint names the endpoint as Endpoint does ("openai http://…",
	// "ollama http://…").
	Endpoint string
	Failures int
	Last     error
}

func (e *EndpointDownError) Error() string {
	return fmt.Sprintf("%s is unreachable: %d consecutive connection failures, the last: %v", e.Redacted(), e.Failures, e.Last)
}

// Redacted is Endpoint with any password written into its URL hidden.
func (e *EndpointDownError) Redacted() string { return redactEndpoint(e.Endpoint) }

func (e *EndpointDownError) Unwrap() error { return e.Last }

// redactEndpoint hides a password written into an endpoint's URL.
func redactEndpoint(endpoint string) string {
	kind, rawURL, ok := strings.Cut(endpoint, " ")
	if !ok {
		return endpoint
	}
	if u, err := url.Parse(rawURL); err == nil && u.User != nil {
		return kind + " " + u.Redacted()
	}
	return endpoint
}

// Breaker is the circuit breaker of one provider endpoint, shared by every
// actor and request on it (Breakers): it counts the consecutive
// connection failures of the requests' attempts (Retry.Do reports each) and
// opens after BreakAfter of them (or Breakers.After); an attempt that
// reaches the server, whatever its status, sets the count back to 0. Once
// open it stays open: every later attempt fails at once with its
// *EndpointDownError, and retries waiting for their backoff stop. Its
// methods are safe for concurrent use; a nil *Breaker never opens.
type Breaker struct {
	endpoint string
	after    int
	mu       sync.Mutex
	failures int
	last     error
	open     *EndpointDownError
	down     chan struct{}
}

// Open returns the breaker's *EndpointDownError once it has opened, nil
// before.
func (b *Breaker) Open() *EndpointDownError {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.open
}

// Down is closed when the breaker opens (nil for a nil breaker: never).
func (b *Breaker) Down() <-chan struct{} {
	if b == nil {
		return nil
	}
	return b.down
}

// observe counts one attempt's outcome; it returns the *EndpointDownError
// when this failure opened the breaker. Attempts cut short by their
// context are not counted.
func (b *Breaker) observe(ctx context.Context, err error) error {
	if b == nil || ctx.Err() != nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.open != nil {
		return nil
	}
	if !ConnectionFailure(err) {
		b.failures, b.last = 0, nil
		return nil
	}
	b.failures++
	b.last = err
	if b.failures < b.after {
		return nil
	}
	b.open = &EndpointDownError{Endpoint: b.endpoint, Failures: b.failures, Last: err}
	close(b.down)
	return b.open
}

// Breakers hands out one Breaker per provider endpoint (named as Endpoint
// names it), so that every actor on one server shares it. After is the
// number of consecutive connection failures that opens a breaker
// (BreakAfter when 0).
type Breakers struct {
	After int
	mu    sync.Mutex
	m     map[string]*Breaker
}

// For returns the breaker of an endpoint.
func (bs *Breakers) For(endpoint string) *Breaker {
	bs.mu.Lock()
	defer bs.mu.Unlock()
	if bs.m == nil {
		bs.m = map[string]*Breaker{}
	}
	b, ok := bs.m[endpoint]
	if !ok {
		after := bs.After
		if after <= 0 {
			after = BreakAfter
		}
		b = &Breaker{endpoint: endpoint, after: after, down: make(chan struct{})}
		bs.m[endpoint] = b
	}
	return b
}

// Down returns the *EndpointDownError of an endpoint the actor sends
// requests to whose breaker is open, or nil: it asks each Live actor Walk
// finds in it (through the response cache, the rate limit and a role
// map's actors, by role name) for its breaker. It is nil for an actor
// that sends none (the no-model actors, the file actor) or has no
// breaker.
func Down(a Actor) *EndpointDownError {
	var down *EndpointDownError
	Walk(a, func(x Actor) bool {
		if l, ok := x.(Live); ok {
			down = l.Breaker().Open()
		}
		return down == nil
	})
	return down
}
