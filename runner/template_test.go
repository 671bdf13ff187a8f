package runner

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runspec"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/tools"
)

// TestDefaultPromptVersion checks that the embedded template's version is
// its declared version and the hash of the file, as before templates could
// be replaced.
func TestDefaultPromptVersion(t *testing.T) {
	b, err := os.ReadFile("prompt.tmpl")
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if want := "patchbench-prompt/2+" + hex.EncodeToString(sum[:])[:12]; PromptVersion != want || DefaultPrompt.Version != want {
		t.Errorf("version %q / %q, want %q", PromptVersion, DefaultPrompt.Version, want)
	}
}

// ablation is a template for a prompt ablation: no patch-source list and a
// terse system message.
const ablation = `{{define "version"}}ablation/no-source{{end}}
{{define "system"}}You are the {{.Role}}. Answer with {"patch": [...], "note": "..."} only.{{end}}
{{define "user"}}Task: {{.Instruction}}
Phase: {{.Phase}}{{if .Now}} at {{.Now}}{{end}}
Write: {{range .Write}}{{.}} {{end}}
State:
{{.View}}
{{range .Feedback}}Rejected: {{.}}
{{end}}{{end}}`

func TestParsePrompt(t *testing.T) {
	p, err := ParsePrompt("ablation.tmpl", []byte(ablation))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(ablation))
	if want := "ablation/no-source+" + hex.EncodeToString(sum[:])[:12]; p.Version != want {
		t.Errorf("version %q, want %q", p.Version, want)
	}
	c, _ := loadExample(t)
	s := c.Steps[0]
	msgs, err := p.Render(s, "triage", c.Now, s.Contract.View(c.State), []string{"scope: write_outside_region: x"})
	if err != nil {
		t.Fatal(err)
	}
	if len(msgs) != 2 || !strings.HasPrefix(msgs[0].Content, "You are the agent.") || !strings.Contains(msgs[1].Content, "Rejected: scope: write_outside_region: x") ||
		strings.Contains(msgs[1].Content, "may read") || !strings.Contains(msgs[1].Content, "/ticket/reply") {
		t.Errorf("messages %+v", msgs)
	}

	// No version declared, no system message.
	q, err := ParsePrompt("user-only.tmpl", []byte(`{{define "system"}} {{end}}{{define "user"}}{{.Instruction}}{{end}}`))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(q.Version, "custom+") || len(q.Version) != len("custom+")+12 {
		t.Errorf("version %q", q.Version)
	}
	msgs, _ = q.Render(s, "triage", "", c.State.Value(), nil)
	if len(msgs) != 1 || msgs[0].Role != "user" {
		t.Errorf("an empty system message is sent: %+v", msgs)
	}

	for _, tc := range []struct{ name, text, want string }{
		{"no user", `{{define "system"}}x{{end}}`, `no {{define "user"}}`},
		{"no system", `{{define "user"}}x{{end}}`, `no {{define "system"}}`},
		{"syntax", "{{define \"system\"}}x{{end}}\n{{define \"user\"}}{{.Role}{{end}}", "bad.tmpl:2"},
		{"unknown field", "{{define \"system\"}}x{{end}}\n{{define \"user\"}}{{.Case}}{{end}}", "can't evaluate field Case"},
		{"unknown function", `{{define "system"}}x{{end}}{{define "user"}}{{shout .Role}}{{end}}`, `function "shout" not defined`},
		{"empty user", `{{define "system"}}x{{end}}{{define "user"}}{{if .Feedback}}retry{{end}}{{end}}`, `"user" renders empty`},
		{"two-line version", `{{define "version"}}a` + "\n" + `b{{end}}{{define "system"}}x{{end}}{{define "user"}}y{{end}}`, `"version" must render one line`},
		{"not UTF-8", "{{define \"system\"}}\xff{{end}}{{define \"user\"}}y{{end}}", "not UTF-8"},
		{"too large", `{{define "system"}}x{{end}}{{define "user"}}y{{end}}` + strings.Repeat(" ", MaxPromptTemplateBytes), "larger than 1024 KiB"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParsePrompt("bad.tmpl", []byte(tc.text))
			if err == nil || !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), "bad.tmpl") {
				t.Errorf("error %v, want one naming bad.tmpl and saying %q", err, tc.want)
			}
		})
	}
}

// TestRunWithPromptTemplate runs the example with a replaced template: the
// actor is sent the template's messages.
func TestRunWithPromptTemplate(t *testing.T) {
	c, cfgs := loadExample(t)
	p, err := ParsePrompt("ablation.tmpl", []byte(ablation))
	if err != nil {
		t.Fatal(err)
	}
	sink := &memSink{}
	opts := Options{Cases: []*bench.Case{c}, Configs: cfgs, Actors: []actors.Actor{actors.Reference{}}, Spec: runspec.Spec{Rounds: 1, MaxAttempts: 1, PassThreshold: 0.8}, Concurrency: 2, Prompt: p}
	if err := Run(context.Background(), opts, nil, sink); err != nil {
		t.Fatal(err)
	}
	for _, r := range sink.recs {
		if r.Status != rundir.StatusPassed || !strings.HasPrefix(r.Steps[0].Prompt[0].Content, "You are the agent. Answer with") {
			t.Errorf("%s: %s, prompt %+v", r.RunID, r.Status, r.Steps[0].Prompt)
		}
	}
}

// Render is RenderJSON with the view as a value, for the tests: it renders
// the messages for one attempt at a step: the same
// instruction, W and P in every configuration; only view (the projected
// view or the full state) differs. now is the scenario's current time
// (the case's now), shown when not empty. feedback, on a retry, holds the
// verifier's codes and redacted messages.
func (p *Prompt) Render(step *bench.Step, phase, now string, view any, feedback []string) ([]actors.Message, error) {
	v, err := runtime.EncodeIndent(view, "  ")
	if err != nil {
		return nil, err
	}
	return p.RenderJSON(step, phase, now, string(v), feedback)
}

// TestToolsVersionCoversTheTools: the tools prompt's version changes when
// a tool's schema or usage changes, or a tool is added, with the template
// the same; it keeps the template's declared version.
func TestToolsVersionCoversTheTools(t *testing.T) {
	if !strings.HasPrefix(ToolsPrompt.Version, "patchbench-tools/") {
		t.Fatalf("version %q", ToolsPrompt.Version)
	}
	if got := toolsVersion(ToolsPrompt, toolsPromptText, tools.All); got != ToolsPrompt.Version {
		t.Fatalf("toolsVersion %q, ToolsPrompt.Version %q", got, ToolsPrompt.Version)
	}
	reworded := slices.Clone(tools.All)
	reworded[0].Usage += " and more"
	described := slices.Clone(tools.All)
	described[1].Description += "."
	added := append(slices.Clone(tools.All), tools.Def{Spec: tools.Spec{Name: "diff_state"}, Usage: "diff_state() shows the patch so far"})
	seen := map[string]string{ToolsPrompt.Version: "the tools"}
	for name, defs := range map[string][]tools.Def{"a usage reworded": reworded, "a description changed": described, "a tool added": added} {
		v := toolsVersion(ToolsPrompt, toolsPromptText, defs)
		if other, ok := seen[v]; ok {
			t.Errorf("%s: version %s, as with %s", name, v, other)
		}
		seen[v] = name
	}
}
