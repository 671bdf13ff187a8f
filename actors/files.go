package actors

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/patchbench/patchbench/internal/limited"
	"github.com/patchbench/patchbench/internal/regularfile"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/tools"
)

// ErrPending is the error of an actor that has no answer yet for a
// request (the file actor before its answer file exists). The runner
// records the run as pending: not an error and not an outcome; the same
// command again continues it (docs/actors.md, the file actor).
var ErrPending = errors.New("no answer yet")

// PendingError says which request waits for an answer, and where the
// answer goes. It matches ErrPending with errors.Is.
type PendingError struct {
	Key string
	// Answer is the path of the answer file to write.
	Answer string
}

func (e *PendingError) Error() string {
	return fmt.Sprintf("request %s has no answer yet (write it to %s)", e.Key, e.Answer)
}

// Is implements errors.Is: a PendingError is ErrPending.
func (e *PendingError) Is(target error) bool { return target == ErrPending }

// Folders of a file actor's directory.
const (
	FilesPending = "pending"
	FilesAnswers = "answers"
)

// Files is the file actor, "files:DIR": each request is written to
// DIR/pending/<key>.json (the messages and the step's metadata) and
// DIR/pending/<key>.txt (the messages as plain text, for a person), and
// answered from DIR/answers/<key>.txt once that file exists and is not
// empty; until then Propose returns a *PendingError. The key is a hash of
// the case, step, round, attempt and messages, so identical prompts (the
// full-state configurations at a case's first step) share one answer,
// and the same command run again finds the answers written since. It
// serves human baselines, batch APIs and models that cannot be called
// from the machine that runs the benchmark. An answer is the model's raw
// reply, parsed and verified like any actor's; it should be written to a
// temporary name and renamed into place, so that a half-written file is
// never read.
type Files struct {
	spec, dir string
	// maxAnswer bounds an answer (0: DefaultMaxAnswerBytes): a longer
	// answer file is read only for its start (Response.Oversize).
	maxAnswer int64
}

// The file actor's kind: files:DIR, its answers bounded by
// Params.MaxAnswerBytes.
func init() {
	Register(Kind{Spec: "files:", Usage: "files:DIR", New: func(spec string, p Params) (Actor, error) {
		f, err := NewFiles(spec)
		if err != nil {
			return nil, err
		}
		f.maxAnswer = p.MaxAnswerBytes
		return f, nil
	}})
}

// NewFiles makes the file actor of a "files:DIR" spec. The directory is
// created on the first request.
func NewFiles(spec string) (*Files, error) {
	dir := strings.TrimPrefix(spec, "files:")
	if strings.TrimSpace(dir) == "" {
		return nil, fmt.Errorf("actor %q: give the directory, files:DIR", spec)
	}
	if fi, err := os.Stat(dir); err == nil && !fi.IsDir() {
		return nil, fmt.Errorf("actor %q: %s is not a directory", spec, dir)
	}
	return &Files{spec: spec, dir: dir}, nil
}

// Name implements Actor: the spec as given.
func (f *Files) Name() string { return f.spec }

// Dir is the actor's directory.
func (f *Files) Dir() string { return f.dir }

// FileRequest is the JSON form of a pending request, DIR/pending/<key>.json.
type FileRequest struct {
	Key  string `json:"key"`
	Case string `json:"case"`
	Step string `json:"step"`
	Role string `json:"role"`
	// View is "full" or "projected": what the prompt shows of the state.
	View string `json:"view"`
	// Round and Attempt count from 1.
	Round   int `json:"round"`
	Attempt int `json:"attempt"`
	// Answer is the answer file to write, relative to the directory.
	Answer   string    `json:"answer_file"`
	Messages []Message `json:"messages"`
	// Tools, in the tools protocol, are the tools the answer may call;
	// Messages is then the step's conversation so far (Attempt counts
	// its turns), and an answer is one tool call, {"tool": NAME,
	// "arguments": {...}}, or a final text.
	Tools []tools.Spec `json:"tools,omitempty"`
}

// RequestKey is the file actor's key of a request: the first 32 hex
// digits of the SHA-256 of its case, step, round, attempt and messages.
func RequestKey(req Request) string {
	b, _ := json.Marshal(struct {
		Case, Step     string
		Round, Attempt int
		Messages       []Message
	}{req.CaseID, req.StepID, req.Round, req.Attempt, req.Messages})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:32]
}

