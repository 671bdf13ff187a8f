package runner

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"strings"
	"text/template"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/runtime"
)

//go:embed prompt.tmpl
var promptText string

var promptTemplate = template.Must(template.New("prompt").Parse(promptText))

// PromptVersion is the version of the prompt template (runner/prompt.tmpl):
// its declared version and the first 12 hex digits of the SHA-256 of the
// file, so that an edit without a new version still changes it. It is
// recorded in every run's manifest and is part of a run's settings.
var PromptVersion = func() string {
	var b bytes.Buffer
	if err := promptTemplate.ExecuteTemplate(&b, "version", nil); err != nil {
		panic(err)
	}
	sum := sha256.Sum256([]byte(promptText))
	return strings.TrimSpace(b.String()) + "+" + hex.EncodeToString(sum[:])[:12]
}()

// promptData is what the template is rendered with.
type promptData struct {
	Role, Instruction, Phase, Now, View string
	Write, Source                       []string
	Feedback                            []string
}

// RenderPrompt renders the messages for one attempt at a step: the same
// instruction, W and P in every configuration; only view (the projected
// view or the full state) differs. now is the scenario's current time
// (the case's now), shown when not empty. feedback, on a retry, holds the
// verifier's codes and redacted messages.
func RenderPrompt(step *bench.Step, phase, now string, view any, feedback []string) ([]actors.Message, error) {
	v, err := runtime.EncodeIndent(view, "  ")
	if err != nil {
		return nil, err
	}
	return renderPrompt(step, phase, now, string(v), feedback)
}

// renderPrompt is RenderPrompt with the view already encoded
// (runtime.EncodeIndent with two spaces), as the runner has it for the
// step's digest and token count.
func renderPrompt(step *bench.Step, phase, now, viewJSON string, feedback []string) ([]actors.Message, error) {
	d := promptData{
		Role: step.Role, Instruction: strings.TrimSpace(step.Instruction), Phase: phase, Now: now, View: viewJSON,
		Write: step.Contract.Write().Strings(), Source: step.Contract.Source().Strings(), Feedback: feedback,
	}
	var sys, user bytes.Buffer
	if err := promptTemplate.ExecuteTemplate(&sys, "system", d); err != nil {
		return nil, err
	}
	if err := promptTemplate.ExecuteTemplate(&user, "user", d); err != nil {
		return nil, err
	}
	return []actors.Message{{Role: "system", Content: sys.String()}, {Role: "user", Content: user.String()}}, nil
}
