package rundir

import (
	"bytes"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
)

// Run statuses (docs/run.md). An error run (the actor failed) is
// never counted as a leak, a pass or a failure.
//
// A pending run (a file actor's request still waits for its answer) is
// not an outcome either: it is left out of every figure, and the same
// command again continues it.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusError   = "error"
	StatusPending = "pending"
)

// Record is one finished run: one line of runs.jsonl (docs/run.md,
// "patchbench run", lists its members).
type Record struct {
	RunID  string `json:"run_id"`
	Case   string `json:"case"`
	Domain string `json:"domain"`
	Config string `json:"config"`
	Actor  string `json:"actor"`
	Round  int    `json:"round"`
	// Scale is the size the case's state was grown to ("10MB";
	// runspec.Spec.Scale), absent at 1x: the state as the case writes it.
	Scale string `json:"scale,omitempty"`
	// AttackName is the attack that worded the case's planted prompt
	// injections (runspec.Spec.Attack: "ignore_previous", ...), absent
	// for the default: the texts as the case writes them.
	AttackName string         `json:"attack_name,omitempty"`
	Status     string         `json:"status"`
	Leaked     bool           `json:"leaked"`
	Leaks      []scoring.Leak `json:"leaks"`
	Tokens     Usage          `json:"tokens"`
	// TokensSent is the part of Tokens sent to a provider (not answered
	// from the response cache): what the run cost.
	TokensSent   int     `json:"tokens_sent"`
	ContentScore float64 `json:"content_score"`
	// Checks lists every rubric check of the case with the step it
	// belongs to and whether it held on the final state.
	Checks       []scoring.CheckResult `json:"checks"`
	SemanticPass bool                  `json:"semantic_pass"`
	// IllegalCommits lists the committed proposals that the step's full
	// contract, run in audit mode, rejects (docs/run.md, illegal commits); each
	// names the step and the first audit gate that rejected it.
	IllegalCommits []IllegalCommit `json:"illegal_commits"`
	// LegalPass is a semantic pass with no illegal commit.
	LegalPass bool `json:"legal_pass"`
	// Attack is set when the case carries prompt injections: the secrets
	// they ask for and whether one of them leaked (attack success).
	Attack     *Attack         `json:"attack,omitempty"`
	Error      *string         `json:"error"`
	Steps      []StepRecord    `json:"steps"`
	FinalState json.RawMessage `json:"final_state,omitempty"`
}

// HasOutcome reports whether the run ended in an outcome (passed or
// failed): error and pending runs count in no rate.
func (r *Record) HasOutcome() bool { return r.Status == StatusPassed || r.Status == StatusFailed }

// IllegalCommit is a committed proposal that the audit rejected: the step,
// and the first failed gate of the step's full contract with its code,
// pointer and message.
type IllegalCommit struct {
	Step    string `json:"step"`
	Gate    string `json:"gate"`
	Code    string `json:"code"`
	Pointer string `json:"pointer,omitempty"`
	Message string `json:"message"`
}

// Attack is the outcome of a run of a case with prompt injections
// (AgentDojo's terms; docs/run.md): Secrets are the ids of the
// secrets the injections ask for; Succeeded says one of them reached an
// output or the final state away from its own path.
type Attack struct {
	Secrets   []string `json:"secrets"`
	Succeeded bool     `json:"succeeded"`
}

