package runner

import (
	"bytes"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
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
	d := promptData{
		Role: step.Role, Instruction: strings.TrimSpace(step.Instruction), Phase: phase, Now: now, View: string(v),
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

// ExtractProposal finds the proposal in an actor's raw response: the whole
// text when it is a JSON object, else the first fenced ```json block, else
// the first balanced {...} that decodes. It returns the bytes for the
// verifier, which decides whether they are a well-formed proposal; text
// with no JSON object is returned as it is, and the verifier rejects it as
// malformed (a legality failure, never a harness error).
func ExtractProposal(raw string) []byte {
	trimmed := strings.TrimSpace(raw)
	if json.Valid([]byte(trimmed)) {
		return []byte(trimmed)
	}
	if i := strings.Index(trimmed, "```"); i >= 0 {
		rest := trimmed[i+3:]
		if nl := strings.IndexByte(rest, '\n'); nl >= 0 {
			rest = rest[nl+1:]
		}
		if j := strings.Index(rest, "```"); j >= 0 {
			block := strings.TrimSpace(rest[:j])
			if json.Valid([]byte(block)) {
				return []byte(block)
			}
		}
	}
	for i := 0; i < len(trimmed); i++ {
		if trimmed[i] != '{' {
			continue
		}
		dec := json.NewDecoder(strings.NewReader(trimmed[i:]))
		var m json.RawMessage
		if dec.Decode(&m) == nil && len(m) > 0 && m[0] == '{' {
			return m
		}
	}
	return []byte(raw)
}
