// Package anthropic is the Anthropic Messages API provider
// (github.com/anthropics/anthropic-sdk-go/v2), streaming. It keeps the
// package llm contract (errors as data, no retries of its own, deltas,
// tool calls); docs/providers.md says what the API needs.
//
// Specific to this API: an error event inside a 200 stream (Anthropic
// sends overloaded_error that way) has status 0 and its type. Tools go out
// as custom tools with input_schema; a streamed tool_use block becomes a
// "toolCall" block. stop_reason refusal is an error of type "refusal"
// (shouldRetry false) with the API's explanation; pause_turn is StopReason
// "continue". redacted_thinking blocks are kept (agent.ContentBlock.Redacted)
// and sent back as they came; thinking blocks of another API are not sent.
// Consecutive tool results become the tool_result blocks of ONE user
// message, as the API requires.
//
// Prompt caching: three cache_control breakpoints, on the system prompt
// (which caches the tools before it) and on the last block of the last two
// user messages, so each request reads the previous one's cache. That
// needs a prefix that does not change between the requests of a session
// (TestPrefixIsStable).
//
// Deltas are indexed by the block's position in the final message: blocks
// the project does not keep (server tool uses and their results) take no
// index; a redacted_thinking block sends none. A tool call is announced by
// an empty delta carrying its id and name; a call whose input came with no
// delta gets one delta with the whole input when its block stops.
//
// The package imports no Temporal code.
package anthropic

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/anthropics/anthropic-sdk-go/v2"
	"github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/anthropics/anthropic-sdk-go/v2/packages/param"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/llm"
)

// DefaultMaxTokens is sent when the request names no limit: the API
// requires max_tokens.
const DefaultMaxTokens = 8192

// EnvAPIKey is the environment variable of the implicit credential.
const EnvAPIKey = "ANTHROPIC_API_KEY"

// Provider calls the Messages API.
type Provider struct {
	baseURL string
}

// New returns a provider for the endpoint at baseURL (model.baseUrl; ""
// is Anthropic's API), with the SDK's default http.Client, which has no
// total timeout: a streamed answer may legitimately take minutes, and the
// activity's start-to-close timeout bounds the call.
func New(baseURL string) *Provider {
	return &Provider{baseURL: baseURL}
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
	}
	if p.baseURL != "" {
		opts = append(opts, option.WithBaseURL(p.baseURL))
	}
	client := sdk.NewClient(opts...)

	maxTokens := req.MaxTokens
	if maxTokens <= 0 {
		maxTokens = DefaultMaxTokens
	}
	params := sdk.MessageNewParams{
		Model:    req.Model,
		Messages: messages(req.Messages),
	}
	if budget := llm.AnthropicThinkingBudget(req.ThinkingLevel); budget > 0 {
		// Extended thinking: max_tokens must leave room for the answer
		// beyond the budget.
		params.Thinking = sdk.ThinkingConfigParamOfEnabled(int64(budget))
		if maxTokens <= budget {
			maxTokens += budget
		}
	}
	params.MaxTokens = int64(maxTokens)
	if req.System != "" {
		params.System = []sdk.TextBlockParam{{Text: req.System}}
	}
	params.Tools = tools(req.Tools)
	cacheBreakpoints(&params)

	stream := client.Messages.NewStreaming(ctx, params)
	defer stream.Close()
	var acc sdk.Message
	asm := assembler{emit: req.Emit}
	for stream.Next() {
		ev := stream.Current()
		if err := acc.Accumulate(ev); err != nil {
			return p.failure(ctx, req, err)
		}
		asm.add(ev)
	}
	if err := stream.Err(); err != nil {
		return p.failure(ctx, req, err)
	}
	if ctx.Err() != nil {
		return llm.AbortedMessage(req)
	}
	return assistant(req, acc, asm.content())
}

// tools converts the tool specs (nil for none, so no tools field is sent).
func tools(specs []agent.ToolSpec) []sdk.ToolUnionParam {
	if len(specs) == 0 {
		return nil
	}
	out := make([]sdk.ToolUnionParam, 0, len(specs))
	for _, spec := range specs {
		t := sdk.ToolParam{Name: spec.Name, InputSchema: param.Override[sdk.ToolInputSchemaParam](llm.ObjectSchema(spec.Parameters))}
		if spec.Description != "" {
			t.Description = sdk.String(spec.Description)
		}
		out = append(out, sdk.ToolUnionParam{OfTool: &t})
	}
	return out
}