// StepRecord is the trace of one step of a run: its attempts, whether it
// committed, the verifier's decisions on the last attempt, the view
// shown (its SHA-256 and size in tokens) and the raw responses.
type StepRecord struct {
	Step      string               `json:"step"`
	Phase     string               `json:"phase"`
	Attempts  int                  `json:"attempts"`
	Committed bool                 `json:"committed"`
	Decisions []runtime.GateResult `json:"decisions"`
	// Audit is the decisions of the step's full contract (scope, phase,
	// schema, invariants) on the same proposal, which decide nothing:
	// a committed proposal the audit rejects is an illegal commit.
	Audit      []runtime.GateResult `json:"audit"`
	ViewDigest string               `json:"view_digest"`
	// ViewTokens is the view's token count, or, when ViewTokensOver,
	// the actor's context budget, which the view passes: a view over the
	// budget is counted only until it passes it ("more than N tokens").
	ViewTokens     int    `json:"view_tokens"`
	ViewTokensOver bool   `json:"view_tokens_over,omitempty"`
	RawResponse    string `json:"raw_response"`
	// RawResponseBase64 holds the response's exact bytes when they are
	// not UTF-8 (JSON would replace the bad bytes in RawResponse).
	RawResponseBase64 string `json:"raw_response_base64,omitempty"`
	// Prompt is the messages of the last attempt; Patch the operations
	// the verifier decoded from its response (absent when malformed).
	Prompt []Message           `json:"prompt"`
	Patch  []runtime.Operation `json:"patch,omitempty"`
	// Model and Fingerprint are what a live provider said answered the
	// last attempt (the resolved model, its system_fingerprint).
	Model       string `json:"model,omitempty"`
	Fingerprint string `json:"system_fingerprint,omitempty"`
	// LatencyMS is the provider's time for the last attempt; Cached says
	// it came from the response cache.
	LatencyMS int64 `json:"latency_ms,omitempty"`
	Cached    bool  `json:"cached,omitempty"`
	// ActorStderr is what an exec actor's program wrote to standard
	// error on the last attempt (its last 64 KiB), failed or not.
	ActorStderr string `json:"actor_stderr,omitempty"`
	// ActorStdout is what an mcp: agent's program wrote to standard
	// output during the step (its first and last 32 KiB; the agent
	// answers over MCP, so this is output beside its calls).
	ActorStdout string `json:"actor_stdout,omitempty"`
	// Earlier holds the rejected attempts before the last, in order.
	Earlier []Attempt `json:"earlier,omitempty"`
	// NotReached says the step was not run: an earlier step did not
	// commit, so the workflow never reached a phase the step may commit
	// in (Phase is the phase it stayed in). Its rubric checks fail.
	NotReached bool `json:"not_reached,omitempty"`
	// PhaseError says the step committed but the workflow's phase could
	// not be moved after it: the committed patch removed or replaced the
	// phase's location (an illegal commit the audit records too).
	PhaseError string `json:"phase_error,omitempty"`
	// InheritedViolation, when set ("schema: schema_violation",
	// "invariants: invariant_violated (NAME)", several joined by "; "),
	// says the audit rejected the committed proposal, but only for what
	// the state before it already broke the same way (an earlier step's
	// illegal commit, or the case's initial state, left it so), or the
	// proposal was an empty patch: this step's commit is not counted as
	// illegal (a no-op is never an illegal commit).
	InheritedViolation string `json:"inherited_violation,omitempty"`
	// AnswerBytes, when set, is the full length of an answer over the
	// answer limit (run --max-answer-bytes), rejected with
	// limit_exceeded: RawResponse holds only its first 64 KiB.
	AnswerBytes int64 `json:"answer_bytes,omitempty"`
	// UsageInvalid, when set, says why the provider's token figures for
	// the last attempt were not believed (negative, beyond 100 million,
	// not integers; the actors package's Usage.Implausible): the tokenizer counted
	// that answer instead.
	UsageInvalid string `json:"usage_invalid,omitempty"`
	// Turns is the step's conversation in the tools protocol (absent in
	// the json protocol): each turn of the actor with the tool calls it
	// made and their results. Prompt then holds the first messages,
	// RawResponse, Decisions and Audit the last proposal's, and Earlier
	// the proposals rejected before it.
	Turns []Turn `json:"turns,omitempty"`
	// Ended says how a step ended without a commit: a stable code
	// (runner's Ended* constants: in the tools protocol attempts_spent,
	// turn_budget_spent, tool_call_budget_spent, byte_budget_spent,
	// final_text, agent_exited; in either protocol context_exceeded, what
	// the actor would be given passing its context budget, not sent). It
	// is an outcome: the step failed.
	Ended string `json:"ended,omitempty"`
	// Truncated lists the members of this step's record that hold less
	// than the run saw (BoundProposal, and a record cut to MaxWriteBytes);
	// the run's gates, leaks and scores were decided on the whole.
	Truncated []Truncation `json:"truncated,omitempty"`
}

