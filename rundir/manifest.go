package rundir

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
)

// Manifest is manifest.json: what a run directory holds and how it was
// made (docs/run.md lists its members).
type Manifest struct {
	Module        string          `json:"module"`
	Version       string          `json:"version"`
	GitRevision   string          `json:"git_revision,omitempty"`
	CaseSet       string          `json:"case_set"`
	CaseDigest    string          `json:"case_digest"`
	Cases         int             `json:"cases"`
	CaseIDs       []string        `json:"case_ids"`
	Configs       []string        `json:"configs"`
	ConfigDetails []*bench.Config `json:"config_details"`
	Actors        []string        `json:"actors"`
	// ActorSpecs holds, by name, the spec of each actor given a display
	// name (SPEC#name=NAME, actors.NameMark): Actors and the records
	// name it NAME; absent when no actor has one.
	ActorSpecs map[string]string `json:"actor_specs,omitempty"`
	// Spec is the run's settings, as recorded (runspec.Spec.Recorded):
	// its members (rounds, seed, temperature, max_attempts, ...) are the
	// manifest's own, among the others in the order manifests have
	// always had (MarshalJSON).
	runspec.Spec
	OpenAIBaseURL string `json:"openai_base_url,omitempty"`
	OllamaHost    string `json:"ollama_host,omitempty"`
	// AnthropicBaseURL is ANTHROPIC_BASE_URL when an anthropic: actor
	// runs (absent for the default address).
	AnthropicBaseURL string `json:"anthropic_base_url,omitempty"`
	// Endpoints holds the endpoints of the other providers (a kind
	// registered with actors.Register whose variable's manifest member
	// is none of the three above), by member name; absent when none.
	// SetEndpoint fills it.
	Endpoints     map[string]string `json:"endpoints,omitempty"`
	PromptVersion string            `json:"prompt_version"`
	// Plan is the plan file the settings were read from (run --plan),
	// and PlanDigest its runner.Plan.Digest; neither is a setting (a
	// plan and the command line it amounts to make one run, and resume
	// each other).
	Plan       string `json:"plan,omitempty"`
	PlanDigest string `json:"plan_digest,omitempty"`
	Shard      string `json:"shard,omitempty"`
	// ExpectedRuns is the number of runs the settings (and shard) call
	// for; a directory with fewer is incomplete.
	ExpectedRuns int `json:"expected_runs"`
	// ExpectedRunsUnknown says that ExpectedRuns (then 0) could not be
	// recovered: the manifest was rebuilt by repair from what was left
	// of it and from the records (a merge or a run killed before writing
	// it), so the runs missing from the directory cannot be counted.
	ExpectedRunsUnknown bool `json:"expected_runs_unknown,omitempty"`
	// MissingShards are the shards of the series a merge was made
	// without (merge --allow-missing: "1/3, 2/3"): their runs are neither
	// held nor counted in ExpectedRuns, so the directory is not the whole
	// run.
	MissingShards string `json:"missing_shards,omitempty"`
	Started       string `json:"started"`
	Finished      string `json:"finished,omitempty"`
	Interrupted   bool   `json:"interrupted,omitempty"`
	// TokenBudgetSpent says the run stopped at --max-tokens-total.
	TokenBudgetSpent bool `json:"token_budget_spent,omitempty"`
	// Revisions lists the module versions and VCS revisions of every
	// session that added runs, when the build knows them.
	Revisions []string `json:"revisions,omitempty"`
	// Build is the rest of what the binary of the last session knew of
	// its build (Version and GitRevision hold the module version and the
	// revision); nil in manifests written before it was recorded.
	Build *Build `json:"build,omitempty"`
	// AttackTemplates holds the template of each attack of the run read
	// from a file (run --attack-file, or file:PATH in --attack), by the
	// attack's name (bench.AttackFileName), as the file held it when the
	// run was planned: show and browse word a run's injections by it
	// (RunCase), and a resume with another template is refused. Absent
	// when no attack is read from a file.
	AttackTemplates map[string]string `json:"attack_templates,omitempty"`
}