// cacheBreakpoints marks the prompt-cache breakpoints (package doc).
// Without a system prompt the last tool carries the first one.
func cacheBreakpoints(params *sdk.MessageNewParams) {
	cc := sdk.NewCacheControlEphemeralParam()
	if n := len(params.System); n > 0 {
		params.System[n-1].CacheControl = cc
	} else if n := len(params.Tools); n > 0 {
		params.Tools[n-1].OfTool.CacheControl = cc
	}
	marked := 0
	for i := len(params.Messages) - 1; i >= 0 && marked < 2; i-- {
		u := params.Messages[i].OfUser
		if u == nil || len(u.Content) == 0 {
			continue
		}
		if p := u.Content[len(u.Content)-1].GetCacheControl(); p != nil {
			*p = cc
			marked++
		}
	}
}

// assembler builds the content blocks from the stream events and reports
// the deltas (package doc). Blocks are kept by their position in the final
// message; index maps the stream's block index to it (-1: not kept).
type assembler struct {
	emit   func(llm.Delta) // req.Emit
	blocks []agent.ContentBlock
	// Per kept block: a tool call's argument text streamed so far, its
	// input from the start event, and whether the block is finished.
	args  []*strings.Builder
	start []string
	done  []bool
	index []int
}

// kept returns the position of the stream's block i (-1: not kept).
func (a *assembler) kept(i int64) int {
	if i < 0 || i >= int64(len(a.index)) {
		return -1
	}
	return a.index[i]
}

func (a *assembler) add(ev sdk.MessageStreamEventUnion) {
	switch ev.Type {
	case "message_start", "message_delta":
		// The output token count so far (message_start's is the first
		// token or two, message_delta's cumulative): live output shows it.
		u := agent.Usage{Input: int(ev.Usage.InputTokens), Output: int(ev.Usage.OutputTokens),
			CacheRead: int(ev.Usage.CacheReadInputTokens), CacheWrite: int(ev.Usage.CacheCreationInputTokens)}
		if ev.Type == "message_start" {
			u = usageOf(ev.Message.Usage)
		}
		if u != (agent.Usage{}) {
			// The whole report too (input and cache so far): RPC mode's
			// streaming usage.
			a.emit(llm.Delta{Usage: &u})
		}
	case "content_block_start":
		cb := ev.ContentBlock
		var b agent.ContentBlock
		switch cb.Type {
		case "text", "thinking":
			b = agent.ContentBlock{Type: cb.Type, Signature: cb.Signature}
		case "redacted_thinking":
			// Encrypted reasoning: kept (no text, no delta) so it goes
			// back with a tool-use turn, which the API requires.
			b = agent.ContentBlock{Type: "thinking", Signature: cb.Data, Redacted: true}
		case "tool_use":
			b = agent.ContentBlock{Type: "toolCall", ToolCall: &agent.ToolCall{ID: cb.ID, Name: cb.Name}}
		default:
			a.index = append(a.index, -1)
			return
		}
		i := len(a.blocks)
		a.index = append(a.index, i)
		a.blocks = append(a.blocks, b)
		a.args = append(a.args, &strings.Builder{})
		a.start = append(a.start, strings.TrimSpace(cb.JSON.Input.Raw()))
		a.done = append(a.done, false)
		a.text(i, agent.DeltaText, cb.Text) // a start's text or thinking, if any
		a.text(i, agent.DeltaThinking, cb.Thinking)
		if b.ToolCall != nil {
			a.emit(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, ToolCallID: cb.ID, ToolName: cb.Name})
		}
	case "content_block_delta":
		i := a.kept(ev.Index)
		if i < 0 {
			return
		}
		switch ev.Delta.Type {
		case "text_delta":
			if a.blocks[i].Type == "text" {
				a.text(i, agent.DeltaText, ev.Delta.Text)
			}
		case "thinking_delta":
			if a.blocks[i].Type == "thinking" {
				a.text(i, agent.DeltaThinking, ev.Delta.Thinking)
			}
		case "signature_delta":
			if a.blocks[i].Type == "thinking" {
				a.blocks[i].Signature += ev.Delta.Signature
			}
		case "input_json_delta":
			if a.blocks[i].ToolCall != nil && ev.Delta.PartialJSON != "" {
				a.args[i].WriteString(ev.Delta.PartialJSON)
				tc := a.blocks[i].ToolCall
				a.emit(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, Delta: ev.Delta.PartialJSON, ToolCallID: tc.ID, ToolName: tc.Name})
			}
		}
	case "content_block_stop":
		if i := a.kept(ev.Index); i >= 0 {
			a.finish(i)
		}
	}
}