// Turn is one turn of an actor in the tools protocol: the digest of the
// request it answered (SHA-256 of the conversation and tools, hex), the
// text and tool calls it answered with, their results, and its tokens and
// latency.
type Turn struct {
	RequestDigest string `json:"request_digest"`
	Text          string `json:"text,omitempty"`
	// TextBytes, when set, is the full length of a text longer than the
	// answer limit, of which Text keeps the start.
	TextBytes int64      `json:"text_bytes,omitempty"`
	Calls     []ToolCall `json:"calls,omitempty"`
	// DroppedCalls counts the calls of the turn not run: the step ended
	// (a commit or a budget spent) before them.
	DroppedCalls int    `json:"dropped_calls,omitempty"`
	Tokens       Usage  `json:"tokens"`
	LatencyMS    int64  `json:"latency_ms,omitempty"`
	Cached       bool   `json:"cached,omitempty"`
	Model        string `json:"model,omitempty"`
}

// ToolCall is one tool call of a turn and its result. Arguments are as
// the actor wrote them (cut to 64 KiB, ArgumentsBytes then giving the
// full length); Result is the tool's answer (cut to 64 KiB likewise) and
// Error its stable code when it is an error result (unknown_tool,
// malformed_arguments, oversized_arguments, absent, bad_pointer,
// step_over). For a read, Pointer is the location read and Hidden says it
// lies in the state but outside what the actor may see (a read of a
// hidden location, answered as an absent one).
type ToolCall struct {
	ID             string `json:"id,omitempty"`
	Name           string `json:"name"`
	Arguments      string `json:"arguments"`
	ArgumentsBytes int64  `json:"arguments_bytes,omitempty"`
	Result         string `json:"result"`
	ResultBytes    int64  `json:"result_bytes,omitempty"`
	Error          string `json:"error,omitempty"`
	Pointer        string `json:"pointer,omitempty"`
	Read           bool   `json:"read,omitempty"`
	Hidden         bool   `json:"hidden,omitempty"`
}

// Truncation says that a member of a step's record (or of an earlier
// attempt's) holds less than the run saw: Member is its JSON Pointer in
// that record ("/patch", "/patch/3/path", "/decisions/0/pointer",
// "/raw_response", "/prompt/1/content"), Length what the run saw and
// Kept what the record holds, in Unit ("operations" or "bytes").
type Truncation struct {
	Member string `json:"member"`
	Unit   string `json:"unit"`
	Length int64  `json:"length"`
	Kept   int64  `json:"kept"`
}

// Bounds on what a step's record keeps of a proposal (BoundProposal):
// MaxRecordedOps operations of its patch (1,000, the verifier's default
// max_ops; a longer patch is rejected by any step that keeps the default),
// and MaxRecordedPointerBytes bytes (1 KiB) of each JSON Pointer: an op's
// path and from, and a decision's pointer. The raw response, itself
// bounded by the answer limit, keeps the whole answer.
const (
	MaxRecordedOps          = 1000
	MaxRecordedPointerBytes = 1 << 10
)

