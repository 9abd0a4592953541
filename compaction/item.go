package compaction

import "encoding/json"

// Roles an Item can have; the values equal the project's message roles.
const (
	RoleUser       = "user"
	RoleAssistant  = "assistant"
	RoleToolResult = "toolResult"
	// RoleSummary marks the summary that a previous compaction put in place
	// of older messages.
	RoleSummary = "compactionSummary"
)

// Item is one run-context message as the planner sees it. Callers convert
// their messages to Items, one per message, oldest first.
type Item struct {
	// ID is the message's session entry id; Cut reports the first kept one.
	ID string `json:"id"`
	// Role is RoleUser, RoleAssistant, RoleToolResult or RoleSummary.
	// Other roles are carried and summarised but are never a cut point.
	Role string `json:"role"`
	// Text is the message's text content (a summary's text for RoleSummary,
	// the tool output for RoleToolResult).
	Text string `json:"text,omitempty"`
	// Thinking is an assistant's reasoning text, if the caller keeps it.
	Thinking string `json:"thinking,omitempty"`
	// ToolCalls are an assistant's tool calls, in order.
	ToolCalls []ToolCallRef `json:"toolCalls,omitempty"`
	// ToolCallID is, on a tool result, the id of the call it answers.
	ToolCallID string `json:"toolCallId,omitempty"`
	// ToolName is, on a tool result, the name of the tool that ran.
	ToolName string `json:"toolName,omitempty"`
	// IsError marks a tool result that reports a failure.
	IsError bool `json:"isError,omitempty"`
	// Tokens is the message's size in tokens when the caller knows it;
	// 0 means "estimate it" (see EstimateItem).
	Tokens int `json:"tokens,omitempty"`
}

// ToolCallRef is one tool call of an assistant message.
type ToolCallRef struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Arguments is the call's JSON arguments object, as the model sent it.
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// UsageAnchor is the token usage a provider reported for the assistant
// message at Index: the real size of the context up to and including that
// message.
type UsageAnchor struct {
	// Index is the position of the assistant message in the items.
	Index      int `json:"index"`
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
}

// Tokens is input + cache-read + cache-write + output: what the context
// held once the anchored message was appended.
func (u UsageAnchor) Tokens() int { return u.Input + u.CacheRead + u.CacheWrite + u.Output }
