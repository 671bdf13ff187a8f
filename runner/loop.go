package runner

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
)

//go:embed tools.tmpl
var toolsPromptText string

// ToolsPrompt is the prompt of the tools protocol (runner/tools.tmpl): the
// same instruction, W and P as the json protocol's, the view whole or as
// an outline (Options.Disclosure), and the two tools. Its Version is
// recorded in the manifest of a tools run.
var ToolsPrompt = func() *Prompt {
	p, err := ParsePrompt("tools.tmpl", []byte(toolsPromptText))
	if err != nil {
		panic(err)
	}
	return p
}()

// toolsMessages renders the first messages of a step in the tools
// protocol: the view whole (viewJSON) or its outline.
func (r *run) toolsMessages(s *bench.Step, phase string, view any, viewJSON string) ([]actors.Message, error) {
	d := promptData{Role: s.Role, Instruction: strings.TrimSpace(s.Instruction), Phase: phase, Now: r.j.Case.Now, View: viewJSON,
		Write: s.Contract.Write().Strings(), Source: s.Contract.Source().Strings()}
	if r.o.Disclosure == DisclosureProgressive {
		b, err := runtime.EncodeIndent(Outline(view, 1), "  ")
		if err != nil {
			return nil, err
		}
		d.View, d.Outline = string(b), true
	}
	return ToolsPrompt.render(d)
}

// toolLoop runs step s in the tools protocol with an actor that answers
// turns (Actor.Propose with Request.Tools): each turn's tool calls go to
// the step's StepEnv, their results back into the conversation, until the
// step commits or ends (a budget spent, the proposals spent, a final
// text). end says the run ends here without an outcome (an error or
// pending run).
func (r *run) toolLoop(ctx context.Context, s *bench.Step, sr *rundir.StepRecord, req actors.Request, view any, viewJSON, submit string) (bool, error) {
	env := r.newEnv(s, sr, view, submit)
	msgs, err := r.toolsMessages(s, sr.Phase, view, viewJSON)
	if err != nil {
		return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
	}
	env.prompt = slices.Clone(msgs)
	sr.Prompt = recordMessages(env.prompt)
	req.Tools = actors.StepTools
	for turn := 1; !env.Over(); turn++ {
		if turn > r.o.maxTurns() {
			env.end(EndedTurns)
			break
		}
		req.Messages, req.Attempt = msgs, turn
		resp, err := r.j.Actor.Propose(ctx, req)
		if err != nil {
			return true, r.actorError(ctx, sr, msgs, env.proposals+1, err)
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		// What the actor sent is scanned before it is cut for the record:
		// the text up to the answer limit, and every call, those the
		// step does not run too (after a commit, past a budget, in an
		// answer over the limit), then the answer as sent, for what
		// those fields leave out.
		r.output(answerOutputs(s.ID, resp, r.o.maxAnswer())...)
		for _, c := range resp.Calls {
			env.Output(c)
		}
		r.outputBody(s.ID, resp.Body)
		resp = resp.Clip(r.o.MaxAnswerBytes).Kept()
		t := rundir.Turn{RequestDigest: requestDigest(msgs), Text: resp.Raw, TextBytes: resp.Oversize,
			LatencyMS: resp.Latency.Milliseconds(), Cached: resp.Cached, Model: resp.Model}
		u, implausible := r.usageOf(msgs, resp)
		r.add(u, resp.Cached)
		t.Tokens = recordUsage(*u)
		if implausible != "" {
			sr.UsageInvalid = implausible
		}
		env.spend(max(resp.Oversize, int64(len(resp.Raw))))
		assistant := actors.Message{Role: "assistant", Content: resp.Raw}
		var results []actors.Message
		switch {
		case resp.Oversize > 0:
			results = append(results, actors.Message{Role: "user",
				Content: fmt.Sprintf("Your answer had %d bytes; the limit is %d. It was not read.", resp.Oversize, r.o.maxAnswer())})
		case len(resp.Calls) == 0:
			env.end(EndedFinalText)
		}
		for i, c := range resp.Calls {
			if env.Over() {
				t.DroppedCalls = len(resp.Calls) - i
				break
			}
			text, rec, err := env.run(ctx, c) // its strings were scanned with the answer's
			if err != nil {
				return false, err
			}
			t.Calls = append(t.Calls, rec)
			assistant.ToolCalls = append(assistant.ToolCalls, actors.ToolCall{ID: rec.ID, Name: rec.Name, Arguments: rec.Arguments})
			results = append(results, actors.Message{Role: "tool", ToolCallID: rec.ID, Content: text})
		}
		sr.Turns = append(sr.Turns, t)
		msgs = append(msgs, assistant)
		msgs = append(msgs, results...)
	}
	if env.endRun {
		return true, nil
	}
	sr.Ended = env.Ended()
	return false, nil
}

// requestDigest is the SHA-256 (hex) of a turn's request: the
// conversation so far and the tools offered.
func requestDigest(msgs []actors.Message) string {
	b, _ := json.Marshal(struct {
		Messages []actors.Message  `json:"messages"`
		Tools    []actors.ToolSpec `json:"tools"`
	}{msgs, actors.StepTools})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
