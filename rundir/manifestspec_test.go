package rundir

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestManifestSpecJSON: a manifest written before the settings were a
// runspec.Spec reads back and writes out byte for byte (its members in
// their order), so its Key, and the default directory named by Key's
// hash, stay what they were.
func TestManifestSpecJSON(t *testing.T) {
	old := `{"module":"github.com/patchbench/patchbench","version":"v1","case_set":"embedded","case_digest":"d","cases":1,"case_ids":["a"],` +
		`"configs":["x"],"config_details":null,"actors":["reference"],"rounds":2,"seed":7,"temperature":0.5,"max_output_tokens":100,` +
		`"ollama_host":"http://h","structured":true,"max_answer_bytes":2048,"protocol":"tools","disclosure":"whole","max_turns":16,` +
		`"max_tool_calls":64,"max_step_bytes":4194304,"max_attempts":3,"pass_threshold":0.8,"tokenizer":"o200k_base",` +
		`"prompt_version":"p","prompt_template":"t.tmpl","shard":"0/2","expected_runs":1,"started":"2026-01-01T00:00:00Z"}`
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, ManifestFile), []byte(old), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := ReadManifest(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(m)
	if err != nil || string(b) != old {
		t.Errorf("written back (%v):\n%s\nwant\n%s", err, b, old)
	}
	if m.Rounds != 2 || m.MaxTurns != 16 || m.Temperature == nil || *m.Temperature != 0.5 || m.PromptTemplate != "t.tmpl" {
		t.Errorf("settings: %+v", m.Spec)
	}
	const key = `{"module":"github.com/patchbench/patchbench","version":"","case_set":"embedded","case_digest":"d","cases":1,"case_ids":["a"],` +
		`"configs":["x"],"config_details":null,"actors":["reference"],"rounds":2,"seed":7,"temperature":0.5,"max_output_tokens":100,` +
		`"ollama_host":"http://h","structured":true,"max_answer_bytes":2048,"protocol":"tools","disclosure":"whole","max_turns":16,` +
		`"max_tool_calls":64,"max_step_bytes":4194304,"max_attempts":3,"pass_threshold":0.8,"tokenizer":"o200k_base",` +
		`"prompt_version":"p","shard":"0/2","expected_runs":0,"started":""}`
	if got := m.Key(); got != key {
		t.Errorf("Key:\n%s\nwant\n%s", got, key)
	}
	// A json-protocol run records no tools budget however it was set.
	m.Protocol, m.MaxTurns = "json", 9
	if b, _ := json.Marshal(m); strings.Contains(string(b), `"max_turns"`) || strings.Contains(string(b), `"protocol"`) {
		t.Errorf("a json-protocol manifest records the tools protocol's members: %s", b)
	}
}
