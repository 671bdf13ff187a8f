package actors

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Params are the settings of live actors. The command line fills them
// from its flags and the environment (the variables each registered
// kind lists, EnvVars: OPENAI_BASE_URL, OPENAI_API_KEY, OLLAMA_HOST,
// ANTHROPIC_BASE_URL, ANTHROPIC_API_KEY);
// a spec's query (openai:gpt-5-mini?temperature=0) overrides the
// sampling ones for that actor.
type Params struct {
	// OpenAIBaseURL (OPENAI_BASE_URL; default DefaultOpenAIBaseURL) and
	// OpenAIKey (OPENAI_API_KEY) are the openai: actors'.
	OpenAIBaseURL string
	OpenAIKey     string
	// OllamaHost is the Ollama server (OLLAMA_HOST).
	OllamaHost string
	// AnthropicBaseURL (ANTHROPIC_BASE_URL; default
	// DefaultAnthropicBaseURL) and AnthropicKey (ANTHROPIC_API_KEY) are
	// the anthropic: actors'.
	AnthropicBaseURL, AnthropicKey string
	// Temperature and Seed are sent when set.
	Temperature *float64
	Seed        *int
	// MaxOutputTokens bounds a response (0: the server's default).
	MaxOutputTokens int
	// Timeout bounds one request (default 2 minutes).
	Timeout time.Duration
	Retry   Retry
	// CacheOnly says every answer comes from the response cache: no key
	// is needed.
	CacheOnly bool
	// Structured asks for the proposal's JSON Schema (ProposalSchema)
	// rather than any JSON object, where the server supports it.
	Structured bool
	// MaxAnswerBytes bounds an answer, in bytes (0:
	// DefaultMaxAnswerBytes): a longer one comes back clipped, with
	// Response.Oversize set, and a provider's response body is read
	// only to about twice that (bodyTap).
	MaxAnswerBytes int64
	// Breakers, when set, gives each live actor the circuit breaker of
	// its endpoint (Retry.Breaker), shared by every actor on that
	// endpoint; Build sets it.
	Breakers *Breakers
	// Env holds the values of the environment variables of the
	// registered kinds that have no field above (EnvVar.Field nil), by
	// variable name; variables not set are absent. It is only read.
	Env map[string]string
}

// DefaultOpenAIBaseURL is the OpenAI API's address, the openai: actors'
// when OPENAI_BASE_URL is not set.
const DefaultOpenAIBaseURL = "https://api.openai.com/v1"

// The openai: kind: OpenAI's chat completions API or a server that
// speaks it, configured by OPENAI_BASE_URL (recorded in the manifest) and
// OPENAI_API_KEY.
func init() {
	Register(Kind{Spec: "openai:", Usage: "openai:MODEL", Provider: "openai",
		New: func(spec string, p Params) (Actor, error) { return asActor(NewOpenAI(spec, p)) },
		Env: []EnvVar{
			{Name: "OPENAI_BASE_URL", Help: "the OpenAI-compatible server's base URL (default " + DefaultOpenAIBaseURL + ")",
				Manifest: "openai_base_url", Field: func(p *Params) *string { return &p.OpenAIBaseURL }},
			{Name: "OPENAI_API_KEY", Help: "the key of the OpenAI-compatible server (not needed for a local address)",
				Field: func(p *Params) *string { return &p.OpenAIKey }},
		}})
}

// OpenAI is an actor served by the OpenAI chat completions API or any
// server that speaks it (vLLM, llama.cpp server, LM Studio, gateways),
// through github.com/sashabaranov/go-openai. It asks for a JSON object
// (response_format json_object).
type OpenAI struct {
	spec, model string
	params      Params
	client      *openai.Client
	headers     *headerRecorder
	tap         *bodyTap
}

// RoundSeed is the seed a live actor sends for a request of round r
// (rounds count from 1): the configured seed plus r−1, nil when none is
// set. Round 1 sends the seed as given; later rounds are other samples,
// since a provider that honours the seed (Ollama does) would otherwise
// answer every round of a run alike and make its intervals too narrow.
// The response cache keys on the configured seed and the round, so
// cached answers are unchanged.
func (p Params) RoundSeed(r int) *int {
	if p.Seed == nil {
		return nil
	}
	s := *p.Seed
	if r > 1 {
		s += r - 1
	}
	return &s
}

