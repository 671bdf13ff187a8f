package actors

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/patchbench/patchbench/tools"
)

// DefaultAnthropicBaseURL is the Anthropic API's address.
const DefaultAnthropicBaseURL = "https://api.anthropic.com"

// The anthropic: kind: Anthropic's Messages API or a server that speaks
// it, configured by ANTHROPIC_BASE_URL (recorded in the manifest) and
// ANTHROPIC_API_KEY.
func init() {
	Register(Kind{Spec: "anthropic:", Usage: "anthropic:MODEL", Provider: "anthropic",
		New: func(spec string, p Params) (Actor, error) { return asActor(NewAnthropic(spec, p)) },
		Env: []EnvVar{
			{Name: "ANTHROPIC_BASE_URL", Help: "the Messages API's base URL (default " + DefaultAnthropicBaseURL + ")",
				Manifest: "anthropic_base_url", Field: func(p *Params) *string { return &p.AnthropicBaseURL }},
			{Name: "ANTHROPIC_API_KEY", Help: "the key of the Messages API (not needed for a local address)",
				Field: func(p *Params) *string { return &p.AnthropicKey }},
		}})
}

// defaultAnthropicMaxTokens is the max_tokens sent when --max-output-tokens
// is not given: the Messages API requires one.
const defaultAnthropicMaxTokens = 8192

// Anthropic is an actor served by Anthropic's Messages API (or a server
// that speaks it) through github.com/anthropics/anthropic-sdk-go. In the
// json protocol it answers with text (the prompt asks for the JSON
// object); in the tools protocol it uses native tool use (tools,
// tool_use and tool_result blocks). Retries, the breaker, the rate limit
// and the cache are the runner's, as for the other live actors: the SDK's
// own retries are off.
type Anthropic struct {
	spec, model string
	params      Params
	client      anthropic.Client
	headers     *headerRecorder
	tap         *bodyTap
}

// NewAnthropic makes the actor of a spec
// "anthropic:MODEL[?temperature=T&seed=S&max_output_tokens=N]" (the seed
// is recorded, and sent nowhere: the API has none). The key
// (Params.AnthropicKey, ANTHROPIC_API_KEY) is required unless the base URL
// (Params.AnthropicBaseURL, ANTHROPIC_BASE_URL) is a local address, and is
// never sent in plain text to another machine.
func NewAnthropic(spec string, p Params) (*Anthropic, error) {
	model, err := liveSpec(spec, "anthropic", &p)
	if err != nil {
		return nil, err
	}
	base := cmp.Or(p.AnthropicBaseURL, DefaultAnthropicBaseURL)
	if err := checkEndpoint(spec, base, "ANTHROPIC_API_KEY", p.AnthropicKey, p.CacheOnly); err != nil {
		return nil, err
	}
	tap := newBodyTap(http.DefaultTransport, p.MaxAnswerBytes, 0, "content", "0", "text")
	rec := &headerRecorder{next: tap}
	opts := []option.RequestOption{option.WithoutEnvironmentDefaults(), option.WithBaseURL(strings.TrimSuffix(base, "/") + "/"),
		option.WithHTTPClient(&http.Client{Transport: rec, CheckRedirect: refuseRedirects}), option.WithMaxRetries(0)}
	if p.AnthropicKey != "" {
		opts = append(opts, option.WithAPIKey(p.AnthropicKey))
	}
	a := &Anthropic{spec: spec, model: model, params: p, client: anthropic.NewClient(opts...), headers: rec, tap: tap}
	if p.Breakers != nil {
		a.params.Retry.Breaker = p.Breakers.For(a.Endpoint())
	}
	return a, nil
}

// Name implements Actor.
func (a *Anthropic) Name() string { return a.spec }

// SpeaksTools implements ToolSpeaker.
func (a *Anthropic) SpeaksTools() bool { return true }

// Provider implements Live: "anthropic".
func (a *Anthropic) Provider() string { return "anthropic" }

// Endpoint implements Live: "anthropic " and the base URL.
func (a *Anthropic) Endpoint() string {
	return "anthropic " + cmp.Or(a.params.AnthropicBaseURL, DefaultAnthropicBaseURL)
}

// Breaker implements Live.
func (a *Anthropic) Breaker() *Breaker { return a.params.Retry.Breaker }

// CacheKey implements Keyer.
func (a *Anthropic) CacheKey() map[string]any {
	return map[string]any{"provider": "anthropic", "base_url": normalURL(cmp.Or(a.params.AnthropicBaseURL, DefaultAnthropicBaseURL)), "model": a.model,
		"temperature": a.params.Temperature, "seed": a.params.Seed, "max_output_tokens": a.params.MaxOutputTokens}
}

