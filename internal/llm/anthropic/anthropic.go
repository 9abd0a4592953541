// Package anthropic is the Anthropic Messages API provider
// (github.com/anthropics/anthropic-sdk-go/v2), streaming.
//
// Contract (see package llm): a failed call comes back as an assistant
// message with StopReason "error", the SDK's error text unchanged (plus
// " retry-after-ms=N" when the response headers carry a hint), the HTTP
// status, the error type from the body (overloaded_error, rate_limit_error,
// ...) and x-should-retry. An error event inside a 200 stream (Anthropic
// sends overloaded_error that way) is reported with status 0 and its type.
// The SDK's own retries are off: the workflow owns the one retry loop.
// Cancelling ctx cancels the HTTP request and yields an aborted message.
//
// The package imports no Temporal code; the activity heartbeats on its
// own ticker, so a slow first token is fine.
package anthropic

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// DefaultMaxTokens is sent when the request names no limit: the API
// requires max_tokens.
const DefaultMaxTokens = 8192

// EnvAPIKey is the environment variable of the implicit credential.
const EnvAPIKey = "ANTHROPIC_API_KEY"

// Options configure the provider. The zero value talks to the public API
// with a plain http.Client.
type Options struct {
	// BaseURL overrides https://api.anthropic.com/ (model.baseUrl).
	BaseURL string
	// HTTPClient is used for every call (nil: a client without a total
	// timeout, since a streamed answer may legitimately take minutes; the
	// activity's start-to-close timeout bounds the call).
	HTTPClient *http.Client
	// Now is the clock for HTTP-date retry hints (nil: time.Now).
	Now func() time.Time
}

// Provider calls the Messages API.
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

// Complete implements llm.Provider.
func (p *Provider) Complete(ctx context.Context, req llm.Request) agent.Message {
	if req.Secret == "" {
		return llm.ErrorMessage(req, llm.NoCredentialText("anthropic", EnvAPIKey))
	}
	opts := []option.RequestOption{
		option.WithoutEnvironmentDefaults(),
		option.WithAPIKey(req.Secret),
		option.WithMaxRetries(0),
		option.WithHTTPClient(p.opts.HTTPClient),
	}
	if p.opts.BaseURL != "" {
		opts = append(opts, option.WithBaseURL(p.opts.BaseURL))
	}
	client := sdk.NewClient(opts...)

	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{
		Model:     req.Model,
		MaxTokens: int64(maxTokens),
		Messages:  messages(req.Messages),
	}
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}

	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var acc sdk.Message
	for stream.Next() {
		if err := acc.Accumulate(stream.Current()); err != nil {
			return p.failure(ctx, req, err)
		}
	}
	if err := stream.Err(); err != nil {
		return p.failure(ctx, req, err)
	}
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	return assistant(req, acc)
}

// failure reports a failed call as data (package doc).
func (p *Provider) failure(ctx context.Context, req llm.Request, err error) agent.Message {
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	f := llm.Failure{Text: err.Error()}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		f.Status = llm.ErrorStatusOf(apiErr.StatusCode)
		f.Type = string(apiErr.Type())
		if f.Type == "" {
			f.Type = llm.ErrorTypeOf([]byte(apiErr.RawJSON()))
		}
		if apiErr.Response != nil {
			f.Header = apiErr.Response.Header
		}
	}
	return llm.FailureMessage(req, f, p.opts.Now())
}

// messages converts the run context. Thinking blocks are not sent back
// (they would need their signatures); empty text blocks are dropped
// because the API rejects them.
func messages(msgs []agent.Message) []sdk.MessageParam {
	out := make([]sdk.MessageParam, 0, len(msgs))
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser, agent.RoleSummary:
			if t := m.Text(); t != "" {
				out = append(out, sdk.NewUserMessage(sdk.NewTextBlock(t)))
			}
		case agent.RoleToolResult:
			out = append(out, sdk.NewUserMessage(sdk.NewToolResultBlock(m.ToolCallID, m.Text(), m.IsError)))
		case agent.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			for _, b := range m.Content {
				switch {
				case b.Type == "text" && b.Text != "":
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				case b.Type == "toolCall" && b.ToolCall != nil:
					args := json.RawMessage(b.ToolCall.Arguments)
					if len(args) == 0 {
						args = json.RawMessage("{}")
					}
					blocks = append(blocks, sdk.NewToolUseBlock(b.ToolCall.ID, args, b.ToolCall.Name))
				}
			}
			if len(blocks) > 0 {
				out = append(out, sdk.NewAssistantMessage(blocks...))
			}
		}
	}
	return out
}

// assistant converts the accumulated answer.
func assistant(req llm.Request, acc sdk.Message) agent.Message {
	m := agent.Message{Role: agent.RoleAssistant, Provider: req.Provider, Model: req.Model}
	for _, b := range acc.Content {
		switch b.Type {
		case "text":
			m.Content = append(m.Content, agent.ContentBlock{Type: "text", Text: b.Text})
		case "thinking":
			m.Content = append(m.Content, agent.ContentBlock{Type: "thinking", Text: b.Thinking})
		case "tool_use":
			m.Content = append(m.Content, agent.ContentBlock{Type: "toolCall",
				ToolCall: &agent.ToolCall{ID: b.ID, Name: b.Name, Arguments: json.RawMessage(b.Input)}})
		}
	}
	m.Usage = &agent.Usage{
		Input:      int(acc.Usage.InputTokens),
		Output:     int(acc.Usage.OutputTokens),
		CacheRead:  int(acc.Usage.CacheReadInputTokens),
		CacheWrite: int(acc.Usage.CacheCreationInputTokens),
	}
	switch acc.StopReason {
	case sdk.StopReasonMaxTokens:
		m.StopReason = agent.StopReasonLength
	case sdk.StopReasonToolUse:
		m.StopReason = agent.StopReasonToolUse
	case sdk.StopReasonModelContextWindowExceeded:
		// The model ran into the context window while answering: an
		// overflow, which the compaction path handles.
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "stop_reason model_context_window_exceeded: the context window is full"
	case "":
		// The stream ended without message_delta: cut short.
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "anthropic stream ended before the message was complete: unexpected EOF"
	default:
		m.StopReason = agent.StopReasonStop
	}
	return m
}