// NewOpenAI makes the actor of a spec "openai:MODEL[?temperature=T&seed=S&max_output_tokens=N]".
// A key is required unless the base URL is a local address.
func NewOpenAI(spec string, p Params) (*OpenAI, error) {
	model, err := liveSpec(spec, "openai", &p)
	if err != nil {
		return nil, err
	}
	base := cmp.Or(p.OpenAIBaseURL, DefaultOpenAIBaseURL)
	if err := checkEndpoint(spec, base, "OPENAI_API_KEY", p.OpenAIKey, p.CacheOnly); err != nil {
		return nil, err
	}
	cfg := openai.DefaultConfig(p.OpenAIKey)
	cfg.BaseURL = strings.TrimSuffix(base, "/")
	tap := newBodyTap(http.DefaultTransport, p.MaxAnswerBytes, 0, "choices", "0", "message", "content")
	rec := &headerRecorder{next: tap}
	cfg.HTTPClient = &http.Client{Transport: rec, CheckRedirect: refuseRedirects}
	a := &OpenAI{spec: spec, model: model, params: p, client: openai.NewClientWithConfig(cfg), headers: rec, tap: tap}
	if p.Breakers != nil {
		a.params.Retry.Breaker = p.Breakers.For(a.Endpoint())
	}
	return a, nil
}

// ProposalSchema is the JSON Schema of a proposal, {"patch": [...],
// "note": "..."} with RFC 6902 operations, sent with --structured.
var ProposalSchema = json.RawMessage(`{"type":"object","properties":{"patch":{"type":"array","items":{"type":"object","properties":{"op":{"type":"string","enum":["add","remove","replace","move","copy","test"]},"path":{"type":"string"},"from":{"type":"string"},"value":{}},"required":["op","path"]}},"note":{"type":"string"}},"required":["patch","note"]}`)

// liveSpec reads a live actor's spec "KIND:MODEL[?temperature=T&seed=S&max_output_tokens=N]":
// the model, with the query's overrides applied to p and the default
// timeout (2 minutes) filled in.
func liveSpec(spec, kind string, p *Params) (string, error) {
	rest, ok := strings.CutPrefix(spec, kind+":")
	if !ok || rest == "" {
		return "", fmt.Errorf("actor %q: want %s:MODEL", spec, kind)
	}
	model, query, _ := strings.Cut(rest, "?")
	if model == "" {
		return "", fmt.Errorf("actor %q: no model", spec)
	}
	if err := applyQuery(p, query); err != nil {
		return "", fmt.Errorf("actor %q: %w", spec, err)
	}
	if p.Timeout <= 0 {
		p.Timeout = 2 * time.Minute
	}
	return model, nil
}

// checkEndpoint checks a live actor's base URL and key (named keyName in
// messages): a key is never sent in plain text to another machine, and is
// required unless the base URL is a local address or every answer comes
// from the cache.
func checkEndpoint(spec, base, keyName, key string, cacheOnly bool) error {
	u, err := url.Parse(base)
	if err != nil || u.Host == "" {
		return fmt.Errorf("actor %q: base URL %q is not a URL", spec, base)
	}
	if key != "" && u.Scheme == "http" && !isLocal(u.Hostname()) {
		return fmt.Errorf("actor %q: refusing to send %s in plain text to %s; use https", spec, keyName, u.Host)
	}
	if key == "" && !isLocal(u.Hostname()) && !cacheOnly {
		return fmt.Errorf("actor %q: %s is not set (a key is needed for %s)", spec, keyName, u.Host)
	}
	return nil
}

// isLocal reports whether a host is this machine or a private network.
func isLocal(host string) bool {
	if host == "localhost" || !strings.Contains(host, ".") || strings.HasSuffix(host, ".local") {
		return true // this machine, or a bare name on the local network
	}
	ip := net.ParseIP(host)
	return ip != nil && (ip.IsLoopback() || ip.IsPrivate() || ip.IsUnspecified() || ip.IsLinkLocalUnicast())
}

