package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"sync"
	"testing"
)

const (
	shaA = "1111111111111111111111111111111111111111"
	shaB = "2222222222222222222222222222222222222222"
	shaC = "3333333333333333333333333333333333333333"
)

// writeFiles writes name → content under dir.
func writeFiles(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestCheckoutRevision: the revision is read from the
// module's git checkout as git itself resolves HEAD: a branch ref in its
// own file or in packed-refs, a detached HEAD, a worktree whose .git is a
// file pointing at its gitdir (and commondir at the refs); from any
// directory inside the module. Another module's checkout, no checkout, or
// a HEAD that names no commit give no revision.
func TestCheckoutRevision(t *testing.T) {
	const gomod = "module github.com/patchbench/patchbench\n\ngo 1.24\n"
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{"a branch in its own file", map[string]string{"go.mod": gomod, ".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": shaA + "\n",
			".git/packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + shaB + " refs/heads/main\n"}, shaA},
		{"a packed branch", map[string]string{"go.mod": gomod, ".git/HEAD": "ref: refs/heads/exact\n",
			".git/packed-refs": "# pack-refs with: peeled fully-peeled sorted\n" + shaB + " refs/heads/other\n^" + shaC + "\n" + shaA + " refs/heads/exact\n"}, shaA},
		{"a detached HEAD", map[string]string{"go.mod": gomod, ".git/HEAD": shaC + "\n"}, shaC},
		{"a worktree", map[string]string{"wt/go.mod": gomod, "wt/.git": "gitdir: ../repo/.git/worktrees/wt\n",
			"repo/.git/worktrees/wt/HEAD": "ref: refs/heads/exact\n", "repo/.git/worktrees/wt/commondir": "../..\n",
			"repo/.git/packed-refs": shaB + " refs/heads/exact\n"}, shaB},
		{"a module below the repository's root", map[string]string{"mod/go.mod": gomod, ".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": shaA}, shaA},
		{"another module", map[string]string{"go.mod": "module example.com/other\n", ".git/HEAD": shaC + "\n"}, ""},
		{"no checkout", map[string]string{"go.mod": gomod}, ""},
		{"a branch with no commit yet", map[string]string{"go.mod": gomod, ".git/HEAD": "ref: refs/heads/main\n"}, ""},
		{"a HEAD that is not a commit", map[string]string{"go.mod": gomod, ".git/HEAD": "ref: refs/heads/main\n", ".git/refs/heads/main": "not a sha\n"}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeFiles(t, dir, tc.files)
			root := dir
			for name := range tc.files {
				if strings.HasSuffix(name, "go.mod") {
					root = filepath.Join(dir, filepath.Dir(name))
				}
			}
			start := filepath.Join(root, "cmd", "patchbench")
			if err := os.MkdirAll(start, 0o755); err != nil {
				t.Fatal(err)
			}
			got, where := checkoutRevision(start, "github.com/patchbench/patchbench")
			if got != tc.want {
				t.Fatalf("revision %q (from %q), want %q", got, where, tc.want)
			}
			if got != "" && where != root {
				t.Errorf("read from %q, want the module's root %q", where, root)
			}
		})
	}
}

// TestResolveBuild: Go's own VCS stamp comes first, then a revision
// given with -ldflags -X, then the checkout of the working directory;
// only a build that knows none warns.
func TestResolveBuild(t *testing.T) {
	dir := t.TempDir()
	writeFiles(t, dir, map[string]string{"go.mod": "module github.com/patchbench/patchbench\n", ".git/HEAD": shaC + "\n"})
	empty := t.TempDir()
	stamped := &debug.BuildInfo{Main: debug.Module{Path: "github.com/patchbench/patchbench", Version: "v0.0.0-20261201044957-8c005e603459"},
		Settings: []debug.BuildSetting{{Key: "vcs.revision", Value: shaA}, {Key: "vcs.time", Value: "2026-12-01T04:49:57Z"}}}
	devel := &debug.BuildInfo{Main: debug.Module{Path: "github.com/patchbench/patchbench", Version: "(devel)"}}
	tests := []struct {
		name     string
		info     *debug.BuildInfo
		ld       ldStamp
		dir      string
		rev, src string
		modified bool
		warns    bool
	}{
		{"Go's stamp", stamped, ldStamp{revision: shaB}, dir, shaA, "go", false, false},
		{"-ldflags -X", devel, ldStamp{revision: shaB, time: "2026-12-01T05:00:00Z", modified: "true"}, dir, shaB, "ldflags", true, false},
		{"the checkout", devel, ldStamp{}, dir, shaC, "checkout:" + dir, false, true},
		{"nothing", devel, ldStamp{}, empty, "", "", false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			b := resolveBuild(tc.info, tc.ld, tc.dir)
			if b.Revision != tc.rev || b.RevisionSource != tc.src || b.Modified != tc.modified {
				t.Fatalf("%+v; want revision %q from %q, modified %v", b, tc.rev, tc.src, tc.modified)
			}
			if w := b.warning(); (w != "") != tc.warns {
				t.Fatalf("warning %q; want one: %v", w, tc.warns)
			}
			if tc.rev == "" && !strings.Contains(b.text(), "revision: unknown") {
				t.Errorf("text:\n%s", b.text())
			}
			if tc.rev != "" && !strings.Contains(b.text(), "revision: "+tc.rev) {
				t.Errorf("text:\n%s", b.text())
			}
			if m := b.manifest(); m.RevisionSource != tc.src {
				t.Errorf("manifest build %+v", m)
			}
		})
	}
}