// Propose implements Actor.
func (f *Files) Propose(ctx context.Context, req Request) (Response, error) {
	key := RequestKey(req)
	answer := filepath.Join(f.dir, FilesAnswers, key+".txt")
	resp, err := readAnswer(answer, f.maxAnswer)
	switch {
	case err == nil:
		// Answered: the request is no longer pending.
		os.Remove(filepath.Join(f.dir, FilesPending, key+".json"))
		os.Remove(filepath.Join(f.dir, FilesPending, key+".txt"))
		if req.Tools != nil {
			resp = fileToolAnswer(resp, req.Attempt)
		}
		return resp, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Response{}, err
	}
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	view := "full"
	if req.Projected {
		view = "projected"
	}
	fr := FileRequest{Key: key, Case: req.CaseID, Step: req.StepID, Role: req.Role, View: view, Round: req.Round,
		Attempt: req.Attempt, Answer: filepath.ToSlash(filepath.Join(FilesAnswers, key+".txt")), Messages: req.Messages, Tools: req.Tools}
	if err := writePending(filepath.Join(f.dir, FilesPending), fr); err != nil {
		return Response{}, fmt.Errorf("actor %s: %w", f.spec, err)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, FilesAnswers), 0o755); err != nil {
		return Response{}, fmt.Errorf("actor %s: %w", f.spec, err)
	}
	return Response{}, &PendingError{Key: key, Answer: answer}
}

// SpeaksTools implements ToolSpeaker: in the tools protocol an answer
// file holds one tool call or a final text.
func (f *Files) SpeaksTools() bool { return true }

// fileToolAnswer reads an answer file of the tools protocol: a JSON
// object {"tool": NAME, "arguments": {...}} is one tool call (its id
// "call_TURN"); anything else is a final text, which ends the step.
func fileToolAnswer(resp Response, turn int) Response {
	if resp.Oversize > 0 {
		return resp
	}
	var call struct {
		Tool      *string         `json:"tool"`
		Arguments json.RawMessage `json:"arguments"`
	}
	d := json.NewDecoder(strings.NewReader(resp.Raw))
	d.DisallowUnknownFields()
	if d.Decode(&call) != nil || call.Tool == nil || d.More() {
		return resp
	}
	args := string(call.Arguments)
	if args == "" {
		args = "{}"
	}
	return Response{Calls: []ToolCall{{ID: fmt.Sprintf("call_%d", turn), Name: *call.Tool, Arguments: args}}}
}

