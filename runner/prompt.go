package runner

import (
	_ "embed"
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
