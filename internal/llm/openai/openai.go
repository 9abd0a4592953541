// Package openai is the OpenAI-compatible Chat Completions provider
// (github.com/openai/openai-go/v3), streaming. With a base URL it talks to
// any server of that protocol: OpenRouter, Groq, vLLM, llama.cpp, Ollama,
// LM Studio. It keeps the package llm contract (errors as data, no
// retries of its own, deltas, tool calls); what each compatible server
// needs is in docs/providers.md.
//
// Specific to this protocol: the error code or type comes from the body
// (insufficient_quota, context_length_exceeded); an error object inside a
// 200 stream has status 0. Streamed tool calls are keyed by their index
// (several per answer) and become "toolCall" blocks in the order they
// first appeared; finish_reason tool_calls, or "stop" with tool calls
// (some compatible servers), is StopReason "toolUse"; a call without an
// id gets "call_<n>", n its position in the message. Tool results go back
// as role "tool" messages. Reasoning in reasoning_content or reasoning
// becomes a thinking block whose signature names the field (see
// FieldReasoningContent). OpenAI's own endpoint gets the session id as
// prompt_cache_key; cached prompt tokens are reported as cache reads.
// A call that streamed no argument text gets a final "{}" delta.
//
// The package imports no Temporal code.
package openai

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

	sdk "github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/packages/ssestream"
	"github.com/openai/openai-go/v3/shared"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// EnvAPIKey is the environment variable of the implicit credential.
const EnvAPIKey = "OPENAI_API_KEY"

// DefaultBaseURL is OpenAI's own endpoint.
const DefaultBaseURL = "https://api.openai.com/v1/"

// Provider calls Chat Completions.
type Provider struct {
	baseURL string
	// cacheKey: the endpoint is OpenAI's, which takes prompt_cache_key
	// (compatible servers may refuse a field they do not know).
	cacheKey bool
}

// New returns a provider for the server at baseURL (model.baseUrl, e.g.
// "https://openrouter.ai/api/v1" or "http://127.0.0.1:11434/v1"; "" is
// OpenAI), with the SDK's default http.Client, which has no total
// timeout: the activity's start-to-close timeout bounds the call.
func New(baseURL string) *Provider {
	return &Provider{baseURL: baseURL, cacheKey: baseURL == "" || strings.Contains(baseURL, "://api.openai.com/")}
}

// Complete implements llm.Provider. OpenAI itself needs a key; a server
// at a custom base URL (a local one) may not, so there an empty secret
// sends no Authorization header.
func (p *Provider) Complete(ctx context.Context, req llm.Request) agent.Message {
	if req.Secret == "" && p.baseURL == "" {
		return llm.ErrorMessage(req, llm.NoCredentialText("openai", EnvAPIKey))
	}
	// The service is built directly, not through NewClient, so no
	// OPENAI_* environment variable (organization, project, a second key)
	// sneaks into the request: the credential is the auth store's.
	opts := []option.RequestOption{
		option.WithBaseURL(cmp.Or(p.baseURL, DefaultBaseURL)),
		option.WithMaxRetries(0),
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
		if p.baseURL == "" {
			params.MaxCompletionTokens = sdk.Int(int64(req.MaxTokens))
		} else {
			params.MaxTokens = sdk.Int(int64(req.MaxTokens))
		}
	}

	params.Tools = tools(req.Tools)
	if p.cacheKey && req.SessionID != "" {
		params.PromptCacheKey = sdk.String(req.SessionID)
	}
	if effort := llm.OpenAIReasoningEffort(req.ThinkingLevel); effort != "" {
		params.ReasoningEffort = shared.ReasoningEffort(effort)
	}

	var resp *http.Response
	stream := svc.NewStreaming(ctx, params, option.WithResponseInto(&resp))
	defer stream.Close()
	asm := assembler{emit: req.Emit, tools: map[int64]int{}, madeID: map[int]bool{}}
	for stream.Next() {
		asm.add(stream.Current())
	}
	if err := stream.Err(); err != nil {
		if ctx.Err() == nil && asm.lengthThenError(err) {
			// The answer ended with finish_reason length and the server
			// then sent an error chunk (OpenRouter: "Token limit
			// reached"): a length stop, the streamed answer kept.
			return asm.message(req)
		}
		return p.failure(ctx, req, err, resp)
	}
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	return asm.message(req)
}