// Build is what a binary knows of its build (runtime/debug.ReadBuildInfo)
// beyond its module version and VCS revision: the Go toolchain, the
// revision's commit time (RFC 3339) and whether the working tree had
// changes not committed (a "dirty" build, whose revision does not say
// what ran).
type Build struct {
	Go          string `json:"go"`
	VCSTime     string `json:"vcs_time,omitempty"`
	VCSModified bool   `json:"vcs_modified,omitempty"`
	// RevisionSource says where the manifest's git_revision came from:
	// "go" (Go's VCS stamp), "ldflags" (set at link time), or
	// "checkout:DIR" (the HEAD of the git checkout at DIR, read because
	// the build records none: the binary may not have been built from
	// it); empty when there is none.
	RevisionSource string `json:"revision_source,omitempty"`
}

// Key is what makes two manifests the same run, as JSON: every setting,
// without the times, the builds, the outcome flags, the expected runs
// (which follow from the rest and differ between shards) and the prompt
// template's file name (its content is in PromptVersion). The attacks
// are compared as a set: a run's id names its attack, so the order they
// were given in makes the same runs.
func (m Manifest) Key() string {
	m.Attack = sortedList(m.Attack)
	m.Started, m.Finished, m.Interrupted, m.Version, m.GitRevision, m.Revisions, m.Build = "", "", false, "", "", nil, nil
	m.TokenBudgetSpent, m.Plan, m.PlanDigest = false, "", ""
	m.Spec = m.Spec.Keyed()
	m.ExpectedRuns, m.ExpectedRunsUnknown, m.MissingShards = 0, false, "" // follow from the rest (and differ between shards)
	b, _ := json.Marshal(m)
	return string(b)
}

// sortedList is a comma list with its items sorted.
func sortedList(s string) string {
	items := strings.Split(s, ",")
	slices.Sort(items)
	return strings.Join(items, ",")
}

// unkeyed are the manifest's members that Key leaves out.
var unkeyed = func() map[string]bool {
	u := map[string]bool{
		"started": true, "finished": true, "interrupted": true, "version": true, "git_revision": true,
		"revisions": true, "expected_runs": true, "token_budget_spent": true, "build": true,
		"plan": true, "plan_digest": true, "expected_runs_unknown": true, "missing_shards": true,
	}
	for _, m := range runspec.Unkeyed() {
		u[m] = true
	}
	return u
}()

// memberOrder is the order of the members of manifest.json: the order
// they have had since before the settings were a runspec.Spec, so that a
// manifest's JSON, and Key (whose hash names DefaultDir), stay what they
// were for the same settings. A member not listed (a setting added
// since) comes after them, in the order of the fields.
var memberOrder = []string{
	"module", "version", "git_revision", "case_set", "case_digest", "cases", "case_ids", "configs", "config_details",
	"actors", "actor_specs", "rounds", "seed", "temperature", "max_output_tokens", "openai_base_url", "ollama_host", "anthropic_base_url",
	"endpoints",
	"structured", "max_answer_bytes", "protocol", "disclosure", "max_turns", "max_tool_calls", "max_step_bytes",
	"max_attempts", "pass_threshold", "tokenizer", "prompt_version", "prompt_template", "plan", "plan_digest", "shard",
	"expected_runs", "expected_runs_unknown", "missing_shards", "started", "finished", "interrupted",
	"token_budget_spent", "revisions", "build",
}