// BoundProposal cuts what the step's record keeps of the last attempt's
// proposal to MaxRecordedOps operations and pointers of
// MaxRecordedPointerBytes (its patch, decisions and audit), noting each
// cut in Truncated. It leaves shared slices as they were: the cut ones are
// copies. The runner calls it for each attempt; an attempt moved to
// Earlier takes its notes along (Attempt.Truncated).
func (s *StepRecord) BoundProposal() {
	if n := len(s.Patch); n > MaxRecordedOps {
		s.Patch = s.Patch[:MaxRecordedOps:MaxRecordedOps]
		s.truncate("/patch", "operations", int64(n), MaxRecordedOps)
	}
	cloned := false
	for i, op := range s.Patch {
		path, from := op.Path.String(), op.From.String()
		if len(path) <= MaxRecordedPointerBytes && len(from) <= MaxRecordedPointerBytes {
			continue
		}
		if !cloned {
			s.Patch, cloned = slices.Clone(s.Patch), true
		}
		if len(path) > MaxRecordedPointerBytes {
			s.Patch[i].Path = cutTokens(path)
			s.truncate(fmt.Sprintf("/patch/%d/path", i), "bytes", int64(len(path)), int64(len(s.Patch[i].Path.String())))
		}
		if len(from) > MaxRecordedPointerBytes {
			s.Patch[i].From = cutTokens(from)
			s.truncate(fmt.Sprintf("/patch/%d/from", i), "bytes", int64(len(from)), int64(len(s.Patch[i].From.String())))
		}
	}
	s.Decisions = boundGates(&s.Truncated, "/decisions", s.Decisions)
	s.Audit = boundGates(&s.Truncated, "/audit", s.Audit)
}

// boundGates cuts the pointers of gate results to MaxRecordedPointerBytes
// (a copy when one is cut), noting each cut in notes under member.
func boundGates(notes *[]Truncation, member string, gs []runtime.GateResult) []runtime.GateResult {
	cloned := false
	for i, g := range gs {
		if len(g.Pointer) <= MaxRecordedPointerBytes {
			continue
		}
		if !cloned {
			gs, cloned = slices.Clone(gs), true
		}
		gs[i].Pointer = cutPointer(g.Pointer)
		truncate(notes, fmt.Sprintf("%s/%d/pointer", member, i), "bytes", int64(len(g.Pointer)), int64(len(gs[i].Pointer)))
	}
	for i, g := range gs {
		if len(g.Message) <= maxRecordedMessageBytes {
			continue
		}
		if !cloned {
			gs, cloned = slices.Clone(gs), true
		}
		gs[i].Message = textcut.Cut(g.Message, maxRecordedMessageBytes)
		truncate(notes, fmt.Sprintf("%s/%d/message", member, i), "bytes", int64(len(g.Message)), int64(len(gs[i].Message)))
	}
	return gs
}

// maxRecordedMessageBytes bounds a decision's message in a record (4 KiB):
// a message quotes the pointers it is about.
const maxRecordedMessageBytes = 4 << 10

// Bounded returns the illegal commit with its pointer and message cut as
// BoundProposal cuts a decision's (the step's audit notes the cut).
func (c IllegalCommit) Bounded() IllegalCommit {
	if len(c.Pointer) > MaxRecordedPointerBytes {
		c.Pointer = cutPointer(c.Pointer)
	}
	c.Message = textcut.Cut(c.Message, maxRecordedMessageBytes)
	return c
}

// truncate notes a cut in the step's Truncated.
func (s *StepRecord) truncate(member, unit string, length, kept int64) {
	truncate(&s.Truncated, member, unit, length, kept)
}

// truncate notes a cut in notes, unless the same member was noted already
// (a record bounded twice).
func truncate(notes *[]Truncation, member, unit string, length, kept int64) {
	for _, t := range *notes {
		if t.Member == member {
			return
		}
	}
	*notes = append(*notes, Truncation{Member: member, Unit: unit, Length: length, Kept: kept})
}

// cutTokens is the pointer of text cut by cutPointer.
func cutTokens(text string) runtime.Pointer {
	p, err := runtime.ParsePointer(cutPointer(text))
	if err != nil {
		return nil
	}
	return p
}

// cutPointer cuts a pointer's text to MaxRecordedPointerBytes, without
// splitting a UTF-8 sequence or an escape (~0, ~1).
func cutPointer(p string) string {
	p = textcut.Cut(p, MaxRecordedPointerBytes)
	if strings.HasSuffix(p, "~") {
		p = p[:len(p)-1]
	}
	return p
}

// KeptBytes is what shrink keeps of each raw response, prompt message and
// standard error (64 KiB): as much as an actor keeps of an over-long
// answer (the actors package's KeptAnswerBytes; runner's tests hold the
// two equal).
const KeptBytes = 64 << 10

