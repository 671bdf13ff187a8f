package runner

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"text/template"
	"unicode/utf8"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
)

// MaxPromptTemplateBytes bounds a prompt template file (1 MiB).
const MaxPromptTemplateBytes = 1 << 20

// Prompt is a prompt template (text/template): it defines "system" and
// "user", the two messages of every attempt, and may define "version".
// Both are rendered with the same data in every configuration (only the
// view differs):
//
//	.Role         the step's role
//	.Instruction  the step's instruction
//	.Phase        the workflow's current phase
//	.Now          the scenario's current time (the case's now), or ""
//	.View         the state as shown: indented JSON with sorted keys
//	.Write        the write region's patterns ([]string)
//	.Source       the patch-source region's patterns ([]string, maybe empty)
//	.Feedback     after a rejection, the verifier's codes and redacted
//	              messages ([]string; empty on a first attempt)
//
// A system message that renders empty is left out.
type Prompt struct {
	tmpl *template.Template
	// Version is the template's declared version ("version", or
	// "custom" when it declares none), "+", and the first 12 hex digits
	// of the SHA-256 of its text: what the manifest records as
	// prompt_version, part of a run's settings.
	Version string
	// declared is the template's declared version, the part of Version
	// before its "+".
	declared string
}

// ParsePrompt parses a prompt template's text; name (the file) is used in
// errors. It is rendered once with sample data, so that a field the data
// does not have, or a missing "system" or "user", is an error now rather
// than in every run. Errors name the file and, from text/template, the
// line.
func ParsePrompt(name string, text []byte) (*Prompt, error) {
	switch {
	case len(text) > MaxPromptTemplateBytes:
		return nil, fmt.Errorf("prompt template %s: larger than %d KiB", name, MaxPromptTemplateBytes>>10)
	case !utf8.Valid(text):
		return nil, fmt.Errorf("prompt template %s: not UTF-8", name)
	}
	t, err := template.New(name).Parse(string(text))
	if err != nil {
		return nil, fmt.Errorf("prompt template %s: %w", name, err)
	}
	for _, def := range []string{"system", "user"} {
		if t.Lookup(def) == nil {
			return nil, fmt.Errorf(`prompt template %s: no {{define "%s"}} (a template defines "system" and "user", and may define "version")`, name, def)
		}
	}
	declared := "custom"
	if t.Lookup("version") != nil {
		var b bytes.Buffer
		if err := t.ExecuteTemplate(&b, "version", nil); err != nil {
			return nil, fmt.Errorf("prompt template %s: %w", name, err)
		}
		declared = strings.TrimSpace(b.String())
		if declared == "" || len(declared) > 100 || strings.ContainsAny(declared, "\n\r") {
			return nil, fmt.Errorf(`prompt template %s: "version" must render one line of 1 to 100 characters, not %q`, name, declared)
		}
	}
	sum := sha256.Sum256(text)
	p := &Prompt{tmpl: t, Version: declared + "+" + hex.EncodeToString(sum[:])[:12], declared: declared}
	for _, d := range []promptData{
		{Role: "analyst", Instruction: "Do the task.", Phase: "review", Now: "2025-01-02T03:04:05Z", View: "{}",
			Write: []string{"/a"}, Source: []string{"/b"}, Feedback: []string{"scope: write_outside_region: operation 0 writes /c"}},
		{Role: "analyst", Instruction: "Do the task.", Phase: "review", View: "{}", Write: []string{"/a"}},
	} {
		msgs, err := p.render(d)
		if err != nil {
			return nil, err
		}
		if strings.TrimSpace(msgs[len(msgs)-1].Content) == "" {
			return nil, fmt.Errorf(`prompt template %s: "user" renders empty`, name)
		}
	}
	return p, nil
}

// RenderJSON renders the messages for one attempt at a step: the same
// instruction, W and P in every configuration; only the view (the
// projected view or the full state, viewJSON, as runtime.EncodeIndent with
// two spaces writes it) differs. The runner has the view encoded for the
// step's digest and token count, so it is encoded once per step. now is
// the scenario's current time (the case's now), shown when not empty.
// feedback, on a retry, holds the verifier's codes and redacted messages.
func (p *Prompt) RenderJSON(step *bench.Step, phase, now, viewJSON string, feedback []string) ([]actors.Message, error) {
	return p.render(promptData{
		Role: step.Role, Instruction: strings.TrimSpace(step.Instruction), Phase: phase, Now: now, View: viewJSON,
		Write: step.Contract.Write().Strings(), Source: step.Contract.Source().Strings(), Feedback: feedback,
	})
}

func (p *Prompt) render(d promptData) ([]actors.Message, error) {
	var sys, user bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&sys, "system", d); err != nil {
		return nil, fmt.Errorf("prompt template %w", err)
	}
	if err := p.tmpl.ExecuteTemplate(&user, "user", d); err != nil {
		return nil, fmt.Errorf("prompt template %w", err)
	}
	if strings.TrimSpace(sys.String()) == "" {
		return []actors.Message{{Role: "user", Content: user.String()}}, nil
	}
	return []actors.Message{{Role: "system", Content: sys.String()}, {Role: "user", Content: user.String()}}, nil
}

// promptData is what the template is rendered with.
type promptData struct {
	Role, Instruction, Phase, Now, View string
	Write, Source                       []string
	Feedback                            []string
	// Outline says View is an outline of the view (the tools protocol's
	// progressive disclosure), not the view whole.
	Outline bool
	// Tools names the tools of the tools protocol, each with what it
	// does (tools.Usages), and ToolCount says how many there are, as a
	// word (tools.Count).
	Tools, ToolCount string
}