// applyQuery reads a spec's per-actor overrides.
func applyQuery(p *Params, query string) error {
	if query == "" {
		return nil
	}
	q, err := url.ParseQuery(query)
	if err != nil {
		return err
	}
	for k, vs := range q {
		v := vs[len(vs)-1]
		switch k {
		case "temperature":
			t, err := strconv.ParseFloat(v, 64)
			if err != nil || !(t >= 0 && t <= 2) { // also refuses NaN
				return fmt.Errorf("temperature %q: want a number in [0, 2]", v)
			}
			p.Temperature = &t
		case "seed":
			s, err := strconv.Atoi(v)
			if err != nil {
				return fmt.Errorf("seed %q: want an integer", v)
			}
			p.Seed = &s
		case "max_output_tokens":
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return fmt.Errorf("max_output_tokens %q: want a positive integer", v)
			}
			p.MaxOutputTokens = n
		default:
			return fmt.Errorf("unknown parameter %q (known: temperature, seed, max_output_tokens)", k)
		}
	}
	return nil
}

// Name implements Actor.
func (a *OpenAI) Name() string { return a.spec }

// Provider implements Live: "openai".
func (a *OpenAI) Provider() string { return "openai" }

// Endpoint implements Live: "openai " and the base URL.
func (a *OpenAI) Endpoint() string {
	return "openai " + cmp.Or(a.params.OpenAIBaseURL, DefaultOpenAIBaseURL)
}

// Breaker implements Live.
func (a *OpenAI) Breaker() *Breaker { return a.params.Retry.Breaker }

// reasoningModel reports whether a model is one of OpenAI's reasoning
// models, which refuse a temperature and count reasoning tokens.
func reasoningModel(model string) bool {
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if strings.HasPrefix(model, p) {
			return true
		}
	}
	return false
}

// SpeaksTools implements ToolSpeaker: the tools protocol is native tool
// calling (tools, tool_calls).
func (a *OpenAI) SpeaksTools() bool { return true }

// Propose implements Actor: one chat completion, retried on 429, 5xx,
// timeouts and dropped connections. A 400 whose API error names the
// temperature as its param is sent once more without it. An answer
// longer than Params.MaxAnswerBytes comes back clipped (Response.Clip),
// and usage figures that are not integers are quoted in Usage.Invalid;
// neither is an error. An error is a *ProviderError.
func (a *OpenAI) Propose(ctx context.Context, req Request) (Response, error) {
	msgs := make([]openai.ChatCompletionMessage, len(req.Messages))
	for i, m := range req.Messages {
		msgs[i] = openai.ChatCompletionMessage{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID}
		for _, c := range m.ToolCalls {
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, openai.ToolCall{ID: c.ID, Type: openai.ToolTypeFunction,
				Function: openai.FunctionCall{Name: c.Name, Arguments: c.Arguments}})
		}
	}
	creq := openai.ChatCompletionRequest{
		Model: a.model, Messages: msgs, Seed: a.params.RoundSeed(req.Round), MaxCompletionTokens: a.params.MaxOutputTokens,
		ResponseFormat: &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject},
	}
	if req.Tools != nil {
		// The tools protocol: native tool calling, no response format.
		creq.ResponseFormat = nil
		for _, t := range req.Tools {
			creq.Tools = append(creq.Tools, openai.Tool{Type: openai.ToolTypeFunction,
				Function: &openai.FunctionDefinition{Name: t.Name, Description: t.Description, Parameters: t.Parameters}})
		}
	} else if a.params.Structured {
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type:       openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{Name: "proposal", Schema: ProposalSchema},
		}
	}
	sendTemperature := a.params.Temperature != nil && !reasoningModel(a.model)
	var ans answer
	var latency time.Duration // of the request that answered
	call := func(ctx context.Context) error {
		start := time.Now()
		defer func() { latency = time.Since(start) }()
		if sendTemperature {
			// go-openai leaves out a zero temperature; the smallest
			// positive float32 stands for 0.
			creq.Temperature = max(float32(*a.params.Temperature), 1e-45)
		} else {
			creq.Temperature = 0
		}
		var err error
		ans, err = a.send(ctx, creq)
		var he *HTTPError
		if sendTemperature && errors.As(err, &he) && he.Status == http.StatusBadRequest && he.Param == "temperature" {
			// Sent once more at once, without it.
			sendTemperature = false
			creq.Temperature = 0
			ans, err = a.send(ctx, creq)
		}
		return err
	}
	if _, err := a.params.Retry.Do(ctx, call); err != nil {
		return Response{}, &ProviderError{Spec: a.spec, Err: err, Body: ans.body}
	}
	if ans.over != nil {
		out := ans.over.response(a.tap.answerLimit, req.Tools != nil)
		out.Latency, out.Body = latency, ans.body
		return out, nil
	}
	resp := ans.resp
	// The figures go on as sent; the runner judges them (Implausible).
	out := Response{Model: resp.Model, Fingerprint: resp.SystemFingerprint, Latency: latency, Body: ans.body,
		Usage: &Usage{Prompt: resp.Usage.PromptTokens, Completion: resp.Usage.CompletionTokens, Source: "provider", Invalid: ans.badUsage}}
	if d := resp.Usage.CompletionTokensDetails; d != nil {
		out.Usage.Reasoning = d.ReasoningTokens
	}
	if len(resp.Choices) == 0 {
		// A 200 without an answer (an error body, empty choices) is the
		// provider's failure, not the model's.
		return Response{}, &ProviderError{Spec: a.spec, Err: errors.New("the server returned no answer (no choices)"), Body: ans.body}
	}
	out.Raw = resp.Choices[0].Message.Content
	for i, c := range resp.Choices[0].Message.ToolCalls {
		out.Calls = append(out.Calls, ToolCall{ID: cmp.Or(c.ID, fmt.Sprintf("call_%d", i+1)), Name: c.Function.Name, Arguments: c.Function.Arguments})
	}
	if f := resp.Choices[0].Message.FunctionCall; f != nil {
		// The deprecated form of a tool call (function_call), which
		// older servers still send: a call like any other.
		out.Calls = append(out.Calls, ToolCall{ID: fmt.Sprintf("call_%d", len(out.Calls)+1), Name: f.Name, Arguments: f.Arguments})
	}
	if *out.Usage == (Usage{Source: "provider"}) {
		out.Usage = nil // none reported: the runner counts with its tokenizer
	}
	return out.Clip(a.tap.answerLimit), nil
}

