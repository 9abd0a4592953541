package agent

import (
	"bytes"
	"cmp"
	"encoding/json"
	"math"
)

// Role says who wrote a message.
type Role string

// Roles of a conversation.
const (
	RoleUser       Role = "user"
	RoleAssistant  Role = "assistant"
	RoleToolResult Role = "toolResult"
	// RoleSummary is a compaction summary standing in for older messages.
	RoleSummary Role = "compactionSummary"
	// RoleBashExecution is a command the user ran in the session's
	// workspace (RPC bash): the terminal agent's BashExecutionMessage. It
	// reaches the model as a user message on the next prompt.
	RoleBashExecution Role = "bashExecution"
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
	// StopReasonContinue: the provider paused the turn and expects the
	// answer so far back to go on with it (Anthropic's pause_turn, after a
	// long run of server tools). The model activity makes that next call
	// itself; the paused answer stays in the session before the rest.
	StopReasonContinue StopReason = "continue"
)

// Content block types.
const (
	BlockText     = "text"
	BlockThinking = "thinking"
	BlockToolCall = "toolCall"
	BlockImage    = "image"
)

// ContentBlock is one part of a message's content. On the wire (session
// files, events, RPC) it has the terminal agent's flat shapes:
//
//	{"type":"text","text":...}
//	{"type":"thinking","thinking":...,"thinkingSignature"?:...,"redacted"?:true}
//	{"type":"toolCall","id":...,"name":...,"arguments":{...}}
//	{"type":"image","data":<base64>,"mimeType":...}
//
// Reading also accepts the forms earlier versions wrote (a tool call
// nested under "toolCall", thinking text under "text"), so old session
// files and workflow histories still load.
type ContentBlock struct {
	// Type is BlockText, BlockThinking, BlockToolCall or BlockImage.
	Type string
	// Text is the text of a text block and the thinking of a thinking
	// block.
	Text string
	// Signature is the provider's signature of a thinking block
	// (Anthropic needs it to accept the block back). For a redacted
	// thinking block it is the encrypted data; for reasoning from an
	// OpenAI-compatible server, the field it came in.
	Signature string
	// Redacted marks a thinking block the provider sent encrypted only
	// (Anthropic redacted_thinking): no text, the data in Signature, sent
	// back as it came.
	Redacted bool
	// ToolCall is set on toolCall blocks.
	ToolCall *ToolCall
	// Data (base64) and MimeType are set on image blocks.
	Data     string
	MimeType string
}