// tools converts the tool specs (nil for none, so no tools field is sent).
func tools(specs []agent.ToolSpec) []sdk.ChatCompletionToolUnionParam {
	if len(specs) == 0 {
		return nil
	}
	out := make([]sdk.ChatCompletionToolUnionParam, 0, len(specs))
	for _, spec := range specs {
		fn := sdk.FunctionDefinitionParam{Name: spec.Name, Parameters: llm.ObjectSchema(spec.Parameters)}
		if spec.Description != "" {
			fn.Description = sdk.String(spec.Description)
		}
		out = append(out, sdk.ChatCompletionFunctionTool(fn))
	}
	return out
}

// assembler builds the answer from the stream's chunks (the first choice
// only: one answer is asked for) and reports the deltas (package doc).
type assembler struct {
	emit   func(llm.Delta) // req.Emit
	blocks []agent.ContentBlock
	// text and thinking are 1 + the positions of the text and thinking
	// blocks (0: not seen yet).
	text, thinking int
	// tools maps a tool call's stream index to its block, and madeID
	// tells whether a block's id is ours (the server sent none). A call's
	// argument text streamed so far is in its Arguments until message.
	tools  map[int64]int
	madeID map[int]bool
	// sawChoice: a chunk with a choice arrived; finish is the last
	// finish_reason; usage the last usage reported.
	sawChoice bool
	finish    string
	usage     *sdk.CompletionUsage
	// details merges the reasoning_details entries (OpenRouter).
	details reasoningDetails
}

func (a *assembler) add(chunk sdk.ChatCompletionChunk) {
	if chunk.JSON.Usage.Valid() {
		u := chunk.Usage
		a.usage = &u
		if u.CompletionTokens > 0 || u.PromptTokens > 0 { // the counts so far: live output shows them
			a.emit(llm.Delta{Usage: usageOf(u)})
		}
	}
	for _, choice := range chunk.Choices {
		if choice.Index != 0 {
			continue
		}
		a.sawChoice = true
		if choice.FinishReason != "" {
			a.finish = choice.FinishReason
		}
		d := choice.Delta
		if r, field := reasoning(d); r != "" {
			a.appendText(&a.thinking, "thinking", agent.DeltaThinking, r)
			a.blocks[a.thinking-1].Signature = field
		}
		a.details.add(d.JSON.ExtraFields["reasoning_details"].Raw())
		if raw := strings.TrimSpace(d.JSON.Content.Raw()); strings.HasPrefix(raw, "[") {
			// Mistral (Magistral) sends content as typed parts.
			for _, part := range contentParts(raw) {
				if part.thinking {
					a.appendText(&a.thinking, "thinking", agent.DeltaThinking, part.text)
				} else {
					a.appendText(&a.text, "text", agent.DeltaText, part.text)
				}
			}
		} else if d.Content != "" {
			a.appendText(&a.text, "text", agent.DeltaText, d.Content)
		}
		for _, tc := range d.ToolCalls {
			a.addToolCall(tc)
		}
	}
}

// appendText adds s to the text or thinking block whose position (+1) is
// at *pos, creating it on first use.
func (a *assembler) appendText(pos *int, typ, deltaType, s string) {
	if s == "" {
		return
	}
	if *pos == 0 {
		a.blocks = append(a.blocks, agent.ContentBlock{Type: typ})
		*pos = len(a.blocks)
	}
	i := *pos - 1
	a.blocks[i].Text += s
	a.emit(llm.Delta{Type: deltaType, ContentIndex: i, Delta: s})
}

