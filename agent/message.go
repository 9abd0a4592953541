package agent

import "encoding/json"

// Role says who wrote a message.
type Role string

// Roles of a conversation.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
	// RoleSummary is a compaction summary standing in for older messages.
	RoleSummary Role = "compactionSummary"
)

// StopReason says why an assistant message ended.
type StopReason string

// Stop reasons of an assistant message.
const (
	StopReasonStop    StopReason = "stop"
	StopReasonLength  StopReason = "length"
	StopReasonToolUse StopReason = "toolUse"
	StopReasonError   StopReason = "error"
	StopReasonAborted StopReason = "aborted"
)

// ContentBlock is one part of a message's content.
type ContentBlock struct {
	// Type is "text", "thinking" or "toolCall".
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ToolCall *ToolCall `json:"toolCall,omitempty"`
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Usage is the token accounting a provider reported for one call.
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
}

// ContextTokens is what the call put into the context window.
func (u Usage) ContextTokens() int { return u.Input + u.CacheRead + u.CacheWrite }

// Message is one conversation message as the project stores it.
type Message struct {
	Role    Role           `json:"role"`
	Content []ContentBlock `json:"content,omitempty"`
	// ToolCallID and ToolName are set on tool results.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`

	// Assistant-only fields.
	Provider     string     `json:"provider,omitempty"`
	Model        string     `json:"model,omitempty"`
	StopReason   StopReason `json:"stopReason,omitempty"`
	ErrorMessage string     `json:"errorMessage,omitempty"`
	// ErrorStatus is the provider's HTTP status when known (0: unknown).
	ErrorStatus int `json:"errorStatus,omitempty"`
	// ErrorType is the provider's error type when known, e.g.
	// "overloaded_error", "rate_limit_error", "insufficient_quota".
	ErrorType string `json:"errorType,omitempty"`
	// ShouldRetry mirrors a provider's x-should-retry header when present.
	ShouldRetry *bool `json:"shouldRetry,omitempty"`
	// RetryAfterMs is the wait in milliseconds the provider asked for in
	// its response headers (retry-after-ms, retry-after,
	// x-ratelimit-reset*); nil when it sent none. The retry policy prefers
	// it to a hint in ErrorMessage.
	RetryAfterMs *int64 `json:"retryAfterMs,omitempty"`
	Usage        *Usage `json:"usage,omitempty"`

	// Timestamp is Unix milliseconds.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// Text joins the message's text blocks.
func (m Message) Text() string {
	var out []byte
	for _, b := range m.Content {
		if b.Type == "text" {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}

// TextMessage builds a message with a single text block.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Content: []ContentBlock{{Type: "text", Text: text}}}
}

// ToolSpec describes a tool to a model: its name, what it does and the
// JSON Schema of its arguments. Providers send the specs with every
// request; the tool set comes from settings (tools.enabled).
type ToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}

// ToolCalls returns the message's tool calls in order.
func (m Message) ToolCalls() []ToolCall {
	var out []ToolCall
	for _, b := range m.Content {
		if b.Type == "toolCall" && b.ToolCall != nil {
			out = append(out, *b.ToolCall)
		}
	}
	return out
}
