package runner

import (
	"encoding/json"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Run statuses (PatchBench design §7). An error run (the actor failed) is
// never counted as a leak, a pass or a failure.
const (
	StatusPassed = "passed"
	StatusFailed = "failed"
	StatusError  = "error"
)

// Record is one finished run: one line of runs.jsonl.
type Record struct {
	RunID  string         `json:"run_id"`
	Case   string         `json:"case"`
	Domain string         `json:"domain"`
	Config string         `json:"config"`
	Actor  string         `json:"actor"`
	Round  int            `json:"round"`
	Status string         `json:"status"`
	Leaked bool           `json:"leaked"`
	Leaks  []scoring.Leak `json:"leaks"`
	Tokens actors.Usage   `json:"tokens"`
	// TokensSent is the part of Tokens sent to a provider (not answered
	// from the response cache): what the run cost.
	TokensSent   int             `json:"tokens_sent"`
	ContentScore float64         `json:"content_score"`
	SemanticPass bool            `json:"semantic_pass"`
	Error        *string         `json:"error"`
	Steps        []StepRecord    `json:"steps"`
	FinalState   json.RawMessage `json:"final_state,omitempty"`
}

// StepRecord is the trace of one step of a run: its attempts, whether it
// committed, the verifier's decisions on the last attempt, the view
// shown (its SHA-256 and size in tokens) and the raw responses.
type StepRecord struct {
	Step        string               `json:"step"`
	Phase       string               `json:"phase"`
	Attempts    int                  `json:"attempts"`
	Committed   bool                 `json:"committed"`
	Decisions   []runtime.GateResult `json:"decisions"`
	ViewDigest  string               `json:"view_digest"`
	ViewTokens  int                  `json:"view_tokens"`
	RawResponse string               `json:"raw_response"`
	// Prompt is the messages of the last attempt; Patch the operations
	// the verifier decoded from its response (absent when malformed).
	Prompt []actors.Message    `json:"prompt"`
	Patch  []runtime.Operation `json:"patch,omitempty"`
	// Model and Fingerprint are what a live provider said answered the
	// last attempt (the resolved model, its system_fingerprint).
	Model       string `json:"model,omitempty"`
	Fingerprint string `json:"system_fingerprint,omitempty"`
	// LatencyMS is the provider's time for the last attempt; Cached says
	// it came from the response cache.
	LatencyMS int64 `json:"latency_ms,omitempty"`
	Cached    bool  `json:"cached,omitempty"`
	// Earlier holds the rejected attempts before the last, in order.
	Earlier []Attempt `json:"earlier,omitempty"`
}

// Attempt is a rejected attempt at a step.
type Attempt struct {
	RawResponse string               `json:"raw_response"`
	Decisions   []runtime.GateResult `json:"decisions"`
}