// ToolCall is a model's request to run a tool.
type ToolCall struct {
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// blockWire is a content block on the wire: the fields of each type's
// flat shape, present (a non-nil pointer) only on that type, in the
// shape's order, and the nested tool call of earlier versions (read only).
type blockWire struct {
	Type      string          `json:"type"`
	Text      *string         `json:"text,omitempty"`
	Thinking  *string         `json:"thinking,omitempty"`
	Signature string          `json:"thinkingSignature,omitempty"`
	Redacted  bool            `json:"redacted,omitempty"`
	ToolCall  *ToolCall       `json:"toolCall,omitempty"`
	ID        *string         `json:"id,omitempty"`
	Name      *string         `json:"name,omitempty"`
	Arguments json.RawMessage `json:"arguments,omitempty"`
	Data      *string         `json:"data,omitempty"`
	MimeType  *string         `json:"mimeType,omitempty"`
}

// MarshalJSON writes the block's flat shape (see ContentBlock).
func (b ContentBlock) MarshalJSON() ([]byte, error) {
	w := blockWire{Type: b.Type}
	switch b.Type {
	case BlockText:
		w.Text = &b.Text
	case BlockThinking:
		w.Thinking, w.Signature, w.Redacted = &b.Text, b.Signature, b.Redacted
	case BlockToolCall:
		var tc ToolCall
		if b.ToolCall != nil {
			tc = *b.ToolCall
		}
		w.ID, w.Name, w.Arguments = &tc.ID, &tc.Name, tc.Arguments
		if len(w.Arguments) == 0 {
			w.Arguments = json.RawMessage("{}") // invalid JSON stays an error
		}
	case BlockImage:
		w.Data, w.MimeType = &b.Data, &b.MimeType
	default:
		if b.Text != "" {
			w.Text = &b.Text
		}
	}
	return MarshalPlain(w)
}

// UnmarshalJSON reads the flat shapes and the earlier nested ones.
func (b *ContentBlock) UnmarshalJSON(data []byte) error {
	var w blockWire
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	text := func(p *string) string {
		if p == nil {
			return ""
		}
		return *p
	}
	*b = ContentBlock{Type: w.Type, Text: text(w.Text), Signature: w.Signature, Redacted: w.Redacted,
		Data: text(w.Data), MimeType: text(w.MimeType)}
	switch w.Type {
	case BlockThinking:
		b.Text = text(cmp.Or(w.Thinking, w.Text))
	case BlockToolCall:
		b.ToolCall = cmp.Or(w.ToolCall, &ToolCall{ID: text(w.ID), Name: text(w.Name), Arguments: w.Arguments})
		if string(b.ToolCall.Arguments) == "null" {
			b.ToolCall.Arguments = nil
		}
	}
	return nil
}

// Usage is the token accounting a provider reported for one call, with
// its cost when the model's prices are known (model.prices).
type Usage struct {
	Input      int `json:"input"`
	Output     int `json:"output"`
	CacheRead  int `json:"cacheRead"`
	CacheWrite int `json:"cacheWrite"`
	// TotalTokens is Input + Output + CacheRead + CacheWrite.
	TotalTokens int `json:"totalTokens"`
	// Cost is in US dollars; zero when the model's prices are unknown.
	Cost UsageCost `json:"cost"`
}

// UsageCost is the cost of one call in US dollars, per kind of token.
type UsageCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
	Total      float64 `json:"total"`
}

// ModelCost is a model's price in US dollars per million tokens (the
// terminal agent's Model.cost).
type ModelCost struct {
	Input      float64 `json:"input"`
	Output     float64 `json:"output"`
	CacheRead  float64 `json:"cacheRead"`
	CacheWrite float64 `json:"cacheWrite"`
}

// Priced returns u with TotalTokens and, for price p, Cost filled in.
func (u Usage) Priced(p ModelCost) Usage {
	u.TotalTokens = u.Input + u.Output + u.CacheRead + u.CacheWrite
	per := func(tokens int, price float64) float64 { return roundCost(float64(tokens) * price / 1e6) }
	u.Cost = UsageCost{
		Input: per(u.Input, p.Input), Output: per(u.Output, p.Output),
		CacheRead: per(u.CacheRead, p.CacheRead), CacheWrite: per(u.CacheWrite, p.CacheWrite),
	}
	u.Cost.Total = roundCost(u.Cost.Input + u.Cost.Output + u.Cost.CacheRead + u.Cost.CacheWrite)
	return u
}

// roundCost drops float noise below a millionth of a cent.
func roundCost(v float64) float64 { return math.Round(v*1e8) / 1e8 }

// ContextTokens is what the call put into the context window.
func (u Usage) ContextTokens() int { return u.Input + u.CacheRead + u.CacheWrite }