// TestBuildWithoutVCSStamp is the reproduction end to end: a
// binary built with -buildvcs=false said "revision: unknown" and its
// manifests recorded (devel) with no revision. Run from outside any
// checkout it still says so, and run warns; run inside the checkout it
// reads the revision there; built with the documented -ldflags it knows
// its revision anywhere, and run records it.
//
// The binary without a stamp is the test binary itself run as
// patchbench (TestMain, PATCHBENCH_TEST_MAIN): go test records no VCS
// stamp and sets no -X, as go build -buildvcs=false does not (checked
// here; where the test binary has a stamp, the test builds one without).
// Only the -ldflags build is linked.
func TestBuildWithoutVCSStamp(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	// Only subprocesses: in parallel with the tests that run the command
	// in the test binary.
	t.Parallel()
	tmp := t.TempDir()
	plain, stampedBin := filepath.Join(tmp, "plain"), filepath.Join(tmp, "stamped")
	type build struct {
		out     string
		ldflags string
		err     error
		output  []byte
	}
	builds := []build{{out: stampedBin, ldflags: "-X main.vcsRevision=" + shaA + " -X main.vcsModified=false"}}
	if self, stamped := unstampedSelf(); stamped == "" {
		plain = self
	} else {
		t.Logf("the test binary has a stamp (%s): building one without", stamped)
		builds = append(builds, build{out: plain})
	}
	// The builds share the compiled packages and differ in the link:
	// they run at once.
	var wg sync.WaitGroup
	for i := range builds {
		b := &builds[i]
		wg.Go(func() {
			cmd := exec.Command("go", "build", "-buildvcs=false", "-ldflags", b.ldflags, "-o", b.out, ".")
			cmd.Env = append(os.Environ(), "GOFLAGS=-buildvcs=false")
			b.output, b.err = cmd.CombinedOutput()
		})
	}
	wg.Wait()
	for _, b := range builds {
		if b.err != nil {
			t.Fatalf("go build -o %s: %v\n%s", b.out, b.err, b.output)
		}
	}
	example, err := filepath.Abs(exampleCases)
	if err != nil {
		t.Fatal(err)
	}
	outside := t.TempDir()
	exe := func(bin, dir string, args ...string) (string, string) {
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "PATCHBENCH_TEST_MAIN=1") // the test binary as patchbench; the built one ignores it
		var stdout, stderr strings.Builder
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("%s %v: %v\n%s", bin, args, err, stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	manifest := func(dir string) map[string]any {
		raw, err := os.ReadFile(filepath.Join(dir, "manifest.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	runArgs := func(out string) []string {
		return []string{"run", "--cases", example, "--out", out, "--actor", "reference", "--config", "patchoptic", "--progress", "0"}
	}

	if v, _ := exe(plain, outside, "version"); !strings.Contains(v, "revision: unknown") {
		t.Errorf("outside a checkout, without a stamp:\n%s", v)
	}
	_, stderr := exe(plain, outside, runArgs(filepath.Join(tmp, "r1"))...)
	if !strings.Contains(stderr, "patchbench run: warning: this build cannot say what it is") {
		t.Errorf("run does not warn:\n%s", stderr)
	}
	if m := manifest(filepath.Join(tmp, "r1")); m["git_revision"] != nil {
		t.Errorf("the manifest records a revision it cannot know: %v", m["git_revision"])
	}

	wd, _ := os.Getwd()
	head, where := checkoutRevision(wd, "github.com/patchbench/patchbench")
	if head == "" {
		t.Skipf("the test does not run inside a git checkout of the module (%s)", wd)
	}
	if git, err := exec.Command("git", "-C", wd, "rev-parse", "HEAD").Output(); err == nil && strings.TrimSpace(string(git)) != head {
		t.Fatalf("the checkout's HEAD read as %s; git says %s", head, git)
	}
	if v, _ := exe(plain, wd, "version"); !strings.Contains(v, "revision: "+head) || !strings.Contains(v, where) {
		t.Errorf("inside the checkout, without a stamp:\n%s", v)
	}
	_, stderr = exe(plain, wd, runArgs(filepath.Join(tmp, "r2"))...)
	if !strings.Contains(stderr, "patchbench run: warning: this build does not record its revision") {
		t.Errorf("run does not say where the revision comes from:\n%s", stderr)
	}
	if m := manifest(filepath.Join(tmp, "r2")); m["git_revision"] != head || m["build"].(map[string]any)["revision_source"] != "checkout:"+where {
		t.Errorf("the manifest: %v %v", m["git_revision"], m["build"])
	}

	if v, _ := exe(stampedBin, outside, "version"); !strings.Contains(v, "revision: "+shaA) {
		t.Errorf("stamped with -ldflags:\n%s", v)
	}
	_, stderr = exe(stampedBin, outside, runArgs(filepath.Join(tmp, "r3"))...)
	if strings.Contains(stderr, "warning") {
		t.Errorf("a stamped build warns:\n%s", stderr)
	}
	if m := manifest(filepath.Join(tmp, "r3")); m["git_revision"] != shaA || m["version"] != "(devel)" {
		t.Errorf("the manifest: version %v, revision %v", m["version"], m["git_revision"])
	}
}

// unstampedSelf is the test binary's path, and what of a build's stamp
// it carries ("" for none): a VCS revision recorded by the go command or
// a main.vcsRevision set with -X. A binary with neither is what
// go build -buildvcs=false makes.
func unstampedSelf() (self, stamped string) {
	self, err := os.Executable()
	if err != nil {
		return "", "no path to the test binary: " + err.Error()
	}
	if vcsRevision != "" {
		return self, "-X main.vcsRevision=" + vcsRevision
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		for _, s := range info.Settings {
			if strings.HasPrefix(s.Key, "vcs.") {
				return self, s.Key + "=" + s.Value
			}
		}
	}
	return self, ""
}
