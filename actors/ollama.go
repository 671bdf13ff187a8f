package actors

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/patchbench/patchbench/internal/textcut"
	"github.com/patchbench/patchbench/tools"
)

// The ollama: kind: an Ollama server, at OLLAMA_HOST (recorded in the
// manifest).
func init() {
	Register(Kind{Spec: "ollama:", Usage: "ollama:MODEL", Provider: "ollama",
		New: func(spec string, p Params) (Actor, error) { return asActor(NewOllama(spec, p.OllamaHost, p)) },
		Env: []EnvVar{
			{Name: "OLLAMA_HOST", Help: "the Ollama server (default http://127.0.0.1:11434)",
				Manifest: "ollama_host", Field: func(p *Params) *string { return &p.OllamaHost }},
		}})
}

// Ollama is an actor served by an Ollama server's /api/chat, through
// github.com/ollama/ollama/api. It asks for JSON (format "json") and
// sends temperature, seed and num_ctx as options; tokens come from
// prompt_eval_count and eval_count.
type Ollama struct {
	spec, model, host string
	params            Params
	numCtx            int
	client            *api.Client

	headers *headerRecorder
	tap     *bodyTap

	mu      sync.Mutex // guards checked and digest
	checked bool
	digest  string
}

// NewOllama makes the actor of a spec "ollama:MODEL[?temperature=T&seed=S&max_output_tokens=N&num_ctx=C]"
// for the server at host (OLLAMA_HOST; default http://127.0.0.1:11434).
// A cold model load can take minutes: the timeout is at least 10 minutes.
func NewOllama(spec, host string, p Params) (*Ollama, error) {
	rest, ok := strings.CutPrefix(spec, "ollama:")
	if !ok || rest == "" {
		return nil, fmt.Errorf("actor %q: want ollama:MODEL", spec)
	}
	model, query, _ := strings.Cut(rest, "?")
	if model == "" {
		return nil, fmt.Errorf("actor %q: no model", spec)
	}
	numCtx := 0
	q, err := url.ParseQuery(query)
	if err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if v := q.Get("num_ctx"); v != "" {
		if _, err := fmt.Sscan(v, &numCtx); err != nil || numCtx < 1 {
			return nil, fmt.Errorf("actor %q: num_ctx %q: want a positive integer", spec, v)
		}
		q.Del("num_ctx")
	}
	if err := applyQuery(&p, q.Encode()); err != nil {
		return nil, fmt.Errorf("actor %q: %w", spec, err)
	}
	if p.Timeout < 10*time.Minute {
		p.Timeout = 10 * time.Minute
	}
	if host == "" {
		host = "http://127.0.0.1:11434"
	}
	if !strings.Contains(host, "://") {
		host = "http://" + host
	}
	u, err := url.Parse(host)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("actor %q: OLLAMA_HOST %q is not a host", spec, host)
	}
	tap := newBodyTap(http.DefaultTransport, p.MaxAnswerBytes, ollamaBodyBytes, "message", "content")
	rec := &headerRecorder{next: tap}
	a := &Ollama{headers: rec, tap: tap, spec: spec, model: model, host: u.String(), params: p, numCtx: numCtx, client: api.NewClient(u, &http.Client{Transport: rec, CheckRedirect: refuseRedirects})}
	if p.Breakers != nil {
		a.params.Retry.Breaker = p.Breakers.For(a.Endpoint())
	}
	return a, nil
}

// Name implements Actor.
func (a *Ollama) Name() string { return a.spec }

// Provider implements Live: "ollama".
func (a *Ollama) Provider() string { return "ollama" }

// Endpoint implements Live: "ollama " and the host.
func (a *Ollama) Endpoint() string { return "ollama " + a.host }

// Breaker implements Live.
func (a *Ollama) Breaker() *Breaker { return a.params.Retry.Breaker }

// check asks the server about the model once (/api/show), so that a
// model not pulled is one clear error, and finds its digest (/api/tags).
func (a *Ollama) check(ctx context.Context) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.checked {
		return nil
	}
	_, err := a.params.Retry.Do(ctx, func(ctx context.Context) error {
		cctx, cancel := context.WithTimeout(ctx, a.params.Timeout)
		defer cancel()
		_, err := a.client.Show(cctx, &api.ShowRequest{Model: a.model})
		if err != nil {
			return a.convert(cctx, err)
		}
		a.headers.take(cctx)
		return nil
	})
	if err != nil {
		// A transient failure is checked again by the next request; a
		// model that is not there says how to get it.
		var he *HTTPError
		if errors.As(err, &he) && he.Status == http.StatusNotFound {
			err = fmt.Errorf("model %q is not on the Ollama server (run: ollama pull %s): %w", a.model, a.model, err)
		} else if errors.Is(err, syscall.ECONNREFUSED) {
			err = fmt.Errorf("no Ollama server at %s (is ollama serve running? OLLAMA_HOST?): %w", a.host, err)
		}
		return err
	}
	cctx, cancel := context.WithTimeout(ctx, a.params.Timeout)
	defer cancel()
	list, err := a.client.List(cctx)
	a.headers.take(cctx)
	if err == nil {
		for _, m := range list.Models {
			if m.Name == a.model || m.Model == a.model || m.Name == a.model+":latest" {
				a.digest = m.Digest
			}
		}
	}
	a.checked = true
	return nil
}