// SetEndpoint records a provider's endpoint under its manifest member
// (actors.EnvVar.Manifest): openai_base_url, ollama_host and
// anthropic_base_url are members of their own, as manifests have always
// had them; any other member goes in Endpoints (when value is not "").
func (m *Manifest) SetEndpoint(member, value string) {
	switch member {
	case "openai_base_url":
		m.OpenAIBaseURL = value
	case "ollama_host":
		m.OllamaHost = value
	case "anthropic_base_url":
		m.AnthropicBaseURL = value
	default:
		if value == "" {
			return
		}
		if m.Endpoints == nil {
			m.Endpoints = map[string]string{}
		}
		m.Endpoints[member] = value
	}
}

// MarshalJSON writes the manifest's members in memberOrder, the settings
// as recorded (runspec.Spec.Recorded).
func (m Manifest) MarshalJSON() ([]byte, error) {
	type plain Manifest // without this method
	m.Spec = m.Spec.Recorded()
	b, err := json.Marshal(plain(m))
	if err != nil {
		return nil, err
	}
	return reorderMembers(b, memberOrder)
}

// reorderMembers writes the JSON object b with its members in order (the
// names listed first, in the list's order, then the others in b's),
// each member's value as it is in b.
func reorderMembers(b []byte, order []string) ([]byte, error) {
	type member struct {
		name string
		raw  json.RawMessage
	}
	var members []member
	dec := json.NewDecoder(bytes.NewReader(b))
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		members = append(members, member{t.(string), raw})
	}
	rank := func(name string) int {
		if i := slices.Index(order, name); i >= 0 {
			return i
		}
		return len(order)
	}
	slices.SortStableFunc(members, func(a, b member) int { return rank(a.name) - rank(b.name) })
	var out bytes.Buffer
	out.WriteByte('{')
	for i, mb := range members {
		if i > 0 {
			out.WriteByte(',')
		}
		name, _ := json.Marshal(mb.name)
		out.Write(name)
		out.WriteByte(':')
		out.Write(mb.raw)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Differences names the settings (JSON member names) in which two
// manifests differ, sorted; the members Key leaves out are not compared.
func (m Manifest) Differences(o Manifest) []string {
	m.Attack, o.Attack = sortedList(m.Attack), sortedList(o.Attack)
	var a, b map[string]any
	ja, _ := json.Marshal(m)
	jb, _ := json.Marshal(o)
	json.Unmarshal(ja, &a)
	json.Unmarshal(jb, &b)
	var out []string
	for k := range a {
		if unkeyed[k] {
			continue
		}
		x, _ := json.Marshal(a[k])
		y, _ := json.Marshal(b[k])
		if string(x) != string(y) {
			out = append(out, k)
		}
	}
	for k := range b {
		if _, ok := a[k]; !ok && !unkeyed[k] {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

// Configurations returns the configurations the manifest recorded (name,
// label, view and gates), in their order; a manifest without their
// details gives each name as its own label.
func (m *Manifest) Configurations() []*bench.Config {
	if len(m.ConfigDetails) > 0 {
		return m.ConfigDetails
	}
	var out []*bench.Config
	for _, n := range m.Configs {
		out = append(out, &bench.Config{Name: n, Label: n})
	}
	return out
}

// ReadManifest reads dir/manifest.json: an error wrapping
// os.ErrNotExist when there is none, a *ManifestError when it is not a
// manifest.
func ReadManifest(dir string) (*Manifest, error) {
	path := filepath.Join(dir, ManifestFile)
	b, err := readRegular(path, maxManifestBytes)
	if err != nil {
		return nil, err
	}
	return parseManifest(path, b)
}

// ManifestError is a manifest.json that does not decode, or holds a
// member no run writes (Member): the file, the line and byte offset (from
// 0) where decoding failed (the end of the file when it is cut short) or
// the member starts, and why. Its message points to patchbench
// repair, which restores the manifest from its backup.
type ManifestError struct {
	Path   string
	Line   int
	Offset int64
	// Member names the member that decodes but holds a value no run
	// writes ("rounds": Manifest.check), "" when the file does not
	// decode; Line and Offset are then where the member starts.
	Member string
	Err    error
}

func (e *ManifestError) Error() string {
	if e.Member != "" {
		return fmt.Sprintf("%s:%d: %q %v (byte offset %d); run \"%s\" to restore it from its backup", e.Path, e.Line, e.Member, e.Err, e.Offset, e.RepairCommand())
	}
	return fmt.Sprintf("%s:%d: %v (byte offset %d); run \"%s\" to restore it", e.Path, e.Line, e.Err, e.Offset, e.RepairCommand())
}

func (e *ManifestError) Unwrap() error { return e.Err }

// RepairCommand is the command the message points to: patchbench repair
// and the manifest's directory.
func (e *ManifestError) RepairCommand() string { return repairCommand(e.Path) }

// parseManifest decodes the manifest file at path; an error is a
// *ManifestError.
func parseManifest(path string, b []byte) (*Manifest, error) {
	var m Manifest
	if err := json.Unmarshal(b, &m); err != nil {
		off := int64(len(b)) // cut short: "unexpected end of JSON input"
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		switch {
		case errors.As(err, &se):
			off = se.Offset
		case errors.As(err, &te):
			off = te.Offset
		}
		off = min(max(off, 0), int64(len(b)))
		return nil, &ManifestError{Path: path, Line: 1 + bytes.Count(b[:off], []byte("\n")), Offset: off, Err: err}
	}
	// A member named twice decodes as its last value under encoding/json;
	// the manifest a run writes never has one (a hand edit can: "rounds" named
	// twice was read as its last value).
	if _, err := runtime.ParseDocument(b); err != nil {
		var se *runtime.SyntaxError
		if errors.As(err, &se) {
			return nil, &ManifestError{Path: path, Line: se.Line, Offset: se.Offset, Err: errors.New(se.Msg)}
		}
		return nil, &ManifestError{Path: path, Line: 1, Err: err}
	}
	if member, err := m.check(); err != nil {
		off := memberOffset(b, member)
		return nil, &ManifestError{Path: path, Line: 1 + bytes.Count(b[:off], []byte("\n")), Offset: off, Member: member, Err: err}
	}
	return &m, nil
}

// Bounds of a manifest's members (Manifest.check): the bounds of run's
// flags (--rounds, --max-attempts, --max-answer-bytes).
const (
	maxManifestRounds   = 10000
	maxManifestAttempts = 100
	minAnswerBytes      = 1 << 10
	maxAnswerBytes      = 16 << 20
)

// check says which member of a manifest that decodes cannot be one a run
// wrote, and why: rounds outside [1, 10000]; cases (when recorded) that
// do not count the case_ids; an empty, blank or repeated case id, configuration or actor;
// configuration details that do not name the configurations; an
// expected_runs above cases × configs × actors × rounds or negative;
// max_attempts above 100; a pass_threshold outside [0, 1]; a
// max_answer_bytes outside [1 KiB, 16 MiB]; attack_templates of
// attacks the run does not read from a file, or over 64 KiB; a shard
// that is not i/n.
// Members an older manifest may lack (case_ids, max_attempts, the
// configuration details) may be absent.
func (m *Manifest) check() (member string, err error) {
	distinct := func(name string, ids []string, required bool) (string, error) {
		if required && len(ids) == 0 {
			return name, errors.New("is empty; a run has at least one")
		}
		seen := map[string]bool{}
		for i, id := range ids {
			switch {
			case strings.TrimSpace(id) == "":
				return name, fmt.Errorf("item %d is blank", i)
			case seen[id]:
				return name, fmt.Errorf("%q is there twice", id)
			}
			seen[id] = true
		}
		return "", nil
	}
	if m.Rounds < 1 || m.Rounds > maxManifestRounds {
		return "rounds", fmt.Errorf("is %d; want an integer in [1, %d]", m.Rounds, maxManifestRounds)
	}
	if name, err := distinct("case_ids", m.CaseIDs, false); err != nil {
		return name, err
	}
	if len(m.CaseIDs) > 0 && m.Cases != 0 && m.Cases != len(m.CaseIDs) {
		return "case_ids", fmt.Errorf("names %d cases, but cases is %d", len(m.CaseIDs), m.Cases)
	}
	if m.Cases < 0 {
		return "cases", fmt.Errorf("is %d; want a count", m.Cases)
	}
	if name, err := distinct("configs", m.Configs, true); err != nil {
		return name, err
	}
	if len(m.ConfigDetails) > 0 {
		if len(m.ConfigDetails) != len(m.Configs) {
			return "config_details", fmt.Errorf("has %d configurations, but configs names %d", len(m.ConfigDetails), len(m.Configs))
		}
		for i, c := range m.ConfigDetails {
			if c == nil || c.Name != m.Configs[i] {
				return "config_details", fmt.Errorf("item %d is not configuration %q", i, m.Configs[i])
			}
		}
	}
	if name, err := distinct("actors", m.Actors, true); err != nil {
		return name, err
	}
	// The product saturates at math.MaxInt64 rather than wrap around:
	// each factor is bounded by the file's size (16 MiB) but rounds,
	// and six of them can pass 2^63.
	most := int64(1)
	for _, f := range []int{m.Cases, len(m.Configs), len(m.Actors), m.Rounds, strings.Count(m.Scale, ",") + 1, strings.Count(m.Attack, ",") + 1} {
		if f > 0 && most > math.MaxInt64/int64(f) {
			most = math.MaxInt64
			break
		}
		most *= int64(max(f, 0))
	}
	if m.ExpectedRuns < 0 || m.Cases > 0 && int64(m.ExpectedRuns) > most {
		return "expected_runs", fmt.Errorf("is %d; the settings call for at most %d runs (cases × configs × actors × rounds × scales × attacks)", m.ExpectedRuns, most)
	}
	if m.MaxAttempts < 0 || m.MaxAttempts > maxManifestAttempts {
		return "max_attempts", fmt.Errorf("is %d; want an integer in [1, %d]", m.MaxAttempts, maxManifestAttempts)
	}
	if !(m.PassThreshold >= 0 && m.PassThreshold <= 1) {
		return "pass_threshold", fmt.Errorf("is %v; want a number in [0, 1]", m.PassThreshold)
	}
	if m.MaxAnswerBytes != 0 && (m.MaxAnswerBytes < minAnswerBytes || m.MaxAnswerBytes > maxAnswerBytes) {
		return "max_answer_bytes", fmt.Errorf("is %d; want bytes in [%d, %d]", m.MaxAnswerBytes, minAnswerBytes, maxAnswerBytes)
	}
	for _, name := range slices.Sorted(maps.Keys(m.AttackTemplates)) {
		switch {
		case !bench.IsFileAttack(name) || !slices.Contains(strings.Split(m.Attack, ","), name):
			return "attack_templates", fmt.Errorf("holds %q, which is not an attack of the run read from a file (attacks: %q)", name, m.Attack)
		case len(m.AttackTemplates[name]) > bench.MaxAttackTemplateBytes:
			return "attack_templates", fmt.Errorf("holds a template of %s of %d bytes; at most %d", name, len(m.AttackTemplates[name]), bench.MaxAttackTemplateBytes)
		}
	}
	if m.Shard != "" {
		var i, n int
		if k, err := fmt.Sscanf(m.Shard, "%d/%d", &i, &n); err != nil || k != 2 || fmt.Sprintf("%d/%d", i, n) != m.Shard || i < 0 || i >= n || n > MaxShards {
			return "shard", fmt.Errorf("is %q; want i/n with 0 ≤ i < n ≤ %d", m.Shard, MaxShards)
		}
	}
	return "", nil
}

// memberOffset is the byte offset of the top-level member name in the JSON
// object b (where its name starts), or 0 when it is not found.
func memberOffset(b []byte, name string) int64 {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return 0
	}
	for dec.More() {
		off := dec.InputOffset()
		t, err := dec.Token()
		if err != nil {
			return 0
		}
		if k, ok := t.(string); ok && k == name {
			// InputOffset was before the comma and spaces: find the name.
			if i := bytes.Index(b[off:], []byte(strconv.Quote(name))); i >= 0 {
				return off + int64(i)
			}
			return off
		}
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return 0
		}
	}
	return 0
}

// CheckManifest refuses dir for a run of manifest m when it holds a run of
// other settings (the error names the settings that differ, Differences)
// or is not a run directory but holds files. It returns the manifest
// already there, or nil for a new or empty directory. A directory that a
// run was killed in while creating it (no manifest yet, an empty
// runs.jsonl, the lock file, temporary files) counts as new; one whose
// manifest.json is missing but whose backup is there is read from the
// backup.
func CheckManifest(dir string, m Manifest) (*Manifest, error) {
	old, err := ReadManifest(dir)
	if errors.Is(err, os.ErrNotExist) {
		if b, berr := readRegular(filepath.Join(dir, ManifestBackupFile), maxManifestBytes); berr == nil {
			// Killed between writing the backup and the manifest.
			old, err = parseManifest(filepath.Join(dir, ManifestBackupFile), b)
		} else {
			if !unstarted(dir) {
				return nil, errorf(CodeNotRunDir, "%s is not empty and holds no %s; choose a new or empty --out", dir, ManifestFile)
			}
			return nil, nil
		}
	}
	if err != nil {
		return nil, err
	}
	if old.Key() != m.Key() {
		if diff := old.Differences(m); slices.Contains(diff, "scale") {
			// The scales are a dimension of the runs: say which the
			// directory holds, and how to go on with them.
			was, now := cmp.Or(old.Scale, "1x"), cmp.Or(m.Scale, "1x")
			return nil, errorf(CodeSettingsDiffer, "%s holds runs at the scales %s, not %s (%s differ); rerun with --scale %s to resume, or choose another --out for other scales",
				dir, was, now, strings.Join(diff, ", "), was)
		}
		return nil, errorf(CodeSettingsDiffer, "%s holds a run with other settings (%s differ); rerun with its settings to resume, or choose another --out",
			dir, strings.Join(old.Differences(m), ", "))
	}
	return old, nil
}

// unstarted reports whether dir holds nothing but what a run leaves before
// its manifest is written: the lock file, an empty runs.jsonl and
// temporary files of atomic writes (or nothing, or does not exist).
func unstarted(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return true
	}
	for _, e := range entries {
		name := e.Name()
		switch {
		case name == LockFile:
		case name == RunsFile:
			if fi, err := e.Info(); err != nil || fi.Size() > 0 {
				return false
			}
		case strings.HasPrefix(name, "."+ManifestFile+".") || strings.HasPrefix(name, "."+ManifestBackupFile+"."):
		default:
			return false
		}
	}
	return true
}

// DefaultDir is the run directory of a run's settings under root:
// root/run-<the first 10 hex digits of the SHA-256 of Key>, the same for
// the same settings, so that the same command again resumes.
func DefaultDir(root string, m Manifest) string {
	sum := sha256.Sum256([]byte(m.Key()))
	return filepath.Join(root, "run-"+hex.EncodeToString(sum[:])[:10])
}

// CaseDigest is the manifest's case_digest: the hex SHA-256 over the
// cases' ids and file digests (bench.Case.Digest), in order; it changes
// when anything in a case file does.
func CaseDigest(cases []*bench.Case) string {
	h := sha256.New()
	for _, c := range cases {
		fmt.Fprintf(h, "%s\x00%s\x00", c.ID, c.Digest)
	}
	return hex.EncodeToString(h.Sum(nil))
}
