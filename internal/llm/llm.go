// Package llm is the boundary between the product and model providers.
//
// A Provider turns a run context (project-owned agent.Message values) into
// one assistant message. Provider failures are data, never Go errors: the
// returned message has StopReason "error" with the provider's error text
// and, where the provider gives them, the structured fields (status, error
// type, x-should-retry). Cancellation of ctx returns StopReason "aborted".
// Providers never retry on their own: the workflow owns the one retry loop.
// A turn the server paused (Anthropic pause_turn) comes back with
// StopReason "continue": the caller sends that answer back as the last
// message and calls again (the model activity does). A refusal is an error
// message whose ErrorType says so (anthropic.ErrorTypeRefusal).
//
// Tool calls: Request.Tools are sent with every request, and a tool call
// comes back as a "toolCall" content block (in the order the model made
// them) with StopReason "toolUse". Its Arguments are the JSON object the
// model sent ({} for none). Arguments that are not a JSON object mean the
// model sent invalid JSON (a model bug, or a stream cut): they are stored
// as a JSON string holding the model's raw text (see ToolArguments), and
// the tool runner turns such a call into an error tool result the model
// can correct. Sent back in a later request, such arguments go as {}
// (WireArguments). An assistant message with StopReason "error" carries
// no toolCall blocks: nothing would ever answer them.
//
// Streaming: when Request.OnDelta is set, providers report every text,
// thinking and tool-call argument piece as it arrives, with the index of
// its block in the final message. The deltas of a block concatenate to its
// final text, or for a tool call to the raw argument text (which is the
// Arguments themselves unless they were invalid JSON; a call that streamed
// no argument text gets one "{}" delta). A call that fails
// mid-stream has sent the deltas of what was received, then returns the
// error message.
package llm