// readAnswer reads an answer file: fs.ErrNotExist when there is none or it
// is empty (still being written), an error when it is not a regular file.
// An answer longer than limit bytes (DefaultMaxAnswerBytes when limit is
// not positive) is read only for its first limit bytes (what the runner
// scans for leaks), with its length in Oversize.
func readAnswer(path string, limit int64) (Response, error) {
	limit = answerLimit(limit)
	fh, err := regularfile.Open(path)
	if err != nil {
		return Response{}, err
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return Response{}, err
	}
	b, err := io.ReadAll(io.LimitReader(fh, limit+1))
	if err != nil {
		return Response{}, fmt.Errorf("answer %s: %w", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 && int64(len(b)) <= limit {
		return Response{}, fs.ErrNotExist
	}
	if int64(len(b)) <= limit {
		return Response{Raw: string(b)}, nil
	}
	// Over the limit: the bytes read may end inside a character.
	return Response{Raw: textcut.Cut(string(b), len(b)-1), Oversize: max(fi.Size(), int64(len(b)))}, nil
}

// writePending writes the request's JSON and text forms into dir, each
// through a temporary file renamed into place (concurrent runs waiting on
// the same key write the same bytes).
func writePending(dir string, fr FileRequest) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	j, err := json.MarshalIndent(fr, "", "  ")
	if err != nil {
		return err
	}
	// Readable by the other people of a human panel, as a file the
	// user created would be.
	if err := writeBytesAtomic(filepath.Join(dir, fr.Key+".json"), append(j, '\n'), 0o644); err != nil {
		return err
	}
	return writeBytesAtomic(filepath.Join(dir, fr.Key+".txt"), []byte(RequestText(filepath.Dir(dir), fr)), 0o644)
}

// RequestText renders a pending request of the file actor's directory dir
// for a person: where the answer goes, then each message under its role.
//
// In the tools protocol it shows the conversation (each tool call and
// each result under its own heading), then the tools and how to answer:
// one tool call as JSON, or a final text.
func RequestText(dir string, fr FileRequest) string {
	var b strings.Builder
	answer := filepath.Join(dir, filepath.FromSlash(fr.Answer))
	if fr.Tools == nil {
		fmt.Fprintf(&b, "Answer this request in %s (the reply, as text).\n", answer)
	} else {
		fmt.Fprintf(&b, "Answer this turn in %s: %s\n", answer, ToolAnswerFormat)
	}
	b.WriteString(ConversationText(fr))
	return b.String()
}

// ToolAnswerFormat says how an answer file of the tools protocol is
// written.
const ToolAnswerFormat = `one tool call as JSON, {"tool": NAME, "arguments": {...}}, or a final text (which ends the step).`

// ConversationText renders a request's messages for a reader: each
// message under its role, and in the tools protocol each tool call (as
// an answer file would write it) and each result under its own heading,
// then the tools with their arguments' JSON Schema.
func ConversationText(fr FileRequest) string {
	var b strings.Builder
	for _, m := range fr.Messages {
		switch {
		case m.Role == "tool":
			fmt.Fprintf(&b, "\n===== result of %s =====\n%s\n", m.ToolCallID, strings.TrimRight(m.Content, "\n"))
		default:
			fmt.Fprintf(&b, "\n===== %s =====\n%s\n", m.Role, strings.TrimRight(m.Content, "\n"))
			for _, c := range m.ToolCalls {
				fmt.Fprintf(&b, "[%s] {\"tool\": %q, \"arguments\": %s}\n", c.ID, c.Name, c.Arguments)
			}
		}
	}
	if fr.Tools != nil {
		b.WriteString("\n===== tools =====\n")
		for _, t := range fr.Tools {
			var params bytes.Buffer
			if json.Compact(&params, t.Parameters) != nil {
				params.Reset()
				params.Write(t.Parameters)
			}
			fmt.Fprintf(&b, "%s: %s\n  arguments (JSON Schema): %s\n", t.Name, t.Description, params.Bytes())
		}
		b.WriteString("\nFor example: {\"tool\": \"read_state\", \"arguments\": {\"pointer\": \"/some/member\", \"depth\": 1}}\n")
	}
	return b.String()
}

// PendingRequests lists the requests of a file actor's directory that
// still wait for an answer, sorted by case, step, round and attempt. A
// pending file that cannot be used (not a regular file, not JSON, a key
// that is not its file's name) is left out and described in skipped; the
// error is for a directory that cannot be read or is not a file actor's.
func PendingRequests(dir string) (reqs []FileRequest, skipped []string, err error) {
	entries, err := os.ReadDir(filepath.Join(dir, FilesPending))
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(dir); err != nil {
			return nil, nil, err
		}
		if _, err := os.Stat(filepath.Join(dir, FilesAnswers)); err != nil {
			return nil, nil, fmt.Errorf("%s is not a file actor's directory (it has no %s or %s folder); give the DIR of --actor files:DIR, not the run directory", dir, FilesPending, FilesAnswers)
		}
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, FilesPending, name)
		if !e.Type().IsRegular() {
			skipped = append(skipped, path+": not a regular file")
			continue
		}
		b, err := limited.ReadFile(os.DirFS(filepath.Dir(path)), filepath.Base(path), 64<<20)
		if err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		var fr FileRequest
		if err := json.Unmarshal(b, &fr); err != nil {
			skipped = append(skipped, fmt.Sprintf("%s: %v", path, err))
			continue
		}
		if fr.Key != strings.TrimSuffix(name, ".json") || !validKey(fr.Key) || fr.Answer != FilesAnswers+"/"+fr.Key+".txt" {
			skipped = append(skipped, path+": its key and answer file do not match its name (not written by the file actor)")
			continue
		}
		if _, err := readAnswer(filepath.Join(dir, FilesAnswers, fr.Key+".txt"), 0); err == nil {
			continue // answered since; the next run clears it
		}
		reqs = append(reqs, fr)
	}
	sort.Slice(reqs, func(i, j int) bool {
		a, b := reqs[i], reqs[j]
		if a.Case != b.Case {
			return a.Case < b.Case
		}
		if a.Step != b.Step {
			return a.Step < b.Step
		}
		if a.Round != b.Round {
			return a.Round < b.Round
		}
		if a.Attempt != b.Attempt {
			return a.Attempt < b.Attempt
		}
		return a.Key < b.Key
	})
	return reqs, skipped, nil
}

// ClearPending removes the given pending requests of a file actor's
// directory (both their forms); their answers, if any, are kept. It
// returns how many it removed.
func ClearPending(dir string, reqs []FileRequest) (int, error) {
	n := 0
	for _, r := range reqs {
		if !validKey(r.Key) {
			continue
		}
		for _, ext := range []string{".json", ".txt"} {
			err := os.Remove(filepath.Join(dir, FilesPending, r.Key+ext))
			if err != nil && !errors.Is(err, fs.ErrNotExist) {
				return n, err
			}
		}
		n++
	}
	return n, nil
}

// validKey reports whether k is a key RequestKey makes: 32 lower-case hex
// digits.
func validKey(k string) bool {
	if len(k) != 32 {
		return false
	}
	for _, r := range k {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'f') {
			return false
		}
	}
	return true
}

// readLimited reads a regular file of at most limit bytes
// (regularfile.Read: a FIFO, which would block, or a device is an error).
func readLimited(path string, limit int64) ([]byte, error) { return regularfile.Read(path, limit) }

// CheckDir makes the file actor's directory and its folders if needed and
// checks that a file can be written in them, so that a run never stops on
// a directory it cannot use.
func (f *Files) CheckDir() error {
	for _, sub := range []string{FilesPending, FilesAnswers} {
		d := filepath.Join(f.dir, sub)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return fmt.Errorf("actor %s: %w", f.spec, err)
		}
		probe, err := os.CreateTemp(d, ".probe-*")
		if err != nil {
			return fmt.Errorf("actor %s: %s is not writable: %w", f.spec, d, err)
		}
		probe.Close()
		os.Remove(probe.Name())
	}
	return nil
}
