package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
)

// fakeProvider is the actor of a provider a test registers: it answers
// every step with its reference proposal, and reports the host it was
// given.
type fakeProvider struct{ spec, host string }

func (f *fakeProvider) Name() string             { return f.spec }
func (f *fakeProvider) Provider() string         { return "fakeprov" }
func (f *fakeProvider) Endpoint() string         { return "fakeprov " + f.host }
func (f *fakeProvider) Breaker() *actors.Breaker { return nil }
func (f *fakeProvider) SpeaksTools() bool        { return true }
func (f *fakeProvider) CacheKey() map[string]any {
	return map[string]any{"provider": "fakeprov", "spec": f.spec}
}
func (f *fakeProvider) Propose(_ context.Context, req actors.Request) (actors.Response, error) {
	return actors.Response{Raw: string(req.Reference)}, nil
}

// A provider registered with actors.Register, in one place, is listed by
// run --help, gets its environment variable through run's parameters and
// has its endpoint recorded in the manifest (its password hidden), as
// the built-in providers' are; the built-in ones keep their own members.
func TestRunRegisteredProvider(t *testing.T) {
	var hosts []string
	t.Cleanup(actors.Register(actors.Kind{Spec: "fakeprov:", Usage: "fakeprov:MODEL", Provider: "fakeprov",
		New: func(spec string, p actors.Params) (actors.Actor, error) {
			hosts = append(hosts, p.Env["FAKEPROV_HOST"])
			return &fakeProvider{spec: spec, host: p.Env["FAKEPROV_HOST"]}, nil
		},
		Env: []actors.EnvVar{{Name: "FAKEPROV_HOST", Help: "the fake provider's server", Manifest: "fakeprov_host"}},
	}))
	stdout, _, _ := runCLI(t, cliCase{args: []string{"run", "-h"}})
	if !strings.Contains(stdout, "exec:COMMAND, fakeprov:MODEL, files:DIR") {
		t.Errorf("run --help does not list the registered provider:\n%s", stdout)
	}

	tmp := t.TempDir()
	t.Setenv("FAKEPROV_HOST", "http://user:secret@127.0.0.1:9")
	t.Setenv("OPENAI_BASE_URL", "http://user:hunter2@127.0.0.1:9/v1")
	out := filepath.Join(tmp, "fake")
	_, stderr, code := runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--config", "patchoptic",
		"--actor", "fakeprov:m", "--no-cache", "--out", out}})
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, stderr)
	}
	if len(hosts) == 0 || hosts[0] != "http://user:secret@127.0.0.1:9" {
		t.Errorf("the provider was made with hosts %q", hosts)
	}
	m, _ := os.ReadFile(filepath.Join(out, "manifest.json"))
	if !strings.Contains(string(m), `"endpoints": {
    "fakeprov_host": "http://user:xxxxx@127.0.0.1:9"
  },`) || strings.Contains(string(m), "secret") || strings.Contains(string(m), "openai_base_url") {
		t.Errorf("manifest of a fakeprov: run:\n%s", m)
	}

	// An openai: actor's endpoint is still its own member, in its place.
	out = filepath.Join(tmp, "openai")
	runCLI(t, cliCase{args: []string{"run", "--cases", exampleCases, "--config", "patchoptic",
		"--actor", "openai:m", "--cache-only", "--cache", filepath.Join(tmp, "cache"), "--out", out}})
	m, _ = os.ReadFile(filepath.Join(out, "manifest.json"))
	if !strings.Contains(string(m), `"temperature": null,
  "openai_base_url": "http://user:xxxxx@127.0.0.1:9/v1",
  "max_attempts": 1,`) || strings.Contains(string(m), "hunter2") || strings.Contains(string(m), "endpoints") {
		t.Errorf("manifest of an openai: run:\n%s", m)
	}
}