func (a *assembler) text(i int, typ, s string) {
	if s == "" {
		return
	}
	a.blocks[i].Text += s
	a.emit(llm.Delta{Type: typ, ContentIndex: i, Delta: s})
}

// finish sets a block's final arguments. Input that came only with the
// start event (no delta) is reported as one delta, so the deltas always
// concatenate to the argument text.
func (a *assembler) finish(i int) {
	if a.done[i] {
		return
	}
	a.done[i] = true
	tc := a.blocks[i].ToolCall
	if tc == nil {
		return
	}
	raw := a.args[i].String()
	if raw == "" { // no argument delta came
		raw = a.start[i]
		if raw == "" || raw == "null" {
			raw = "{}"
		}
		a.emit(llm.Delta{Type: agent.DeltaToolCall, ContentIndex: i, Delta: raw, ToolCallID: tc.ID, ToolName: tc.Name})
	}
	tc.Arguments = llm.ToolArguments(raw)
}

// content finishes every block and returns them.
func (a *assembler) content() []agent.ContentBlock {
	for i := range a.blocks {
		a.finish(i)
	}
	return a.blocks
}

// failure reports a failed call as data (package doc).
func (p *Provider) failure(ctx context.Context, req llm.Request, err error) agent.Message {
	f := llm.Failure{Text: err.Error()}
	var apiErr *sdk.Error
	if errors.As(err, &apiErr) {
		f.Status = apiErr.StatusCode
		f.Type = string(apiErr.Type())
		if f.Type == "" {
			f.Type = llm.ErrorTypeOf([]byte(apiErr.RawJSON()))
		}
		if apiErr.Response != nil {
			f.Header = apiErr.Response.Header
		}
	}
	return llm.FailureMessage(ctx, req, f, time.Now())
}

// messages converts the run context. Thinking blocks go back with their
// signatures (extended thinking with tools requires them); one without a
// signature is not sent. Empty text blocks are dropped because the API
// rejects them. User messages carry their images as base64 image blocks.
// Consecutive tool results become the tool_result blocks of one user
// message: the API wants all the results of an assistant message's tool
// calls in the user message right after it.
// Tool-call arguments that are not a JSON object (invalid JSON from the
// model) are sent as {}: input must be an object.
func messages(msgs []agent.Message) []sdk.MessageParam {
	out := make([]sdk.MessageParam, 0, len(msgs))
	older := 0 // tool-result images over the bound, oldest first (toolResult)
	for _, m := range msgs {
		if m.Role == agent.RoleToolResult {
			older += len(m.Images())
		}
	}
	older = max(0, (older-maxToolResultImages+imageBatch-1)/imageBatch*imageBatch)
	lastToolResults := false // out's last message holds only tool results
	for _, m := range msgs {
		isToolResult := false
		switch m.Role {
		case agent.RoleUser, agent.RoleSummary:
			var blocks []sdk.ContentBlockParamUnion
			if t := m.Text(); t != "" {
				blocks = append(blocks, sdk.NewTextBlock(t))
			}
			for _, img := range m.Images() {
				blocks = append(blocks, sdk.NewImageBlockBase64(img.MimeType, img.Data))
			}
			if len(blocks) > 0 {
				out = append(out, sdk.NewUserMessage(blocks...))
			}
		case agent.RoleToolResult:
			isToolResult = true
			block := toolResult(m, &older)
			if lastToolResults {
				last := out[len(out)-1].OfUser
				last.Content = append(last.Content, block)
			} else {
				out = append(out, sdk.NewUserMessage(block))
			}
		case agent.RoleAssistant:
			var blocks []sdk.ContentBlockParamUnion
			for _, b := range m.Content {
				switch {
				case b.Type == "thinking" && b.Signature != "" && m.API != "" && m.API != agent.APIOf("anthropic"):
					// Reasoning of another provider (its signature is
					// not Anthropic's): the API would refuse it. A
					// message that does not say which API wrote it is
					// taken as Anthropic's.
				case b.Type == "thinking" && b.Redacted:
					blocks = append(blocks, sdk.NewRedactedThinkingBlock(b.Signature))
				case b.Type == "thinking" && b.Signature != "":
					blocks = append(blocks, sdk.NewThinkingBlock(b.Signature, b.Text))
				case b.Type == "text" && b.Text != "":
					blocks = append(blocks, sdk.NewTextBlock(b.Text))
				case b.Type == "toolCall" && b.ToolCall != nil:
					blocks = append(blocks, sdk.NewToolUseBlock(b.ToolCall.ID, llm.WireArguments(b.ToolCall.Arguments), b.ToolCall.Name))
				}
			}
			if len(blocks) > 0 {
				out = append(out, sdk.NewAssistantMessage(blocks...))
			}
		default:
			continue
		}
		lastToolResults = isToolResult
	}
	return out
}