import (
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// Request is one model call.
type Request struct {
	SessionID string
	// Provider and Model name the model; Provider selects the
	// implementation.
	Provider string
	Model    string
	System   string
	Messages []agent.Message
	// MaxTokens caps the answer (0: provider default).
	MaxTokens int
	// ThinkingLevel is the reasoning asked for (one of ThinkingLevels;
	// "" is off): Anthropic gets a thinking budget
	// (AnthropicThinkingBudget), OpenAI a reasoning_effort
	// (OpenAIReasoningEffort), the scripted model a thinking block.
	ThinkingLevel string
	// Attempt counts the model calls already made for the current user
	// message (0 for the first). The scripted provider uses it to replay
	// its fault script deterministically across worker restarts.
	Attempt int
	// Faults is the scripted provider's fault script for this prompt (the
	// activity reads it where BeginPrompt kept it); the call plays
	// Faults[Attempt+FaultOffset]. FaultOffset counts the
	// prompt's model calls before the user message that opens the current
	// turn (a steer or follow-up message restarts Attempt, not the script).
	Faults      []string
	FaultOffset int
	// Purpose says what the call is for: "" for a conversation turn,
	// PurposeSummarize for a compaction summary. Providers send both the
	// same way; the scripted provider answers a summary request with a
	// deterministic summary.
	Purpose string
	// Secret is the credential the auth store chose. It must never be
	// logged or returned; error texts that echo it are redacted.
	Secret string
	// Tools are the tools the model may call, sent with every request
	// (nil: no tools). A tool call comes back as a "toolCall" content
	// block and StopReason "toolUse".
	Tools []agent.ToolSpec
	// OnDelta, when set, is called with every piece of the answer as the
	// provider streams it (text, thinking, tool-call arguments), in order,
	// from the goroutine that called Complete. The message Complete
	// returns stays authoritative: deltas are for live display only.
	OnDelta func(Delta)
}

// Delta is one streamed piece of an assistant message, in the shape of
// the message_update event that shows it: ContentIndex is the index of
// the piece's block in the final message's Content, ToolCallID and
// ToolName are set on at least the first agent.DeltaToolCall of a call,
// and Usage is the provider's report of the call's usage so far as its
// stream gives it (the counts it leaves out zero); a delta that only
// reports usage has an empty Type and Delta. Providers leave Attempt and
// OutputTokens zero.
type Delta = agent.AssistantMessageEvent

// Emit passes d to OnDelta, when it is set.
func (r Request) Emit(d Delta) {
	if r.OnDelta != nil {
		r.OnDelta(d)
	}
}

// PurposeSummarize marks a Request that asks for a compaction summary.
const PurposeSummarize = "summarize"

// Provider calls a model.
type Provider interface {
	// Complete returns the assistant message. It never returns provider
	// failures as errors (see package doc).
	Complete(ctx context.Context, req Request) agent.Message
}

// ProviderFunc adapts a function to Provider.
type ProviderFunc func(ctx context.Context, req Request) agent.Message

// Complete calls f.
func (f ProviderFunc) Complete(ctx context.Context, req Request) agent.Message { return f(ctx, req) }

// ErrorMessage builds an assistant error message for provider failures.
func ErrorMessage(req Request, text string) agent.Message {
	return agent.Message{
		Role:         agent.RoleAssistant,
		Provider:     req.Provider,
		Model:        req.Model,
		StopReason:   agent.StopReasonError,
		ErrorMessage: text,
	}
}

// AbortedMessage is the message of a call cancelled by the user.
func AbortedMessage(req Request) agent.Message {
	m := ErrorMessage(req, retry.AbortedMessage)
	m.StopReason = agent.StopReasonAborted
	return m
}

// SendableMessages drops what a provider must not see again, and repairs
// what it would refuse:
//   - assistant messages that ended in error or abort lose their tool
//     calls (those calls never ran; a partial call cut by the error is not
//     one the model may be held to), and are dropped when nothing is left
//     (they stay in the session file, SPEC 12);
//   - a tool call of an answer with no toolResult before the next user or
//     assistant message (a session written by an older version, or an
//     abort that ended the prompt between the answer and its results) gets
//     an error result "No result provided", since Anthropic and OpenAI
//     reject a tool call without its result;
//   - a bash execution the user ran becomes the user message a model sees
//     (BashExecutionText), or is left out when ExcludeFromContext;
//   - empty messages are dropped.
func SendableMessages(msgs []agent.Message) []agent.Message {
	out := make([]agent.Message, 0, len(msgs))
	var open []agent.ToolCall // calls of the last answer still without a result
	closeOpen := func() {
		for _, c := range open {
			out = append(out, agent.Message{Role: agent.RoleToolResult, ToolCallID: c.ID, ToolName: c.Name,
				IsError: true, Content: []agent.ContentBlock{{Type: "text", Text: NoToolResultText}}})
		}
		open = nil
	}
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleToolResult:
			for i, c := range open {
				if c.ID == m.ToolCallID {
					open = append(open[:i:i], open[i+1:]...)
					break
				}
			}
			out = append(out, m)
			continue
		case agent.RoleBashExecution:
			closeOpen()
			if !m.ExcludeFromContext {
				u := agent.TextMessage(agent.RoleUser, BashExecutionText(m))
				u.Timestamp = m.Timestamp
				out = append(out, u)
			}
			continue
		case agent.RoleAssistant:
			closeOpen()
			if m.StopReason == agent.StopReasonError || m.StopReason == agent.StopReasonAborted {
				m.Content = WithoutToolCalls(m.Content)
				if len(m.Content) == 0 {
					continue
				}
			}
			for _, b := range m.Content {
				if b.Type == "toolCall" && b.ToolCall != nil {
					open = append(open, *b.ToolCall)
				}
			}
		default:
			closeOpen()
		}
		out = append(out, m)
	}
	closeOpen()
	return out
}

// NoToolResultText is the result SendableMessages gives a tool call that
// has none in the session.
const NoToolResultText = "No result provided"

// WithoutToolCalls returns content without its toolCall blocks (a copy:
// content is not changed; nil when nothing is left). A failed answer's
// calls are never run, and a tool call without its result would make
// every later request of the session fail.
func WithoutToolCalls(content []agent.ContentBlock) []agent.ContentBlock {
	var kept []agent.ContentBlock
	for _, b := range content {
		if b.Type != "toolCall" {
			kept = append(kept, b)
		}
	}
	return kept
}