func (a *assembler) addToolCall(tc sdk.ChatCompletionChunkChoiceDeltaToolCall) {
	key := max(tc.Index, 0) // Bedrock sends -1 for a single call
	i, ok := a.tools[key]
	if ok && tc.ID != "" && !a.madeID[i] && tc.ID != a.blocks[i].ToolCall.ID {
		// A new id at a used index: a server that numbers every call 0.
		ok = false
	}
	first := !ok
	if first {
		a.blocks = append(a.blocks, agent.ContentBlock{Type: "toolCall", ToolCall: &agent.ToolCall{}})
		i = len(a.blocks) - 1
		a.tools[key] = i
	}
	call := a.blocks[i].ToolCall
	switch {
	case tc.ID != "" && (call.ID == "" || a.madeID[i]):
		call.ID, a.madeID[i] = tc.ID, false
	case call.ID == "":
		// No id (some local servers): one of our own, until the server
		// sends one.
		call.ID, a.madeID[i] = fmt.Sprintf("call_%d", i), true
	}
	if name := tc.Function.Name; name != "" && name != call.Name {
		// Names come whole in one chunk; a server that streams them in
		// pieces gets them joined.
		call.Name += name
	}
	piece := tc.Function.Arguments
	call.Arguments = append(call.Arguments, piece...)
	if first || piece != "" {
		a.emit(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, Delta: piece, ToolCallID: call.ID, ToolName: call.Name})
	}
}

// reasoning is the reasoning text of a delta from a compatible server and
// the field it came in (kept as the thinking block's signature, so it goes
// back under the same name: see messages).
func reasoning(d sdk.ChatCompletionChunkChoiceDelta) (text, field string) {
	for _, key := range []string{FieldReasoningContent, "reasoning"} {
		// Extra fields are never Valid() (the SDK has no type for them);
		// their raw JSON is there.
		f, ok := d.JSON.ExtraFields[key]
		if !ok {
			continue
		}
		var s string
		if json.Unmarshal([]byte(f.Raw()), &s) == nil && s != "" {
			return s, key
		}
	}
	return "", ""
}

// message converts the assembled answer.
func (a *assembler) message(req llm.Request) agent.Message {
	m := agent.Message{Role: agent.RoleAssistant, Provider: req.Provider, Model: req.Model}
	m.Usage = &agent.Usage{}
	if a.usage != nil {
		m.Usage = usageOf(*a.usage)
	}
	if !a.sawChoice {
		// No choice at all: the stream was cut before any delta.
		m.StopReason = agent.StopReasonError
		m.ErrorMessage = "openai stream ended without an answer: unexpected EOF"
		return m
	}
	hasToolCalls := false
	for i := range a.blocks {
		call := a.blocks[i].ToolCall
		if call == nil {
			continue
		}
		hasToolCalls = true
		raw := string(call.Arguments)
		if raw == "" { // no argument piece came
			raw = "{}"
			a.emit(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, Delta: raw, ToolCallID: call.ID, ToolName: call.Name})
		}
		call.Arguments = llm.ToolArguments(raw)
	}
	m.Content = a.blocks
	m.ReasoningDetails = a.details.JSON()
	switch a.finish {
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
		if hasToolCalls {
			m.StopReason = agent.StopReasonToolUse
		}
	}
	if m.StopReason == agent.StopReasonError {
		m.Content = llm.WithoutToolCalls(m.Content)
	}
	return m
}

// usageOf is a usage report in the project's terms: cached prompt tokens
// are cache reads, not input.
func usageOf(u sdk.CompletionUsage) *agent.Usage {
	cached := int(u.PromptTokensDetails.CachedTokens)
	return &agent.Usage{Input: int(u.PromptTokens) - cached, Output: int(u.CompletionTokens), CacheRead: cached}
}

// failure reports a failed call as data (package doc).
func (p *Provider) failure(ctx context.Context, req llm.Request, err error, resp *http.Response) agent.Message {
	f := llm.Failure{Text: err.Error()}
	var apiErr *sdk.Error
	var streamErr *ssestream.StreamError
	switch {
	case errors.As(err, &apiErr):
		f.Status = apiErr.StatusCode
		f.Type = llm.ErrorTypeOf([]byte(apiErr.RawJSON())) // its code when a word, else its type
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
		// The SDK put the bytes it read back into the body; its start
		// goes into the text.
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var start string
		if len(body) > 0 {
			start = ": " + string(body[:min(len(body), 2000)])
		}
		f.Text = fmt.Sprintf("%s (HTTP %d %s%s)", err.Error(), resp.StatusCode, http.StatusText(resp.StatusCode), start)
		f.Type = llm.ErrorTypeOf(body)
	}
	m := llm.FailureMessage(ctx, req, f, time.Now())
	if streamErr != nil && f.Type == ErrorTypeToolUseFailed && ctx.Err() == nil {
		// Groq checks a tool call against its schema while streaming and
		// ends the stream with this error (HTTP status 400 inside the
		// body): the model's sample was bad, not the request, and a new
		// sample usually passes. Retried, like an overload.
		m.ShouldRetry = new(true)
	}
	return m
}

