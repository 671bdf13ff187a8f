package runspec

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestContextTokens: --context-tokens sets the actor's context budget
// (default 128000, at least 1024), and the manifest records it only off
// its default, so that a directory made before it existed resumes.
func TestContextTokens(t *testing.T) {
	s := Default()
	if s.ContextTokens != 128000 {
		t.Fatalf("default %d", s.ContextTokens)
	}
	if r := s.Recorded(); r.ContextTokens != 0 {
		t.Errorf("recorded at its default: %d", r.ContextTokens)
	}
	fs := flag.NewFlagSet("run", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	Bind(fs, &s)
	if err := fs.Parse([]string{"--context-tokens", "4096"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Check(); err != nil || s.ContextTokens != 4096 || s.Recorded().ContextTokens != 4096 {
		t.Errorf("--context-tokens 4096: %v, %d, recorded %d", err, s.ContextTokens, s.Recorded().ContextTokens)
	}
	s.ContextTokens = 1000
	var e *Error
	if err := s.Check(); !errors.As(err, &e) || e.Flag != "context-tokens" || !strings.HasPrefix(e.Why, "must be in [1024, ") {
		t.Errorf("1000 tokens: %v", err)
	}
}