// Propose implements Actor. As for OpenAI, an answer longer than
// Params.MaxAnswerBytes comes back clipped (Response.Clip), and counts
// that are not integers are quoted in Usage.Invalid (the answer is then
// read from the body itself, decodeOllama); an error is a
// *ProviderError.
func (a *Ollama) Propose(ctx context.Context, req Request) (Response, error) {
	if err := a.check(ctx); err != nil {
		return Response{}, &ProviderError{Spec: a.spec, Err: err}
	}
	msgs := ollamaMessages(req.Messages)
	opts := map[string]any{}
	if a.params.Temperature != nil {
		opts["temperature"] = *a.params.Temperature
	}
	if seed := a.params.RoundSeed(req.Round); seed != nil {
		opts["seed"] = *seed
	}
	if a.params.MaxOutputTokens > 0 {
		opts["num_predict"] = a.params.MaxOutputTokens
	}
	if a.numCtx > 0 {
		opts["num_ctx"] = a.numCtx
	}
	stream := false
	format := json.RawMessage(`"json"`)
	if a.params.Structured {
		format = ProposalSchema
	}
	creq := &api.ChatRequest{Model: a.model, Messages: msgs, Stream: &stream, Format: format, Options: opts}
	if req.Tools != nil {
		// The tools protocol: native tool calling, no format.
		creq.Format = nil
		tools, err := ollamaTools(req.Tools)
		if err != nil {
			return Response{}, &ProviderError{Spec: a.spec, Err: err}
		}
		creq.Tools = tools
	}
	var out Response
	var lastBody []byte // of the last request, for an error
	call := func(ctx context.Context) error {
		start := time.Now() // the latency of the request that answers
		cctx, cancel := context.WithTimeout(ctx, a.params.Timeout)
		defer cancel()
		cctx, slot := withBodySlot(cctx)
		var content strings.Builder
		var last api.ChatResponse
		var calls []ToolCall
		err := a.client.Chat(cctx, creq, func(r api.ChatResponse) error {
			content.WriteString(r.Message.Content)
			for _, c := range r.Message.ToolCalls {
				args, err := json.Marshal(c.Function.Arguments)
				if err != nil {
					args = []byte("{}")
				}
				calls = append(calls, ToolCall{ID: cmp.Or(c.ID, fmt.Sprintf("call_%d", len(calls)+1)), Name: c.Function.Name, Arguments: string(args)})
			}
			last = r
			return nil
		})
		body := slot.get()
		lastBody = body
		var over *tooLarge
		if errors.As(err, &over) {
			a.headers.take(cctx)
			out = over.response(a.tap.answerLimit, req.Tools != nil)
			out.Body = string(body)
			return nil // an over-long answer, the actor's, not an error
		}
		usage := Usage{Prompt: last.PromptEvalCount, Completion: last.EvalCount, Source: "provider"}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) && body != nil {
			// A figure of the wrong type fails the client's decoding of
			// the whole answer: read it from the body.
			if d, ok := decodeOllama(body); ok {
				err, last, usage, calls = nil, api.ChatResponse{Model: d.model, Done: d.done}, d.usage, d.calls
				content.Reset()
				content.WriteString(d.content)
			}
		}
		if err != nil {
			return a.convert(cctx, err)
		}
		a.headers.take(cctx)
		if !last.Done || cctx.Err() != nil {
			// A stream cut short (a dropped connection, the timeout) is
			// not an answer: retried, never cached.
			return fmt.Errorf("%w: the answer ended before done", errDropped)
		}
		a.mu.Lock()
		digest := a.digest
		a.mu.Unlock()
		// The figures go on as sent; the runner judges them (Implausible).
		out = Response{Raw: content.String(), Model: last.Model, Fingerprint: digest, Usage: &usage, Latency: time.Since(start), Calls: calls,
			Body: string(body)}
		return nil
	}
	if _, err := a.params.Retry.Do(ctx, call); err != nil {
		return Response{}, &ProviderError{Spec: a.spec, Err: err, Body: string(lastBody)}
	}
	return out.Clip(a.tap.answerLimit), nil
}

// SpeaksTools implements ToolSpeaker: the tools protocol is Ollama's
// native tool calling (tools, tool_calls).
func (a *Ollama) SpeaksTools() bool { return true }

