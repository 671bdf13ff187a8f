package runner

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/patchbench/patchbench/actors"
	"github.com/patchbench/patchbench/bench"
	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/rundir"
	"github.com/patchbench/patchbench/runtime"
	"github.com/patchbench/patchbench/scoring"
	"github.com/patchbench/patchbench/tools"
)

//go:embed tools.tmpl
var toolsPromptText string

// ToolsPrompt is the prompt of the tools protocol (runner/tools.tmpl): the
// same instruction, W and P as the json protocol's, the view whole or as
// an outline (Options.Disclosure), and the tools of package tools, each
// with its Usage. Its Version, recorded in the manifest of a tools run,
// digests the tools as well as the template (toolsVersion): a tool added,
// removed or reworded changes what the model is offered, so a run
// directory of the old tools is not resumed with the new ones.
var ToolsPrompt = func() *Prompt {
	p, err := ParsePrompt("tools.tmpl", []byte(toolsPromptText))
	if err != nil {
		panic(err)
	}
	p.Version = toolsVersion(p, toolsPromptText, tools.All)
	return p
}()

// toolsVersion is the version of the tools prompt p parsed from text
// with the tools defs: the template's declared version, "+", and the
// first 12 hex digits of the SHA-256 of the template's text followed by
// each tool's JSON schema (its name, description and parameters, as
// every transport serves it) and its Usage, one per line.
func toolsVersion(p *Prompt, text string, defs []tools.Def) string {
	h := sha256.New()
	h.Write([]byte(text))
	for _, d := range defs {
		spec, err := json.Marshal(d.Spec)
		if err != nil {
			panic(fmt.Sprintf("tool %s: %v", d.Name, err)) // a Spec is plain data
		}
		fmt.Fprintf(h, "\n%s\n%s", spec, d.Usage)
	}
	return p.declared + "+" + hex.EncodeToString(h.Sum(nil))[:12]
}

// toolsMessages renders the first messages of a step in the tools
// protocol: the view whole (viewJSON) or its outline.
func (r *run) toolsMessages(s *bench.Step, phase string, view any, viewJSON string) ([]actors.Message, error) {
	d := promptData{Role: s.Role, Instruction: strings.TrimSpace(s.Instruction), Phase: phase, Now: r.j.Case.Now, View: viewJSON,
		Write: s.Contract.Write().Strings(), Source: s.Contract.Source().Strings(), Tools: tools.Usages(), ToolCount: tools.Count()}
	if r.o.Disclosure == DisclosureProgressive {
		b, err := runtime.EncodeIndent(tools.Outline(view, 1), "  ")
		if err != nil {
			return nil, err
		}
		d.View, d.Outline = string(b), true
	}
	return ToolsPrompt.render(d)
}

// toolLoop runs step s in the tools protocol with an actor that answers
// turns (Actor.Propose with Request.Tools): each turn's tool calls go to
// the step's environment (stepEnv), their results back into the conversation, until the
// step commits or ends (a budget spent, the proposals spent, a final
// text, or a conversation that with the tools' specs would pass the
// actor's context budget before a turn: EndedContext). end says the
// run ends here without an outcome (an error or pending run).
func (r *run) toolLoop(ctx context.Context, s *bench.Step, sr *rundir.StepRecord, req actors.Request, view any, viewJSON, submit string) (bool, error) {
	env := r.newEnv(s, view, submit)
	msgs, err := r.toolsMessages(s, sr.Phase, view, viewJSON)
	if err != nil {
		return false, fmt.Errorf("case %s step %s: prompt: %w", r.j.Case.ID, s.ID, err)
	}
	prompt := slices.Clone(msgs)
	sr.Prompt = recordMessages(prompt)
	req.Tools = tools.Specs()
	specs := specsText(req.Tools)
	endRun := false
	for turn := 1; !env.Over(); turn++ {
		if turn > r.o.maxTurns() {
			env.end(EndedTurns)
			break
		}
		if r.overContext(msgs, specs) {
			// The conversation would pass the actor's context: the
			// turn is not sent.
			env.end(EndedContext)
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
			r.outputCall(s.ID, c)
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
			out, err := env.call(ctx, c) // its strings were scanned with the answer's
			if err != nil {
				return false, err
			}
			endRun = endRun || r.proposed(sr, s, env, prompt, out.decided)
			t.Calls = append(t.Calls, out.rec)
			assistant.ToolCalls = append(assistant.ToolCalls, actors.ToolCall{ID: out.rec.ID, Name: out.rec.Name, Arguments: out.rec.Arguments})
			results = append(results, actors.Message{Role: "tool", ToolCallID: out.rec.ID, Content: out.text})
		}
		sr.Turns = append(sr.Turns, t)
		msgs = append(msgs, assistant)
		msgs = append(msgs, results...)
	}
	if endRun {
		return true, nil
	}
	sr.Ended = env.Ended()
	return false, nil
}

// newEnv is the environment of step s on the session's current state,
// whose actor sees view (the whole state, or its projection), its
// proposals decided as the step's (submit as in decider).
func (r *run) newEnv(s *bench.Step, view any, submit string) *stepEnv {
	region := runtime.WholeDocument
	if r.j.Config.Projected() {
		region = s.Contract.ViewRegion()
	}
	limits := envLimits{attempts: r.o.MaxAttempts, toolCalls: r.o.maxToolCalls(), stepBytes: r.o.maxStepBytes(), answer: r.o.maxAnswer(), result: r.o.maxResult()}
	return newStepEnv(r.decider(s, submit), view, region, r.sess.State().Value(), limits)
}

// outputCall takes a tool call the actor sent at step as its outputs,
// whether or not it runs (a call after the one that committed, a call
// past the budgets): its name, its arguments and its id, each up to the
// answer limit (what an actor keeps of an answer), scanned for leaks in
// field scoring.FieldToolCall, each kind of string also read joined with
// the same kind of the step's earlier calls (scoring.Output.Seq).
func (r *run) outputCall(step string, c actors.ToolCall) {
	limit := int(min(r.o.maxAnswer(), int64(math.MaxInt)))
	for _, o := range [...]struct{ seq, text string }{{"tool_call/name", c.Name}, {"tool_call/arguments", c.Arguments}, {"tool_call/id", c.ID}} {
		r.output(scoring.Output{Step: step, Field: scoring.FieldToolCall, Text: textcut.Cut(o.text, limit), Seq: o.seq})
	}
}

// proposed records the proposal a tool call made at step s, if any (v
// nil: none), as its step's attempt numbered by the proposals made so
// far, with the step's first messages (prompt). end says the run ends
// here: the commit left the workflow's phase nowhere to go
// (committedStep).
func (r *run) proposed(sr *rundir.StepRecord, s *bench.Step, env *stepEnv, prompt []actors.Message, v *verdict) (end bool) {
	if v == nil {
		return false
	}
	r.record(sr, s, env.proposals, prompt, *v, "")
	return v.res.Committed && r.committedStep(sr, s, v.res)
}

// specsText is the tools' specs as a request sends them (JSON), for the
// context budget's count.
func specsText(specs []tools.Spec) string {
	b, _ := json.Marshal(specs)
	return string(b)
}

// requestDigest is the SHA-256 (hex) of a turn's request: the
// conversation so far and the tools offered.
func requestDigest(msgs []actors.Message) string {
	b, _ := json.Marshal(struct {
		Messages []actors.Message `json:"messages"`
		Tools    []tools.Spec     `json:"tools"`
	}{msgs, tools.Specs()})
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}