// ErrorTypeToolUseFailed is the error code Groq sends inside a stream when
// the model's tool call does not match the tool's schema; such a call is
// retried (see failure).
const ErrorTypeToolUseFailed = "tool_use_failed"

// imageLines names the images of a tool result, one line each: a chat
// completions tool message carries text only. They are not sent after the
// results as a user message of images (pi's way): that would reach every
// compatible server, whatever its model accepts, and one that refuses
// images would fail each later call of the session.
func imageLines(m agent.Message) string {
	var b strings.Builder
	for _, img := range m.Images() {
		fmt.Fprintf(&b, "\n[image %s, %d bytes of base64, not shown: this API's tool results carry text only]", img.MimeType, len(img.Data))
	}
	return b.String()
}

// messages converts the run context, system prompt first. Tool-call
// arguments that are not a JSON object (invalid JSON from the model) are
// sent as {}: compatible servers that parse them would reject the request.
// A user message with images is sent as content parts: its text, then
// each image as an image_url data URL.
func messages(system string, msgs []agent.Message) []sdk.ChatCompletionMessageParamUnion {
	out := make([]sdk.ChatCompletionMessageParamUnion, 0, len(msgs)+1)
	if system != "" {
		out = append(out, sdk.SystemMessage(system))
	}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser, agent.RoleSummary:
			if imgs := m.Images(); len(imgs) > 0 {
				var parts []sdk.ChatCompletionContentPartUnionParam
				if t := m.Text(); t != "" {
					parts = append(parts, sdk.TextContentPart(t))
				}
				for _, img := range imgs {
					parts = append(parts, sdk.ImageContentPart(sdk.ChatCompletionContentPartImageImageURLParam{
						URL: "data:" + img.MimeType + ";base64," + img.Data}))
				}
				out = append(out, sdk.UserMessage(parts))
			} else if t := m.Text(); t != "" {
				out = append(out, sdk.UserMessage(t))
			}
		case agent.RoleToolResult:
			out = append(out, sdk.ToolMessage(m.Text()+imageLines(m), m.ToolCallID))
		case agent.RoleAssistant:
			var a sdk.ChatCompletionAssistantMessageParam
			if t := m.Text(); t != "" {
				a.Content.OfString = sdk.String(t)
			}
			extra := map[string]any{}
			if len(m.ReasoningDetails) > 0 {
				extra["reasoning_details"] = m.ReasoningDetails
			}
			for _, b := range m.Content {
				if b.Type != "toolCall" || b.ToolCall == nil {
					continue
				}
				args := string(llm.WireArguments(b.ToolCall.Arguments))
				a.ToolCalls = append(a.ToolCalls, sdk.ChatCompletionMessageToolCallUnionParam{
					OfFunction: &sdk.ChatCompletionMessageFunctionToolCallParam{
						ID:       b.ToolCall.ID,
						Function: sdk.ChatCompletionMessageFunctionToolCallFunctionParam{Name: b.ToolCall.Name, Arguments: args},
					},
				})
			}
			if r := reasoningContent(m); r != "" && len(a.ToolCalls) > 0 {
				extra[FieldReasoningContent] = r
			}
			if len(extra) > 0 {
				a.SetExtraFields(extra)
			}
			if a.Content.OfString.Valid() || len(a.ToolCalls) > 0 {
				out = append(out, sdk.ChatCompletionMessageParamUnion{OfAssistant: &a})
			}
		}
	}
	return out
}