// Message is one conversation message as the project stores it, in the
// terminal agent's shapes (UserMessage, AssistantMessage,
// ToolResultMessage, BashExecutionMessage, CompactionSummaryMessage).
type Message struct {
	Role    Role           `json:"role"`
	Content []ContentBlock `json:"content,omitempty"`
	// ToolCallID and ToolName are set on tool results.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	IsError    bool   `json:"isError,omitempty"`

	// Assistant-only fields.
	// API is the wire protocol of the provider ("anthropic-messages",
	// "openai-completions"; see APIOf).
	API          string     `json:"api,omitempty"`
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
	// ReasoningDetails is the reasoning_details array an OpenAI-compatible
	// router (OpenRouter) streamed with the answer, merged per entry; it is
	// sent back with the message so the upstream model can go on with its
	// reasoning (signed or encrypted entries). Nil when none came.
	ReasoningDetails json.RawMessage `json:"reasoningDetails,omitempty"`

	// TokensBefore is set on a compaction summary: the context size the
	// compaction replaced.
	TokensBefore int `json:"tokensBefore,omitempty"`

	// Bash execution fields (RoleBashExecution): the command, its
	// (possibly truncated) output, its exit code (nil when it did not
	// exit: cancelled or failed to start), and whether it was cancelled or
	// its output truncated.
	Command        string `json:"command,omitempty"`
	Output         string `json:"output,omitempty"`
	ExitCode       *int   `json:"exitCode,omitempty"`
	Cancelled      bool   `json:"cancelled,omitempty"`
	Truncated      bool   `json:"truncated,omitempty"`
	FullOutputPath string `json:"fullOutputPath,omitempty"`
	// ExcludeFromContext keeps a bash execution out of what the model is
	// sent (pi's `!!`, RPC bash excludeFromContext); it stays in the
	// session and its views.
	ExcludeFromContext bool `json:"excludeFromContext,omitempty"`

	// Timestamp is Unix milliseconds.
	Timestamp int64 `json:"timestamp,omitempty"`
}

// messageFields is Message without its methods (no MarshalJSON
// recursion).
type messageFields Message

// MarshalJSON writes the fields of the message's role. Fields the
// terminal agent requires are always written: content (an empty list at
// the end when there is none), isError on tool results; output,
// cancelled and truncated on bash executions; summary on compaction
// summaries (the text, also kept as content).
func (m Message) MarshalJSON() ([]byte, error) {
	switch m.Role {
	case RoleToolResult:
		if len(m.Content) == 0 {
			return MarshalPlain(struct {
				messageFields
				IsError bool           `json:"isError"`
				Content []ContentBlock `json:"content"`
			}{messageFields(m), m.IsError, []ContentBlock{}})
		}
		return MarshalPlain(struct {
			messageFields
			IsError bool `json:"isError"`
		}{messageFields(m), m.IsError})
	case RoleBashExecution:
		return MarshalPlain(struct {
			messageFields
			Output    string `json:"output"`
			Cancelled bool   `json:"cancelled"`
			Truncated bool   `json:"truncated"`
		}{messageFields(m), m.Output, m.Cancelled, m.Truncated})
	case RoleSummary:
		return MarshalPlain(struct {
			messageFields
			Summary      string `json:"summary"`
			TokensBefore int    `json:"tokensBefore"`
		}{messageFields(m), m.Text(), m.TokensBefore})
	}
	if len(m.Content) == 0 && m.Role != "" {
		// The terminal agent's messages always have content: an answer
		// that failed before any text has "content":[].
		return MarshalPlain(struct {
			messageFields
			Content []ContentBlock `json:"content"`
		}{messageFields(m), []ContentBlock{}})
	}
	return MarshalPlain(messageFields(m))
}

// Text joins the message's text blocks.
func (m Message) Text() string {
	var out []byte
	for _, b := range m.Content {
		if b.Type == BlockText {
			out = append(out, b.Text...)
		}
	}
	return string(out)
}

// Images returns the message's image blocks.
func (m Message) Images() []ContentBlock {
	var out []ContentBlock
	for _, b := range m.Content {
		if b.Type == BlockImage {
			out = append(out, b)
		}
	}
	return out
}

// TextMessage builds a message with a single text block.
func TextMessage(role Role, text string) Message {
	return Message{Role: role, Content: []ContentBlock{{Type: BlockText, Text: text}}}
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
		if b.Type == BlockToolCall && b.ToolCall != nil {
			out = append(out, *b.ToolCall)
		}
	}
	return out
}

// APIOf is the terminal agent's name of a provider's wire protocol
// (Message.API, Model.api).
func APIOf(provider string) string {
	switch provider {
	case "anthropic":
		return "anthropic-messages"
	case "openai":
		return "openai-completions"
	}
	return provider
}

// MarshalPlain is json.Marshal without HTML escaping: code in messages
// stays readable in session files ("<", ">" and "&" as they are).
func MarshalPlain(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
