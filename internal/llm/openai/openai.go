// Package openai is the OpenAI-compatible Chat Completions provider
// (github.com/openai/openai-go/v3), streaming. With a base URL it talks to
// any server of that protocol: OpenRouter, Groq, vLLM, llama.cpp, Ollama,
// LM Studio.
//
// Contract (see package llm): a failed call comes back as an assistant
// message with StopReason "error", the SDK's error text unchanged (plus
// " retry-after-ms=N" when the response headers carry a hint), the HTTP
// status, the error code or type from the body (insufficient_quota,
// context_length_exceeded, ...) and x-should-retry. An error object sent
// inside a 200 stream is reported with status 0 and its type. The SDK's
// own retries are off: the workflow owns the one retry loop. Cancelling
// ctx cancels the HTTP request and yields an aborted message.
//
// The package imports no Temporal code; the activity heartbeats on its
// own ticker, so a slow first token is fine.
package openai

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// EnvAPIKey is the environment variable of the implicit credential.
const EnvAPIKey = "OPENAI_API_KEY"

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Options configure the provider. The zero value talks to OpenAI with a
// plain http.Client.
type Options struct {
	// BaseURL is the server (model.baseUrl), e.g.
	// "https://openrouter.ai/api/v1" or "http://127.0.0.1:11434/v1"
	// ("": OpenAI).
	BaseURL string
	// HTTPClient is used for every call (nil: a client without a total
	// timeout; the activity's start-to-close timeout bounds the call).
	HTTPClient *http.Client
	// Now is the clock for HTTP-date retry hints (nil: time.Now).
	Now func() time.Time
}

// Provider calls Chat Completions.
type Provider struct {
	opts Options
}

