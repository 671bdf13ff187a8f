package actors

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestBuild(t *testing.T) {
	tmp := t.TempDir()
	calls := 0
	def := func() (string, error) { calls++; return filepath.Join(tmp, "cache"), nil }
	p := Params{OpenAIBaseURL: "http://127.0.0.1:1/v1"}

	// No live actor: no cache directory is asked for.
	acts, err := Build([]string{"reference", "agent=oversharer,follower", "files:" + filepath.Join(tmp, "fa")}, BuildOptions{Params: p, DefaultCacheDir: def})
	if err != nil || len(acts) != 3 || calls != 0 {
		t.Fatalf("%v %v, %d calls", acts, err, calls)
	}
	if _, ok := acts[1].(*RoleMap); !ok {
		t.Errorf("a role map is %T", acts[1])
	}
	if _, err := os.Stat(filepath.Join(tmp, "fa", FilesAnswers)); err != nil {
		t.Errorf("the file actor's directory is not made: %v", err)
	}

	// Live actors: rate limited, then cached, with the default directory
	// asked for once.
	acts, err = Build([]string{"openai:a", "openai:b"}, BuildOptions{Params: p, RPS: 2, DefaultCacheDir: def})
	if err != nil || calls != 1 {
		t.Fatalf("%v, %d calls", err, calls)
	}
	c, ok := acts[0].(*Cached)
	if !ok || c.Dir != filepath.Join(tmp, "cache") {
		t.Fatalf("a live actor is %T %+v", acts[0], acts[0])
	}
	if _, ok := c.Actor.(*Limited); !ok {
		t.Errorf("the cached actor is %T, not rate limited", c.Actor)
	}
	if acts, err := Build([]string{"openai:a"}, BuildOptions{Params: p, NoCache: true}); err != nil {
		t.Fatal(err)
	} else if _, ok := acts[0].(*OpenAI); !ok {
		t.Errorf("--no-cache: %T", acts[0])
	}

	// Errors by type.
	var dup *DuplicateSpecError
	if _, err := Build([]string{"reference", "reference"}, BuildOptions{}); !errors.As(err, &dup) || dup.Spec != "reference" {
		t.Errorf("a spec twice: %v", err)
	}
	file := filepath.Join(tmp, "a-file")
	os.WriteFile(file, nil, 0o644)
	var ce *CacheDirError
	if _, err := Build([]string{"openai:a"}, BuildOptions{Params: p, CacheDir: filepath.Join(file, "cache")}); !errors.As(err, &ce) {
		t.Errorf("an unwritable cache: %v", err)
	}
	p.CacheOnly = true
	if _, err := Build([]string{"openai:a"}, BuildOptions{Params: p, CacheDir: filepath.Join(file, "cache")}); err != nil {
		t.Errorf("a cache only read need not be writable: %v", err)
	}
}