// ollamaMessages are a conversation in Ollama's terms: an assistant's
// tool calls with their arguments as objects (arguments that are not a
// JSON object are sent as {}), a tool's result with the name of the tool
// it answers.
func ollamaMessages(in []Message) []api.Message {
	names := map[string]string{}
	msgs := make([]api.Message, len(in))
	for i, m := range in {
		msgs[i] = api.Message{Role: m.Role, Content: m.Content, ToolCallID: m.ToolCallID, ToolName: names[m.ToolCallID]}
		for _, c := range m.ToolCalls {
			names[c.ID] = c.Name
			var args api.ToolCallFunctionArguments
			if json.Unmarshal([]byte(c.Arguments), &args) != nil {
				args = api.NewToolCallFunctionArguments()
			}
			msgs[i].ToolCalls = append(msgs[i].ToolCalls, api.ToolCall{ID: c.ID, Function: api.ToolCallFunction{Name: c.Name, Arguments: args}})
		}
	}
	return msgs
}

// ollamaTools are the step's tools in Ollama's terms.
func ollamaTools(specs []tools.Spec) (api.Tools, error) {
	var out api.Tools
	for _, t := range specs {
		var params api.ToolFunctionParameters
		if err := json.Unmarshal(t.Parameters, &params); err != nil {
			return nil, fmt.Errorf("tool %s: %w", t.Name, err)
		}
		out = append(out, api.Tool{Type: "function", Function: api.ToolFunction{Name: t.Name, Description: t.Description, Parameters: params}})
	}
	return out, nil
}

// lenientAnswer is an Ollama chat answer read leniently (decodeOllama).
type lenientAnswer struct {
	content, model string
	done           bool
	usage          Usage
	calls          []ToolCall
}

// decodeOllama reads a chat answer from its body (one JSON object, or
// NDJSON when streamed), its text and its tool calls (each call's
// arguments as sent, "{}" when none), taking the token counts as they
// come: a count that is not an integer of 64 bits is quoted in
// Usage.Invalid. ok is false when the body is not such an answer.
func decodeOllama(body []byte) (lenientAnswer, bool) {
	var out lenientAnswer
	out.usage.Source = "provider"
	dec := json.NewDecoder(bytes.NewReader(body))
	for dec.More() {
		var part struct {
			Model   string `json:"model"`
			Message struct {
				Content   string `json:"content"`
				ToolCalls []struct {
					ID       string `json:"id"`
					Function struct {
						Name      string          `json:"name"`
						Arguments json.RawMessage `json:"arguments"`
					} `json:"function"`
				} `json:"tool_calls"`
			} `json:"message"`
			Done            bool            `json:"done"`
			PromptEvalCount json.RawMessage `json:"prompt_eval_count"`
			EvalCount       json.RawMessage `json:"eval_count"`
		}
		if err := dec.Decode(&part); err != nil {
			return lenientAnswer{}, false
		}
		out.content += part.Message.Content
		for _, c := range part.Message.ToolCalls {
			args := string(c.Function.Arguments)
			if args == "" || args == "null" {
				args = "{}"
			}
			out.calls = append(out.calls, ToolCall{ID: cmp.Or(c.ID, fmt.Sprintf("call_%d", len(out.calls)+1)), Name: c.Function.Name, Arguments: args})
		}
		out.model, out.done = part.Model, part.Done
		var bad []string
		for _, f := range []struct {
			name string
			raw  json.RawMessage
			n    *int
		}{{"prompt_eval_count", part.PromptEvalCount, &out.usage.Prompt}, {"eval_count", part.EvalCount, &out.usage.Completion}} {
			if len(f.raw) == 0 {
				continue
			}
			n, err := strconv.ParseInt(string(f.raw), 10, 64)
			if err != nil {
				bad = append(bad, f.name+": "+textcut.Cut(string(f.raw), 64))
				continue
			}
			*f.n = int(n)
		}
		if len(bad) > 0 {
			out.usage.Invalid = strings.Join(bad, ", ")
		}
	}
	return out, true
}

// convert turns the Ollama client's errors into HTTPError values, with
// the server's Retry-After.
func (a *Ollama) convert(ctx context.Context, err error) error {
	retryAfter := parseRetryAfter(a.headers.take(ctx), time.Now())
	var se api.StatusError
	if errors.As(err, &se) {
		return &HTTPError{Status: se.StatusCode, Message: se.ErrorMessage, RetryAfter: retryAfter}
	}
	var sp *api.StatusError
	if errors.As(err, &sp) {
		return &HTTPError{Status: sp.StatusCode, Message: sp.ErrorMessage, RetryAfter: retryAfter}
	}
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("%w: %v", errDropped, err)
	}
	return err
}
