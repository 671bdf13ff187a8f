package runner

import (
	_ "embed"
	"encoding/json"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
)

//go:embed prompt.tmpl
var promptText string

// DefaultPrompt is the embedded prompt template, runner/prompt.tmpl.
var DefaultPrompt = func() *Prompt {
	p, err := ParsePrompt("prompt.tmpl", []byte(promptText))
	if err != nil {
		panic(err)
	}
	return p
}()

// PromptVersion is the version of the embedded prompt template
// (runner/prompt.tmpl): its declared version and the first 12 hex digits
// of the SHA-256 of the file, so that an edit without a new version still
// changes it. It is recorded in every run's manifest and is part of a
// run's settings; --prompt-template replaces it with its file's
// (Prompt.Version).
var PromptVersion = DefaultPrompt.Version

// promptData is what the template is rendered with.
type promptData struct {
	Role, Instruction, Phase, Now, View string
	Write, Source                       []string
	Feedback                            []string
}

// RenderPrompt renders the messages for one attempt at a step with the
// embedded template (DefaultPrompt.Render).
func RenderPrompt(step *bench.Step, phase, now string, view any, feedback []string) ([]actors.Message, error) {
	return DefaultPrompt.Render(step, phase, now, view, feedback)
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