// New returns a provider.
func New(opts Options) *Provider {
	if opts.HTTPClient == nil {
		opts.HTTPClient = &http.Client{}
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	return &Provider{opts: opts}
}

// Complete implements llm.Provider. OpenAI itself needs a key; a server
// at a custom base URL (a local one) may not, so there an empty secret
// sends no Authorization header.
func (p *Provider) Complete(ctx context.Context, req llm.Request) agent.Message {
	if req.Secret == "" && p.opts.BaseURL == "" {
		return llm.ErrorMessage(req, llm.NoCredentialText("openai", EnvAPIKey))
	}
	base := p.opts.BaseURL
	if base == "" {
		base = DefaultBaseURL
	}
	// The service is built directly, not through NewClient, so no
	// OPENAI_* environment variable (organization, project, a second key)
	// sneaks into the request: the credential is the auth store's.
	opts := []option.RequestOption{
		option.WithBaseURL(base),
		option.WithMaxRetries(0),
		option.WithHTTPClient(p.opts.HTTPClient),
	}
	if req.Secret != "" {
		opts = append(opts, option.WithAPIKey(req.Secret))
	}
	svc := sdk.NewChatCompletionService(opts...)

	params := sdk.ChatCompletionNewParams{
		Model:         req.Model,
		Messages:      messages(req.System, req.Messages),
		StreamOptions: sdk.ChatCompletionStreamOptionsParam{IncludeUsage: sdk.Bool(true)},
	}
	if req.MaxTokens > 0 {
		// OpenAI's newer models accept only max_completion_tokens; the
		// compatible servers know max_tokens best.
		if p.opts.BaseURL == "" {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}

	var resp *http.Response
	stream := svc.NewStreaming(ctx, params, option.WithResponseInto(&resp))
	defer stream.Close()
	var acc sdk.ChatCompletionAccumulator
	for stream.Next() {
		acc.AddChunk(stream.Current())
	}
	if err := stream.Err(); err != nil {
		return p.failure(ctx, req, err, resp)
	}
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	return assistant(req, acc.ChatCompletion)
}

// failure reports a failed call as data (package doc).
func (p *Provider) failure(ctx context.Context, req llm.Request, err error, resp *http.Response) agent.Message {
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	f := llm.Failure{Text: err.Error()}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		f.Status = llm.ErrorStatusOf(apiErr.StatusCode)
		f.Type = apiErr.Code
		if f.Type == "" || isNumber(f.Type) {
			f.Type = apiErr.Type
		}
		if apiErr.Response != nil {
			f.Header = apiErr.Response.Header
		}
	case errors.As(err, &streamErr):
		// An error object inside a 200 stream ("data: {"error":{...}}").
		f.Type = llm.ErrorTypeOf(streamErr.Event.Data)
		if resp != nil {
			f.Header = resp.Header
		}
	case resp != nil && resp.StatusCode >= 400:
		// The SDK could not read the error body as JSON (an HTML page
		// from a proxy, a plain-text error of a local server) and reports
		// only the decoding failure; the status and the body say more.
		f.Status = resp.StatusCode
		f.Header = resp.Header
		body := readBody(resp)
		f.Text = fmt.Sprintf("%s (HTTP %d %s%s)", err.Error(), resp.StatusCode, http.StatusText(resp.StatusCode), snippet(body))
		f.Type = llm.ErrorTypeOf(body)
	}
	return llm.FailureMessage(req, f, p.opts.Now())
}

func isNumber(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// readBody reads (part of) an error response's body; the SDK puts the
// bytes it read back into it.
func readBody(resp *http.Response) []byte {
	if resp == nil || resp.Body == nil {
		return nil
	}
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	return b
}

// snippet is the start of a body for an error text.
func snippet(b []byte) string {
	const max = 2000
	if len(b) == 0 {
		return ""
	}
	if len(b) > max {
		b = b[:max]
	}
	return ": " + string(b)
}

// messages converts the run context, system prompt first.
func messages(system string, msgs []agent.Message) []sdk.ChatCompletionMessageParamUnion {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, sdk.SystemMessage(system))
	}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser, agent.RoleSummary:
			if t := m.Text(); t != "" {
				out = append(out, sdk.UserMessage(t))
			}
		case agent.RoleToolResult:
			out = append(out, sdk.ToolMessage(m.Text(), m.ToolCallID))
		case agent.RoleAssistant:
			var a sdk.ChatCompletionAssistantMessageParam
			if t := m.Text(); t != "" {
				a.Content.OfString = sdk.String(t)
			}
			for _, b := range m.Content {
				if b.Type != "toolCall" || b.ToolCall == nil {
					continue
				}
				args := string(b.ToolCall.Arguments)
				if args == "" {
					args = "{}"
				}
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ToolCall.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.ToolCall.Name, Arguments: args},
					},
				})
			}
			if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
				out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
			}
		}
	}
	return out
}

// assistant converts the accumulated answer.
func assistant(req llm.Request, c sdk.ChatCompletion) agent.Message {
	m := agent.Message{Role: agent.RoleAssistant, Provider: req.Provider, Model: req.Model}
	cached := int(c.Usage.PromptTokensDetails.CachedTokens)
	m.Usage = &agent.Usage{
		Input:     int(c.Usage.PromptTokens) - cached,
		Output:    int(c.Usage.CompletionTokens),
		CacheRead: cached,
	}
	if len(c.Choices) == 0 {
		// No choice at all: the stream was cut before any delta.
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "openai stream ended without an answer: unexpected EOF"
		return m
	}
	choice := c.Choices[0]
	if choice.Message.Content != "" {
		m.Content = append(m.Content, agent.ContentBlock{Type: "text", Text: choice.Message.Content})
	}
	for _, tc := range choice.Message.ToolCalls {
		m.Content = append(m.Content, agent.ContentBlock{Type: "toolCall",
			ToolCall: &agent.ToolCall{ID: tc.ID, Name: tc.Function.Name, Arguments: []byte(tc.Function.Arguments)}})
	}
	switch choice.FinishReason {
	case "length":
		m.StopReason = agent.StopReasonLength
	case "tool_calls", "function_call":
		m.StopReason = agent.StopReasonToolUse
	case "content_filter":
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "the provider's content filter stopped the answer (finish_reason content_filter)"
	case "":
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "openai stream ended before a finish_reason: unexpected EOF"
	default:
		m.StopReason = agent.StopReasonStop
	}
	return m
}