// maxToolResultImages bounds the tool-result images one request carries
// (the API refuses a request of more than 100): the newest are sent, the
// older ones as a line of text each. They leave imageBatch at a time, so
// the request's cached prefix changes once every imageBatch images, not
// at every new one.
const maxToolResultImages, imageBatch = 20, 10

// toolResult is the tool_result block of a tool result message: its
// text, then its images (an MCP tool's); while *older is above zero an
// image is named in a line of text instead, and counted off. An empty
// result has no content (the API rejects empty text blocks).
func toolResult(m agent.Message, older *int) sdk.ContentBlockParamUnion {
	b := sdk.ToolResultBlockParam{ToolUseID: m.ToolCallID, IsError: sdk.Bool(m.IsError)}
	if t := m.Text(); t != "" {
		b.Content = []sdk.ToolResultBlockParamContentUnion{{OfText: &sdk.TextBlockParam{Text: t}}}
	}
	for _, img := range m.Images() {
		if *older > 0 {
			*older--
			text := fmt.Sprintf("[an earlier %s image, no longer sent: a request carries the newest %d tool-result images]", img.MimeType, maxToolResultImages)
			b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfText: &sdk.TextBlockParam{Text: text}})
			continue
		}
		b.Content = append(b.Content, sdk.ToolResultBlockParamContentUnion{OfImage: sdk.NewImageBlockBase64(img.MimeType, img.Data).OfImage})
	}
	return sdk.ContentBlockParamUnion{OfToolResult: &b}
}

// ErrorTypeRefusal is the ErrorType of an answer the model refused
// (stop_reason "refusal").
const ErrorTypeRefusal = "refusal"

// refusalText is the error text of a refusal: the API's explanation and
// policy category when it gives them.
func refusalText(d sdk.RefusalStopDetails) string {
	text := "the model refused to answer (stop_reason refusal)"
	if d.Category != "" {
		text += ", category " + string(d.Category)
	}
	if d.Explanation != "" {
		text += ": " + d.Explanation
	}
	return text
}

// assistant converts the accumulated answer: content as the assembler
// built it, usage and stop reason from the accumulated message.
func assistant(req llm.Request, acc sdk.Message, content []agent.ContentBlock) agent.Message {
	u := usageOf(acc.Usage)
	m := agent.Message{Role: agent.RoleAssistant, Provider: req.Provider, Model: req.Model, Content: content, Usage: &u}
	switch acc.StopReason {
	case sdk.StopReasonRefusal:
		// The model declined: an error no retry changes, with the API's
		// explanation, told apart by its type.
		m.StopReason = agent.StopReasonError
		m.ErrorType = ErrorTypeRefusal
		m.ShouldRetry = new(bool)
		m.ErrorMessage = refusalText(acc.StopDetails)
	case sdk.StopReasonPauseTurn:
		// A long server-tool run paused: the caller sends the answer so
		// far back to go on (agent.StopReasonContinue).
		m.StopReason = agent.StopReasonContinue
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
	if m.StopReason == agent.StopReasonError {
		m.Content = llm.WithoutToolCalls(m.Content)
	}
	return m
}

func usageOf(u sdk.Usage) agent.Usage {
	return agent.Usage{Input: int(u.InputTokens), Output: int(u.OutputTokens),
		CacheRead: int(u.CacheReadInputTokens), CacheWrite: int(u.CacheCreationInputTokens)}
}