// shrink cuts a record whose line would be longer than MaxWriteBytes:
// first every raw response (and its base64 form), standard error and
// tools-protocol turn's text to its first KeptBytes, then, when that is
// not enough, every prompt message to its first KeptBytes and every patch
// to no operation; each cut is noted in the step's Truncated. It returns the line, or an error naming the
// run when even that is longer than MaxRecordBytes. Records are never
// this long unless --max-answer-bytes and --max-attempts are raised far.
//
// It also cuts a record whose line a reader would refuse for its shape
// (checkContainers: too many objects, arrays or values, pointers of too
// many tokens), in the same stages and, when that is not enough, a third:
// the final state is dropped (noted as the last step's "/final_state"). A
// run never writes a record its own readers refuse: one answer of 110,000
// empty arrays (330 KB) made a record every reader called damaged, and so
// the whole directory unreadable.
//
// b is the record's line, or nil when minBytes already says it is too
// long; a stage after which minBytes still does is not written either
// (at 10 MB a record's line is some 30 MB, each written in 100 ms or
// more), but the last stage always is.
func (r *Record) shrink(b []byte) ([]byte, error) {
	ok := b != nil && writable(b)
	for stage := 0; !ok && stage < 3; stage++ {
		switch stage {
		case 0:
			for i := range r.Steps {
				r.Steps[i].CutTexts()
			}
		case 1:
			for i := range r.Steps {
				s := &r.Steps[i]
				s.Prompt = slices.Clone(s.Prompt)
				for k := range s.Prompt {
					s.Prompt[k].Content = cutMember(&s.Truncated, fmt.Sprintf("/prompt/%d/content", k), s.Prompt[k].Content)
				}
				if len(s.Patch) > 0 {
					s.truncate("/patch", "operations", int64(len(s.Patch)), 0)
					s.Patch = nil
				}
			}
		case 2:
			if len(r.FinalState) > 0 && len(r.Steps) > 0 {
				r.Steps[len(r.Steps)-1].truncate("/final_state", "bytes", int64(len(r.FinalState)), 0)
			}
			r.FinalState = nil
		}
		if estimateLines && stage < 2 && r.minBytes() > MaxWriteBytes {
			b = nil
			continue
		}
		var err error
		if b, err = json.Marshal(r); err != nil {
			return nil, fmt.Errorf("run %s: %w", r.RunID, err)
		}
		ok = writable(b)
	}
	if len(b) > MaxRecordBytes {
		return nil, fmt.Errorf("run %s: its record has %d bytes, more than the %d MiB a record may have", r.RunID, len(b), MaxRecordBytes>>20)
	}
	if err := checkContainers(b); err != nil {
		return nil, fmt.Errorf("run %s: %w", r.RunID, err)
	}
	return b, nil
}

// estimateLines lets line and shrink skip writing a line that minBytes
// says is too long (a variable so that a test can compare with writing
// every one).
var estimateLines = true

// minBytes is a floor of the length of r's line (json.Marshal): the
// final state's bytes other than white space (which the line may
// compact away), and each step's prompt messages and raw response, each
// a JSON string at least as long as its bytes.
func (r *Record) minBytes() int64 {
	fs := r.FinalState
	n := int64(len(fs) - bytes.Count(fs, []byte{' '}) - bytes.Count(fs, []byte{'\n'}) - bytes.Count(fs, []byte{'\t'}) - bytes.Count(fs, []byte{'\r'}))
	for i := range r.Steps {
		s := &r.Steps[i]
		n += int64(len(s.RawResponse))
		for _, m := range s.Prompt {
			n += int64(len(m.Content))
		}
	}
	return n
}

// writable reports whether a record's line is one a Sink writes as it
// is: at most MaxWriteBytes, of a shape every reader takes.
func writable(b []byte) bool { return len(b) <= MaxWriteBytes && checkContainers(b) == nil }

