package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	goruntime "runtime"
	"runtime/debug"

	"github.com/patchbench/patchbench/rundir"
)

const versionExamples = `  # The module version and the VCS revision this binary was built from:
  patchbench version
  patchbench --version

  # As JSON, for a paper's artifact description:
  patchbench version --format json
`

// buildInfo is what the binary knows of its build (runtime/debug's
// ReadBuildInfo): the main module's path and version ("(devel)", or a
// pseudo-version such as v0.0.0-20261201044416-7e6a852812f6+dirty since
// Go 1.24 stamps one from the VCS), the VCS revision, its commit time and
// whether the working tree had uncommitted changes, and the Go toolchain.
// Fields the build does not know are empty: a test binary, or a build
// with -buildvcs=false, knows no revision.
type buildInfo struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Revision string `json:"vcs_revision"`
	Time     string `json:"vcs_time"`
	Modified bool   `json:"vcs_modified"`
	Go       string `json:"go"`
	Platform string `json:"platform"`
}

// readBuildInfo reads the binary's build information.
func readBuildInfo() buildInfo {
	b := buildInfo{Go: goruntime.Version(), Platform: goruntime.GOOS + "/" + goruntime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	b.Module, b.Version, b.Go = info.Main.Path, info.Main.Version, info.GoVersion
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// manifest is the manifest's build member.
func (b buildInfo) manifest() *rundir.Build {
	return &rundir.Build{Go: b.Go, VCSTime: b.Time, VCSModified: b.Modified}
}

// runVersion prints the module version and the VCS revision of the
// binary, with the revision's time, whether the tree was modified, and
// the Go toolchain; run records the same in each manifest.
func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) int {
	fs := newFlags("version", "patchbench version [--format text|json]", versionExamples, stdout, stderr)
	format := fs.String("format", "text", "output `format`: text or json")
	if code, ok := fs.parse(args); !ok {
		return code
	}
	b := readBuildInfo()
	switch *format {
	case "json":
		out, _ := json.MarshalIndent(b, "", "  ")
		fmt.Fprintf(stdout, "%s\n", out)
	case "text":
		fmt.Fprint(stdout, b.text())
	default:
		return fs.usageError("--format must be text or json, not %q", *format)
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
		s += "revision: unknown (not built from a VCS checkout, or built with -buildvcs=false)\n"
	default:
		s += "revision: " + b.Revision
		if b.Time != "" {
			s += " (" + b.Time + ")"
		}
		if b.Modified {
			s += ", with changes not committed"
		}
		s += "\n"
	}
	return s + fmt.Sprintf("go: %s %s\n", b.Go, b.Platform)
}