// Propose implements Actor: one Messages request, retried on 429, 5xx,
// timeouts and dropped connections. An answer longer than
// Params.MaxAnswerBytes comes back clipped (Response.Clip); an error is a
// *ProviderError.
func (a *Anthropic) Propose(ctx context.Context, req Request) (Response, error) {
	mreq := anthropic.MessageNewParams{Model: anthropic.Model(a.model), MaxTokens: int64(cmp.Or(a.params.MaxOutputTokens, defaultAnthropicMaxTokens))}
	mreq.System, mreq.Messages = anthropicMessages(req.Messages)
	if req.Tools != nil {
		tools, err := anthropicTools(req.Tools)
		if err != nil {
			return Response{}, &ProviderError{Spec: a.spec, Err: err}
		}
		mreq.Tools = tools
	}
	var extra []option.RequestOption
	if a.params.Temperature != nil {
		extra = append(extra, option.WithJSONSet("temperature", *a.params.Temperature))
	}
	var msg *anthropic.Message
	var over *tooLarge
	var latency time.Duration
	var body string
	call := func(ctx context.Context) error {
		start := time.Now()
		defer func() { latency = time.Since(start) }()
		cctx, cancel := context.WithTimeout(ctx, a.params.Timeout)
		defer cancel()
		cctx, slot := withBodySlot(cctx)
		m, err := a.client.Messages.New(cctx, mreq, extra...)
		body = slot.text()
		retryAfter := parseRetryAfter(a.headers.take(cctx), time.Now())
		switch {
		case err == nil:
			msg, over = m, nil
			return nil
		case errors.As(err, &over):
			return nil // an over-long answer, the actor's, not an error
		}
		var ae *anthropic.Error
		if errors.As(err, &ae) {
			return &HTTPError{Status: ae.StatusCode, Message: cmp.Or(ae.Message, ae.Error()), RetryAfter: retryAfter}
		}
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Errorf("%w: %v", errDropped, err)
		}
		return err
	}
	if _, err := a.params.Retry.Do(ctx, call); err != nil {
		return Response{}, &ProviderError{Spec: a.spec, Err: err, Body: body}
	}
	if over != nil {
		out := over.response(a.tap.answerLimit, req.Tools != nil)
		out.Latency, out.Body = latency, body
		return out, nil
	}
	u := msg.Usage
	out := Response{Model: string(msg.Model), Latency: latency, Body: body, Usage: &Usage{
		Prompt: int(u.InputTokens + u.CacheCreationInputTokens + u.CacheReadInputTokens), Completion: int(u.OutputTokens), Source: "provider"}}
	if *out.Usage == (Usage{Source: "provider"}) {
		out.Usage = nil // none reported: the runner counts with its tokenizer
	}
	var text strings.Builder
	for i, b := range msg.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			out.Calls = append(out.Calls, ToolCall{ID: cmp.Or(b.ID, fmt.Sprintf("call_%d", i+1)), Name: b.Name, Arguments: string(b.Input)})
		}
	}
	out.Raw = text.String()
	return out.Clip(a.tap.answerLimit), nil
}

// anthropicMessages are a conversation in the Messages API's terms: the
// system messages as the system prompt; an assistant's text and tool
// calls as text and tool_use blocks (arguments that are not a JSON object
// are sent as {}); the tools' results, and any user text after them, as
// the blocks of one user message (results that begin "error: " flagged
// is_error), since the API wants user and assistant to alternate.
func anthropicMessages(in []Message) ([]anthropic.TextBlockParam, []anthropic.MessageParam) {
	var system []anthropic.TextBlockParam
	var out []anthropic.MessageParam
	var user []anthropic.ContentBlockParamUnion
	flush := func() {
		if len(user) > 0 {
			out = append(out, anthropic.NewUserMessage(user...))
			user = nil
		}
	}
	for _, m := range in {
		switch m.Role {
		case "system":
			system = append(system, anthropic.TextBlockParam{Text: m.Content})
		case "assistant":
			flush()
			var blocks []anthropic.ContentBlockParamUnion
			if m.Content != "" {
				blocks = append(blocks, anthropic.NewTextBlock(m.Content))
			}
			for _, c := range m.ToolCalls {
				input := json.RawMessage(c.Arguments)
				if !json.Valid(input) || !strings.HasPrefix(strings.TrimSpace(c.Arguments), "{") {
					input = json.RawMessage(`{}`)
				}
				blocks = append(blocks, anthropic.NewToolUseBlock(c.ID, input, c.Name))
			}
			if len(blocks) == 0 {
				blocks = append(blocks, anthropic.NewTextBlock("(no answer)"))
			}
			out = append(out, anthropic.NewAssistantMessage(blocks...))
		case "tool":
			user = append(user, anthropic.NewToolResultBlock(m.ToolCallID, m.Content, strings.HasPrefix(m.Content, "error: ")))
		default:
			user = append(user, anthropic.NewTextBlock(m.Content))
		}
	}
	flush()
	return system, out
}

// anthropicTools are the step's tools in the Messages API's terms.
func anthropicTools(specs []tools.Spec) ([]anthropic.ToolUnionParam, error) {
	var out []anthropic.ToolUnionParam
	for _, t := range specs {
		var schema struct {
			Properties any      `json:"properties"`
			Required   []string `json:"required"`
		}
		if err := json.Unmarshal(t.Parameters, &schema); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out = append(out, anthropic.ToolUnionParam{OfTool: &anthropic.ToolParam{Name: t.Name, Description: param.NewOpt(t.Description),
			InputSchema: anthropic.ToolInputSchemaParam{Properties: schema.Properties, Required: schema.Required}}})
	}
	return out, nil
}