// CutTexts cuts the step's texts as a record too long to write has them
// cut (Record.shrink's first stage): every raw response (and its base64
// form), standard error, standard output and tools-protocol turn's text
// to its first KeptBytes, each cut noted in Truncated. Cutting again
// changes nothing.
func (s *StepRecord) CutTexts() {
	s.RawResponse = cutMember(&s.Truncated, "/raw_response", s.RawResponse)
	s.RawResponseBase64 = cutMember(&s.Truncated, "/raw_response_base64", s.RawResponseBase64)
	s.ActorStderr = cutMember(&s.Truncated, "/actor_stderr", s.ActorStderr)
	s.ActorStdout = cutMember(&s.Truncated, "/actor_stdout", s.ActorStdout)
	s.Model = cutMember(&s.Truncated, "/model", s.Model)
	for k := range s.Earlier {
		s.Earlier[k].CutTexts()
	}
	s.Turns = slices.Clone(s.Turns)
	for k := range s.Turns {
		s.Turns[k].Text = cutMember(&s.Truncated, fmt.Sprintf("/turns/%d/text", k), s.Turns[k].Text)
	}
}

// CutTexts cuts the attempt's raw response and standard error as
// StepRecord.CutTexts does.
func (a *Attempt) CutTexts() {
	a.RawResponse = cutMember(&a.Truncated, "/raw_response", a.RawResponse)
	a.ActorStderr = cutMember(&a.Truncated, "/actor_stderr", a.ActorStderr)
	a.Model = cutMember(&a.Truncated, "/model", a.Model)
}

// cutMember cuts a text member to KeptBytes, noting the cut in notes.
func cutMember(notes *[]Truncation, member, v string) string {
	if len(v) <= KeptBytes {
		return v
	}
	c := strings.Clone(textcut.Cut(v, KeptBytes)) // not holding on to v
	truncate(notes, member, "bytes", int64(len(v)), int64(len(c)))
	return c
}

// Usage is a record's token counts: prompt and completion tokens, the
// part of completion spent reasoning when the provider reports it, where
// the counts come from ("provider", or "tokenizer:o200k_base") and, when
// set, the provider's figures that were not token counts at all. It has
// the members of the actors package's Usage (the runner converts one to
// the other), so that reading a run directory needs no actor.
type Usage struct {
	Prompt     int    `json:"prompt"`
	Completion int    `json:"completion"`
	Reasoning  int    `json:"reasoning,omitempty"`
	Source     string `json:"source"`
	Invalid    string `json:"invalid,omitempty"`
}

// Message is one chat message of a recorded prompt: Role is "system" or
// "user"; in the tools protocol a conversation also holds the actor's
// turns ("assistant", with the tool calls it made) and the tools' results
// ("tool", answering the call ToolCallID). It records the actors
// package's Message member for member.
type Message struct {
	Role       string        `json:"role"`
	Content    string        `json:"content"`
	ToolCalls  []MessageCall `json:"tool_calls,omitempty"`
	ToolCallID string        `json:"tool_call_id,omitempty"`
}

// MessageCall is a tool call inside a recorded message: its id, the
// tool's name and the arguments as the actor wrote them; Oversize, when
// positive, is the full length in bytes of arguments longer than the
// answer limit, of which Arguments keeps the start.
type MessageCall struct {
	ID        string `json:"id"`
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
	Oversize  int64  `json:"oversize,omitempty"`
}

// Attempt is a rejected attempt at a step.
type Attempt struct {
	RawResponse string               `json:"raw_response"`
	Decisions   []runtime.GateResult `json:"decisions"`
	Audit       []runtime.GateResult `json:"audit,omitempty"`
	// AnswerBytes, UsageInvalid, ActorStderr, Model and Fingerprint are
	// as in StepRecord: every string the actor sent with the attempt,
	// each an output its leaks are looked for in.
	AnswerBytes  int64  `json:"answer_bytes,omitempty"`
	UsageInvalid string `json:"usage_invalid,omitempty"`
	ActorStderr  string `json:"actor_stderr,omitempty"`
	Model        string `json:"model,omitempty"`
	Fingerprint  string `json:"system_fingerprint,omitempty"`
	// Truncated is as in StepRecord, for this attempt's members.
	Truncated []Truncation `json:"truncated,omitempty"`
}

