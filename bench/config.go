package bench

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/patchbench/patchbench/internal/limited"
	"github.com/patchbench/patchbench/runtime"
)

// View modes of a configuration.
const (
	ViewFull      = "full"
	ViewProjected = "projected"
)

// AllGates is the gate set of a step's full contract: scope, phase,
// schema and invariants (paper §3.2). It is PatchOptic's set, the one the
// reference run is verified under, and the one the runner audits every
// proposal with in every configuration, so that an illegal commit is
// counted the same way whatever the configuration enforced.
var AllGates = runtime.DefaultGates

// GateOrder lists the gates an artifact's caught_by may name, in the
// verifier's pipeline order.
var GateOrder = []string{
	runtime.GateParse, runtime.GateScope, runtime.GateACL, runtime.GatePhase,
	runtime.GateApply, runtime.GateSchema, runtime.GateInvariants,
}

// Config is one benchmark configuration (docs/cases.md, Configurations):
// what the actor sees and which gates the verifier runs. Parsing the
// proposal and applying the patch are checked in every configuration.
type Config struct {
	Name  string   `yaml:"name" json:"name"`
	Label string   `yaml:"label" json:"label"`
	Order int      `yaml:"order" json:"order,omitempty"`
	View  string   `yaml:"view" json:"view"`
	Gates []string `yaml:"gates" json:"gates"`
	// GateSet is Gates compiled for runtime.VerifyOptions.
	GateSet runtime.GateSet `yaml:"-" json:"-"`
	File    string          `yaml:"-" json:"-"`
}

// Projected reports whether the actor sees the step's view rather than
// the whole state.
func (c *Config) Projected() bool { return c.View == ViewProjected }

// Runs reports whether the configuration runs the named gate; "parse" and
// "apply" always run.
func (c *Config) Runs(gate string) bool {
	switch gate {
	case runtime.GateParse, runtime.GateApply:
		return true
	case runtime.GateScope:
		return c.GateSet.Scope
	case runtime.GateACL:
		return c.GateSet.ACL
	case runtime.GatePhase:
		return c.GateSet.Phase
	case runtime.GateSchema:
		return c.GateSet.Schema
	case runtime.GateInvariants:
		return c.GateSet.Invariants
	}
	return false
}

// ParseConfig parses one configuration file. Unknown keys, a missing
// name, label or view, an unknown view mode or gate, and a name that is
// not the file's base name are errors naming the file and line.
func ParseConfig(name string, b []byte) (*Config, error) {
	var root yaml.Node
	if err := yaml.Unmarshal(b, &root); err != nil {
		return nil, yamlError(name, err, nil)
	}
	if root.Kind == 0 || len(root.Content) == 0 {
		return nil, &FileError{File: name, Err: errors.New("empty configuration")}
	}
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		return nil, yamlError(name, err, &root)
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err != io.EOF {
		return nil, &FileError{File: name, Line: extra.Line, Err: errors.New("more than one YAML document")}
	}
	line := func(key string) int { return fieldLine(root.Content[0], key) }
	want := strings.TrimSuffix(path.Base(filepath.ToSlash(name)), path.Ext(name))
	switch {
	case c.Name == "":
		return nil, &FileError{File: name, Err: errors.New("name is required")}
	case c.Name != want:
		return nil, &FileError{File: name, Line: line("name"), Err: fmt.Errorf("name %q differs from the file name %q", c.Name, want)}
	case c.Label == "":
		return nil, &FileError{File: name, Err: errors.New("label is required")}
	case c.View != ViewFull && c.View != ViewProjected:
		return nil, &FileError{File: name, Line: line("view"), Err: fmt.Errorf("view must be %q or %q, not %q", ViewFull, ViewProjected, c.View)}
	}
	if c.Gates == nil {
		return nil, &FileError{File: name, Err: errors.New("gates is required ([] for none)")}
	}
	gs, err := runtime.GatesFromList(c.Gates)
	if err != nil {
		return nil, &FileError{File: name, Line: line("gates"), Err: err}
	}
	c.GateSet, c.File = gs, name
	return &c, nil
}

// LoadConfigs loads every *.yaml or *.yml configuration in the top level
// of fsys, sorted by Order, then name. Two configurations with one name,
// or none at all, are errors.
func LoadConfigs(fsys fs.FS, display func(string) string) ([]*Config, error) {
	if display == nil {
		display = func(p string) string { return p }
	}
	entries, err := fs.ReadDir(fsys, ".")
	if err != nil {
		return nil, err
	}
	var out []*Config
	var errs []error
	for _, e := range entries {
		ext := strings.ToLower(path.Ext(e.Name()))
		if e.IsDir() || (ext != ".yaml" && ext != ".yml") {
			continue
		}
		b, err := readConfig(fsys, e)
		if err != nil {
			errs = append(errs, &FileError{File: display(e.Name()), Err: err})
			continue
		}
		c, err := ParseConfig(display(e.Name()), b)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		out = append(out, c)
	}
	seen := map[string]string{}
	for _, c := range out {
		if prev, ok := seen[c.Name]; ok {
			errs = append(errs, &FileError{File: c.File, Err: fmt.Errorf("configuration %q is also defined by %s", c.Name, prev)})
		}
		seen[c.Name] = c.File
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no configurations (*.yaml) in %s", display("."))
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Order != out[j].Order {
			return out[i].Order < out[j].Order
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

// LoadConfigDir is LoadConfigs on a directory of the file system.
func LoadConfigDir(dir string) ([]*Config, error) {
	if _, err := os.Stat(dir); err != nil {
		return nil, err
	}
	return LoadConfigs(os.DirFS(dir), func(p string) string {
		if p == "." {
			return dir
		}
		return filepath.Join(dir, p)
	})
}

// readConfig reads a configuration file: a regular file (or a link to
// one) of at most 64 KiB.
func readConfig(fsys fs.FS, e fs.DirEntry) ([]byte, error) {
	fi, err := fs.Stat(fsys, e.Name())
	if err != nil {
		return nil, err
	}
	if !fi.Mode().IsRegular() {
		return nil, errors.New("not a regular file")
	}
	const limit = 64 << 10
	b, err := limited.ReadFile(fsys, e.Name(), limit)
	if err != nil {
		return nil, fmt.Errorf("a configuration is a few lines: %w", err)
	}
	return b, nil
}
