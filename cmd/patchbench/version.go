package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	goruntime "runtime"
	"runtime/debug"
	"strings"

	"github.com/patchbench/patchbench/rundir"
)

const versionExamples = `  # The module version and the VCS revision this binary was built from:
  patchbench version
  patchbench --version

  # As JSON, for a paper's artifact description:
  patchbench version --format json

  # A build that knows its revision with VCS stamping off (GOFLAGS=-buildvcs=false):
  go build -buildvcs=false -ldflags "-X main.vcsRevision=$(git rev-parse HEAD)" ./cmd/patchbench
`

// buildInfo is what the binary knows of its build (runtime/debug's
// ReadBuildInfo): the main module's path and version ("(devel)", or a
// pseudo-version such as v0.0.0-20261201044416-7e6a852812f6+dirty since
// Go 1.24 stamps one from the VCS), the VCS revision, its commit time and
// whether the working tree had uncommitted changes, and the Go toolchain.
// RevisionSource says where the revision came from (resolveBuild): "go"
// (Go's own VCS stamp), "ldflags" (-ldflags -X main.vcsRevision=...), or
// "checkout:DIR" (read from the git checkout of the module at DIR, the
// working directory's, when the build records none: a go run or go test
// with -buildvcs=false). Fields nothing tells are empty.
type buildInfo struct {
	Module         string `json:"module"`
	Version        string `json:"version"`
	Revision       string `json:"vcs_revision"`
	RevisionSource string `json:"vcs_revision_source,omitempty"`
	Time           string `json:"vcs_time"`
	Modified       bool   `json:"vcs_modified"`
	Go             string `json:"go"`
	Platform       string `json:"platform"`
}

// Set at link time by a build that knows its revision when Go's VCS
// stamping is off (docs/commands.md, "patchbench version"):
//
//	go build -buildvcs=false -ldflags "-X main.vcsRevision=$(git rev-parse HEAD) \
//	  -X main.vcsTime=$(git log -1 --format=%cI) \
//	  -X main.vcsModified=$(git diff --quiet HEAD && echo false || echo true)" ./cmd/patchbench
var vcsRevision, vcsTime, vcsModified string

// ldStamp is what -ldflags -X set.
type ldStamp struct{ revision, time, modified string }

// readBuildInfo reads the binary's build information.
func readBuildInfo() buildInfo {
	info, _ := debug.ReadBuildInfo()
	wd, _ := os.Getwd()
	return resolveBuild(info, ldStamp{vcsRevision, vcsTime, vcsModified}, wd)
}

// ownModule is this module's path, for a binary built without module
// information.
const ownModule = "github.com/patchbench/patchbench"

// resolveBuild is the build of a binary with build information info (nil
// when it has none), link-time stamp ld, run in directory wd: Go's VCS
// stamp when it has one, else the stamp, else the revision of the git
// checkout of the module that wd lies in.
func resolveBuild(info *debug.BuildInfo, ld ldStamp, wd string) buildInfo {
	b := buildInfo{Go: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	if info != nil {
		b.Module, b.Version, b.Go = info.Main.Path, info.Main.Version, info.GoVersion
		for _, s := range info.Settings {
			switch s.Key {
			case "vcs.revision":
				b.Revision, b.RevisionSource = s.Value, "go"
			case "vcs.time":
				b.Time = s.Value
			case "vcs.modified":
				b.Modified = s.Value == "true"
			}
		}
	}
	if b.Revision != "" {
		return b
	}
	if ld.revision != "" {
		b.Revision, b.RevisionSource, b.Time, b.Modified = ld.revision, "ldflags", ld.time, ld.modified == "true"
		return b
	}
	module := b.Module
	if module == "" {
		module = ownModule
	}
	if rev, dir := checkoutRevision(wd, module); rev != "" {
		b.Revision, b.RevisionSource = rev, "checkout:"+dir
	}
	return b
}

// warning is what run says on standard error when the build cannot say
// what it is: no revision at all, or one read from the checkout the
// binary runs in rather than recorded by the build; "" when the build
// records its revision.
func (b buildInfo) warning() string {
	switch {
	case b.Revision == "":
		return "this build cannot say what it is: it records no revision (built with -buildvcs=false, which GOFLAGS may set, or outside a git checkout), and the working directory is in no checkout of the module; the manifest records version " +
			orUnknown(b.Version) + " and no git_revision. Build with -ldflags \"-X main.vcsRevision=$(git rev-parse HEAD)\" (docs/commands.md, \"patchbench version\") or run from the checkout"
	case strings.HasPrefix(b.RevisionSource, "checkout:"):
		return fmt.Sprintf("this build does not record its revision (built with -buildvcs=false, which GOFLAGS may set: go env GOFLAGS); the manifest records %s, the HEAD of the git checkout at %s, which the binary may not have been built from, and whether it had changes not committed is not known",
			b.Revision, strings.TrimPrefix(b.RevisionSource, "checkout:"))
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "(unknown)"
	}
	return s
}

// manifest is the manifest's build member.
func (b buildInfo) manifest() *rundir.Build {
	return &rundir.Build{Go: b.Go, VCSTime: b.Time, VCSModified: b.Modified, RevisionSource: b.RevisionSource}
}

// runVersion prints the module version and the VCS revision of the
// binary, with the revision's time, whether the tree was modified, and
// the Go toolchain; run records the same in each manifest.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", "patchbench version [--format text|json]", versionExamples, stdout, stderr)
	format := fs.choice("format", "text", "output `format`: text or json", "text", "json")
	if err := fs.parse(args); err != nil {
		return fs.exit(err)
	}
	b := readBuildInfo()
	switch *format {
	case "json":
		out, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
	default:
		fmt.Fprint(stdout, b.text())
	}
	return exitOK
}

// text is the build in lines: "patchbench VERSION (MODULE)", the
// revision, the toolchain.
func (b buildInfo) text() string {
	version, module := b.Version, b.Module
	if version == "" {
		version = "(version unknown)"
	}
	if module == "" {
		module = "built without module information"
	}
	s := fmt.Sprintf("patchbench %s (%s)\n", version, module)
	switch {
	case b.Revision == "":
		s += "revision: unknown (not built from a VCS checkout, or built with -buildvcs=false, and not run inside a checkout of the module)\n"
	case strings.HasPrefix(b.RevisionSource, "checkout:"):
		s += "revision: " + b.Revision + " (not recorded by the build: the HEAD of the git checkout at " + strings.TrimPrefix(b.RevisionSource, "checkout:") + "; changes not committed unknown)\n"
	default:
		s += "revision: " + b.Revision
		if b.Time != "" {
			s += " (" + b.Time + ")"
		}
		if b.Modified {
			s += ", with changes not committed"
		}
		if b.RevisionSource == "ldflags" {
			s += ", stamped with -ldflags"
		}
		s += "\n"
	}
	return s + fmt.Sprintf("go: %s %s\n", b.Go, b.Platform)
}