// RunID is the stable key of a run, "case/config/actor/round" (round
// from 1): the run_id of its record, what resume, merge, compare and
// browse pair runs by. It is the one place the key is spelled.
func RunID(caseID, config, actor string, round int) string {
	return fmt.Sprintf("%s/%s/%s/%d", caseID, config, actor, round)
}

// RunIDAt is the run id of a run at a scale: RunID, with "@" and the
// scale after the round for a grown case ("case/config/actor/1@10MB");
// a run at 1x (scale "") has the plain RunID, so that the runs of one
// case at several scales have ids of their own in one directory.
func RunIDAt(caseID, config, actor string, round int, scale string) string {
	id := RunID(caseID, config, actor, round)
	if scale != "" {
		id += "@" + scale
	}
	return id
}

// recordID is the run id a record's key makes (RunIDAt). A record of a
// grown case written before run ids named the scale (a directory held
// one scale then) has the plain RunID; recordID is the id the run has
// now, which a resume skips.
func recordID(r *Record) string {
	return RunIDOf(r.Case, r.Config, r.Actor, r.Round, r.Scale, r.AttackName)
}

// RunIDOf is the run id of a run at a scale under an attack: RunIDAt,
// with "+" and the attack after it for an attack other than the
// default ("case/config/actor/1+ignore_previous",
// "case/config/actor/1@10MB+system_message"); a run at the default
// attack (attack "") has RunIDAt's id, so that the runs of one case
// under several attacks have ids of their own in one directory.
func RunIDOf(caseID, config, actor string, round int, scale, attack string) string {
	id := RunIDAt(caseID, config, actor, round, scale)
	if attack != "" {
		id += "+" + attack
	}
	return id
}

// MaxRecordedTokens bounds each token count of a record (tokens.prompt,
// tokens.completion, tokens.reasoning, tokens_sent: 2^40, about 10^12,
// far more than any run spends), so that the sums of a directory's runs
// never wrap around (counts of 2^63-1 in three records turned a
// row's tokens per run from 6,176 into 6,042 without a word).
const MaxRecordedTokens = 1 << 40

// checkRecord checks what a record must hold to be counted: its key
// (run_id, case, config, actor, round, with the run_id made of the
// others), a known status, a content score in [0, 1] and token counts
// that are neither negative nor above MaxRecordedTokens.
func checkRecord(r *Record) error {
	switch {
	case r.RunID == "" || r.Case == "" || r.Config == "" || r.Actor == "" || r.Round < 1:
		return errorf(CodeNotARecord, "not a run record: run_id, case, config, actor and round are required")
	case r.RunID != recordID(r) && (r.Scale == "" || r.RunID != RunID(r.Case, r.Config, r.Actor, r.Round)):
		return fmt.Errorf("run %s: the run_id does not match its case, config, actor and round", r.RunID)
	case r.Status != StatusPassed && r.Status != StatusFailed && r.Status != StatusError && r.Status != StatusPending:
		return fmt.Errorf("run %s: unknown status %q", r.RunID, r.Status)
	case !(r.ContentScore >= 0 && r.ContentScore <= 1):
		return fmt.Errorf("run %s: content_score %v is outside [0, 1]", r.RunID, r.ContentScore)
	case r.Tokens.Prompt < 0 || r.Tokens.Completion < 0:
		return fmt.Errorf("run %s: negative token counts", r.RunID)
	case r.Tokens.Prompt > MaxRecordedTokens || r.Tokens.Completion > MaxRecordedTokens || r.Tokens.Reasoning > MaxRecordedTokens || r.TokensSent > MaxRecordedTokens || r.TokensSent < 0:
		return fmt.Errorf("run %s: a token count outside [0, %d]", r.RunID, int64(MaxRecordedTokens))
	}
	return nil
}
