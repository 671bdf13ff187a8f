package actors

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"syscall"
	"testing"
	"time"
)

// closedPort is the address of a port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

func TestConnectionFailure(t *testing.T) {
	refused := func() error {
		_, err := http.Get("http://" + closedPort(t) + "/")
		return err
	}()
	tlsSrv := httptest.NewUnstartedServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake it refuses
	tlsSrv.StartTLS()
	defer tlsSrv.Close()
	_, untrusted := http.Get(tlsSrv.URL) // a certificate no one vouches for
	plain := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {}))
	defer plain.Close()
	_, tlsToPlain := http.Get(strings.Replace(plain.URL, "http:", "https:", 1))
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() }))
	defer slow.Close()
	_, timeout := (&http.Client{Timeout: 20 * time.Millisecond}).Get(slow.URL)
	dns := &url.Error{Op: "Post", URL: "http://nowhere.invalid/v1", Err: &net.OpError{Op: "dial", Net: "tcp",
		Err: &net.DNSError{Err: "no such host", Name: "nowhere.invalid", IsNotFound: true}}}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"refused", refused, true},
		{"refused, wrapped by an actor", fmt.Errorf("openai:m: %w", refused), true},
		{"a name that does not resolve", dns, true},
		{"an untrusted certificate", untrusted, true},
		{"TLS to a plain HTTP server", tlsToPlain, true},
		{"a server that does not answer in time", timeout, false},
		{"an HTTP status", &HTTPError{Status: 503, Message: "overloaded"}, false},
		{"a connection dropped after it was made", fmt.Errorf("%w: EOF", errDropped), false},
		{"no error", nil, false},
	} {
		if c.err == nil && c.want {
			t.Fatalf("%s: no error to classify", c.name)
		}
		if got := ConnectionFailure(c.err); got != c.want {
			t.Errorf("%s: ConnectionFailure(%v) = %v, want %v", c.name, c.err, got, c.want)
		}
	}
}

var errRefused = &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED}

// The breaker opens after BreakAfter consecutive connection failures,
// whatever request they come from; a response in between starts the count
// again; once open, no attempt is made.
func TestBreakerCounts(t *testing.T) {
	ctx := context.Background()
	b := (&Breakers{}).For("openai http://127.0.0.1:1/v1")
	calls := 0
	fail := func(err error) func(context.Context) error {
		return func(context.Context) error { calls++; return err }
	}
	r := Retry{MaxRetries: 0, Breaker: b}
	for i := 0; i < BreakAfter-1; i++ {
		r.Do(ctx, fail(errRefused))
	}
	r.Do(ctx, fail(&HTTPError{Status: 500})) // the server answered
	for i := 0; i < BreakAfter-1; i++ {
		if _, err := r.Do(ctx, fail(errRefused)); !errors.Is(err, syscall.ECONNREFUSED) || b.Open() != nil {
			t.Fatalf("failure %d after a response: %v, open %v", i+1, err, b.Open())
		}
	}
	_, err := r.Do(ctx, fail(errRefused))
	var down *EndpointDownError
	if !errors.As(err, &down) || down.Failures != BreakAfter || !errors.Is(err, syscall.ECONNREFUSED) || b.Open() != down {
		t.Fatalf("the %dth failure: %v", BreakAfter, err)
	}
	if !strings.Contains(err.Error(), "openai http://127.0.0.1:1/v1 is unreachable: 5 consecutive connection failures") {
		t.Errorf("message: %v", err)
	}
	before := calls
	if _, err := r.Do(ctx, fail(nil)); !errors.As(err, &down) || calls != before {
		t.Errorf("open: %v after %d more calls", err, calls-before)
	}
	// A cancelled attempt is not a failure of the endpoint.
	c := (&Breakers{After: 1}).For("x")
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	Retry{Breaker: c}.Do(cctx, fail(errRefused))
	if c.Open() != nil {
		t.Error("a cancelled attempt opened the breaker")
	}
}

