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
)

// ErrPending is the error of an actor that has no answer yet for a
// request (the file actor before its answer file exists). The runner
// records the run as pending: not an error and not an outcome; the same
// command again continues it (PatchBench design §5).
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
	// Round and Attempt count from 1.
	Round   int `json:"round"`
	Attempt int `json:"attempt"`
	// Answer is the answer file to write, relative to the directory.
	Answer   string    `json:"answer_file"`
	Messages []Message `json:"messages"`
}

// RequestKey is the file actor's key of a request: the first 32 hex
// digits of the SHA-256 of its case, step, round, attempt and messages.
func RequestKey(req Request) string {
	b, _ := json.Marshal(struct {
		Case, Step     string
		Round, Attempt int
		Messages       []Message
	}{req.Case.ID, req.Step.ID, req.Round, req.Attempt, req.Messages})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])[:32]
}

// Propose implements Actor.
func (f *Files) Propose(ctx context.Context, req Request) (Response, error) {
	key := RequestKey(req)
	answer := filepath.Join(f.dir, FilesAnswers, key+".txt")
	raw, err := readAnswer(answer)
	switch {
	case err == nil:
		// Answered: the request is no longer pending.
		os.Remove(filepath.Join(f.dir, FilesPending, key+".json"))
		os.Remove(filepath.Join(f.dir, FilesPending, key+".txt"))
		return Response{Raw: raw}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return Response{}, err
	}
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	fr := FileRequest{Key: key, Case: req.Case.ID, Step: req.Step.ID, Role: req.Step.Role, Round: req.Round,
		Attempt: req.Attempt, Answer: filepath.ToSlash(filepath.Join(FilesAnswers, key+".txt")), Messages: req.Messages}
	if err := writePending(filepath.Join(f.dir, FilesPending), fr); err != nil {
		return Response{}, fmt.Errorf("actor %s: %w", f.spec, err)
	}
	if err := os.MkdirAll(filepath.Join(f.dir, FilesAnswers), 0o755); err != nil {
		return Response{}, fmt.Errorf("actor %s: %w", f.spec, err)
	}
	return Response{}, &PendingError{Key: key, Answer: answer}
}

// readAnswer reads an answer file: fs.ErrNotExist when there is none or it
// is empty (still being written), an error when it is not a regular file
// or is larger than the bound on any actor's response.
func readAnswer(path string) (string, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", err
	}
	if !fi.Mode().IsRegular() {
		return "", fmt.Errorf("answer %s: not a regular file", path)
	}
	if fi.Size() > maxResponseBytes {
		return "", fmt.Errorf("answer %s: %d bytes; an answer is at most %d", path, fi.Size(), maxResponseBytes)
	}
	fh, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	b, err := io.ReadAll(io.LimitReader(fh, maxResponseBytes+1))
	if err != nil {
		return "", fmt.Errorf("answer %s: %w", path, err)
	}
	if len(bytes.TrimSpace(b)) == 0 {
		return "", fs.ErrNotExist
	}
	return string(b), nil
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
	if err := writeBytesAtomic(filepath.Join(dir, fr.Key+".json"), append(j, '\n')); err != nil {
		return err
	}
	return writeBytesAtomic(filepath.Join(dir, fr.Key+".txt"), []byte(RequestText(fr)))
}

// RequestText renders a pending request for a person: where the answer
// goes, then each message under its role.
func RequestText(fr FileRequest) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Answer this request in %s (the reply, as text).\n", fr.Answer)
	for _, m := range fr.Messages {
		fmt.Fprintf(&b, "\n===== %s =====\n%s\n", m.Role, strings.TrimRight(m.Content, "\n"))
	}
	return b.String()
}

// PendingRequests lists the requests of a file actor's directory that
// still wait for an answer, sorted by case, step, round and attempt. A
// pending file that does not decode is an error naming it.
func PendingRequests(dir string) ([]FileRequest, error) {
	entries, err := os.ReadDir(filepath.Join(dir, FilesPending))
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := os.Stat(dir); err != nil {
			return nil, err
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []FileRequest
	for _, e := range entries {
		name := e.Name()
		if !strings.HasSuffix(name, ".json") || strings.HasPrefix(name, ".") {
			continue
		}
		path := filepath.Join(dir, FilesPending, name)
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		var fr FileRequest
		if err := json.Unmarshal(b, &fr); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if _, err := readAnswer(filepath.Join(dir, FilesAnswers, fr.Key+".txt")); err == nil {
			continue // answered since; the next run clears it
		}
		out = append(out, fr)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
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
	return out, nil
}