// usageTypeError returns, for a response that decoded but for a usage
// figure of the wrong type (a fraction, a string, a number beyond 64
// bits), the figure's name and value ("usage.prompt_tokens: number
// 1e300"); "" for any other error.
func usageTypeError(err error) string {
	var te *json.UnmarshalTypeError
	if !errors.As(err, &te) || !strings.HasPrefix(te.Field, "usage") {
		return ""
	}
	return te.Field + ": " + te.Value
}

// answer is what one chat completion request brought back: the decoded
// response, or the over-long answer its body held (over); badUsage
// quotes usage figures that did not decode (usageTypeError); body is the
// response body as read (Response.Body).
type answer struct {
	resp     openai.ChatCompletionResponse
	over     *tooLarge
	badUsage string
	body     string
}

// send sends one chat completion request, bounded by the timeout. An
// over-long answer and usage figures that do not decode are answers, not
// errors; an error is converted (convert), with the body read, if any,
// in the answer returned beside it.
func (a *OpenAI) send(ctx context.Context, creq openai.ChatCompletionRequest) (answer, error) {
	cctx, cancel := context.WithTimeout(ctx, a.params.Timeout)
	defer cancel()
	cctx, slot := withBodySlot(cctx)
	var ans answer
	var err error
	ans.resp, err = a.client.CreateChatCompletion(cctx, creq)
	ans.body = slot.text()
	switch {
	case err == nil:
	case errors.As(err, &ans.over):
	default:
		if ans.badUsage = usageTypeError(err); ans.badUsage == "" {
			return answer{body: ans.body}, a.convert(cctx, err)
		}
	}
	a.headers.take(cctx)
	return ans, nil
}

// convert turns go-openai's errors into HTTPError values (with the
// server's Retry-After) or marks dropped connections.
func (a *OpenAI) convert(ctx context.Context, err error) error {
	retryAfter := parseRetryAfter(a.headers.take(ctx), time.Now())
	var ae *openai.APIError
	if errors.As(err, &ae) {
		he := &HTTPError{Status: ae.HTTPStatusCode, Message: ae.Message, RetryAfter: retryAfter}
		if ae.Param != nil {
			he.Param = *ae.Param
		}
		return he
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		msg := strings.TrimSpace(string(re.Body))
		if msg == "" && re.Err != nil {
			msg = re.Err.Error()
		}
		return &HTTPError{Status: re.HTTPStatusCode, Message: msg, RetryAfter: retryAfter}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", errDropped, err)
	}
	return err
}