// A request waiting for its backoff when the breaker opens stops waiting
// and fails with the breaker's error.
func TestBreakerEndsWaits(t *testing.T) {
	b := (&Breakers{After: 2}).For("ollama http://127.0.0.1:1")
	first := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		n := 0
		_, err := Retry{MaxRetries: 5, Base: time.Hour, Max: time.Hour, Breaker: b}.Do(context.Background(), func(context.Context) error {
			if n++; n == 1 {
				close(first)
			}
			return errRefused
		})
		done <- err
	}()
	<-first
	Retry{Breaker: b}.Do(context.Background(), func(context.Context) error { return errRefused })
	select {
	case err := <-done:
		var down *EndpointDownError
		if !errors.As(err, &down) {
			t.Errorf("the waiting request: %v", err)
		}
	case <-time.After(time.Minute):
		t.Fatal("a request still waits for its backoff after the breaker opened")
	}
}

// Live actors built with a Breakers share their endpoint's breaker: an
// OpenAI-compatible server and an Ollama server that nothing listens on
// are taken as down after BreakAfter failed attempts.
func TestLiveActorsBreak(t *testing.T) {
	bs := &Breakers{}
	addr := closedPort(t)
	p := Params{Retry: fastRetry, Breakers: bs}
	a := newTestActor(t, "openai:m", "http://"+addr, p)
	b := newTestActor(t, "openai:other-model", "http://"+addr, p) // the same endpoint
	_, err := a.Propose(context.Background(), testReq)            // 1 + 3 retries
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("first: %v", err)
	}
	_, err = b.Propose(context.Background(), testReq)
	var down *EndpointDownError
	if !errors.As(err, &down) || down.Endpoint != "openai http://"+addr+"/v1" {
		t.Fatalf("second: %v", err)
	}
	if got := bs.For(Endpoint(a)).Open(); got != down {
		t.Errorf("breaker %v", got)
	}
	o, err := NewOllama("ollama:mistral", addr, Params{Retry: fastRetry, Breakers: bs})
	if err != nil {
		t.Fatal(err)
	}
	_, err = o.Propose(context.Background(), testReq)
	if err == nil || !strings.Contains(err.Error(), "no Ollama server at http://"+addr) {
		t.Fatalf("ollama, first: %v", err)
	}
	_, err = o.Propose(context.Background(), testReq)
	if !errors.As(err, &down) || down.Endpoint != "ollama http://"+addr {
		t.Fatalf("ollama, second: %v", err)
	}
}

// Down looks through the cache, the rate limit and a role map to the
// live actors' breakers.
func TestDown(t *testing.T) {
	bs := &Breakers{After: 1}
	addr := closedPort(t)
	a := newTestActor(t, "openai:m", "http://"+addr, Params{Retry: Retry{MaxRetries: 0}, Breakers: bs})
	o, err := NewOllama("ollama:mistral", "localhost:11434", Params{Breakers: bs})
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseRoleMap("reviewer=ollama:mistral,openai:m", func(spec string) (Actor, error) {
		if strings.HasPrefix(spec, "ollama:") {
			return o, nil
		}
		return &Cached{Actor: &Limited{Actor: a}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	wrapped := &Cached{Actor: &Limited{Actor: a}}
	for _, x := range []Actor{wrapped, m, o, Reference{}, &Files{}} {
		if Down(x) != nil {
			t.Errorf("%s is down before any request", x.Name())
		}
	}
	a.Propose(context.Background(), testReq) // one refused connection opens it
	for _, c := range []struct {
		a    Actor
		down bool
	}{{wrapped, true}, {m, true}, {o, false}, {Reference{}, false}} {
		if got := Down(c.a); (got != nil) != c.down || (got != nil && got.Endpoint != "openai http://"+addr+"/v1") {
			t.Errorf("%s: %v", c.a.Name(), got)
		}
	}
}
