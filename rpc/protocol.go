package rpc

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/durableagent/durableagent/agent"
)

// Command types. The signal-like ones equal the workflow's signal names
// (agent.SignalAbortRetry, ...), so the same word works over RPC and with
// `temporal workflow signal --name`.
const (
	CmdPrompt               = "prompt"
	CmdAbort                = agent.SignalAbort
	CmdAbortRetry           = agent.SignalAbortRetry
	CmdSetAutoRetry         = agent.SignalSetAutoRetry
	CmdGetState             = "get_state"
	CmdGetMessages          = "get_messages"
	CmdGetLastAssistantText = "get_last_assistant_text"
	CmdCompact              = "compact"
	CmdSetAutoCompaction    = "set_auto_compaction"
)

// CommandTypes lists every command type, in documentation order.
var CommandTypes = []string{
	CmdPrompt, CmdAbort, CmdAbortRetry, CmdSetAutoRetry, CmdGetState,
	CmdGetMessages, CmdGetLastAssistantText, CmdCompact, CmdSetAutoCompaction,
}

// ParseCommand is the Response.Command of a line that has no usable
// command type (not JSON, not an object, no "type").
const ParseCommand = "parse"

// ResponseType is the "type" of every response line; any other type on
// stdout is an event.
const ResponseType = "response"

// StatusIdle is State.Status when the session runs no prompt (get_state
// answered from the settings and the session file).
const StatusIdle = "idle"

// Command is one line sent to the RPC process. Only the fields of Type
// are sent; the server rejects fields that do not belong to the type.
type Command struct {
	// ID is echoed in the response ("" sends none).
	ID   string `json:"id,omitempty"`
	Type string `json:"type"`
	// Message is the user message of prompt.
	Message string `json:"message,omitempty"`
	// Enabled is the value of set_auto_retry and set_auto_compaction.
	Enabled *bool `json:"enabled,omitempty"`
	// CustomInstructions steer the summary of compact (optional).
	CustomInstructions string `json:"customInstructions,omitempty"`
}

// Response answers one command.
type Response struct {
	ID      string `json:"id,omitempty"`
	Type    string `json:"type"`
	Command string `json:"command"`
	Success bool   `json:"success"`
	// Data is the command's result, absent for plain success.
	Data json.RawMessage `json:"data,omitempty"`
	// Error says why the command failed, in one line.
	Error string `json:"error,omitempty"`
}

// PromptData is the data of a prompt's acknowledgement: the workflow
// that runs it (inspect it in the Temporal UI or with `temporal workflow`).
type PromptData struct {
	WorkflowID string `json:"workflowId"`
	RunID      string `json:"runId"`
}

// MessagesData is the data of get_messages: the session's run context
// read from the session file (after a compaction: the summary, then the
// kept messages).
type MessagesData struct {
	Messages []agent.Message `json:"messages"`
}

// LastAssistantTextData is the data of get_last_assistant_text: the text
// of the last assistant message that did not fail, or null.
type LastAssistantTextData struct {
	Text *string `json:"text"`
}

// CompactData is the data of compact: the compaction entry written, or
// NothingToCompact when the recent messages are the whole context.
type CompactData struct {
	Result           *agent.CompactionResult `json:"result,omitempty"`
	NothingToCompact bool                    `json:"nothingToCompact,omitempty"`
}

// Line is one line of the RPC process's stdout: a response or an event.
type Line struct {
	Response *Response
	Event    *agent.Event
}

// DecodeLine parses one stdout line.
func DecodeLine(b []byte) (Line, error) {
	b = bytes.TrimSpace(b)
	var head struct {
		Type string `json:"type"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return Line{}, fmt.Errorf("rpc: decode line %q: %w", clip(b), err)
	}
	if head.Type == "" {
		return Line{}, fmt.Errorf("rpc: decode line %q: no type", clip(b))
	}
	if head.Type == ResponseType {
		var r Response
		if err := json.Unmarshal(b, &r); err != nil {
			return Line{}, fmt.Errorf("rpc: decode response %q: %w", clip(b), err)
		}
		return Line{Response: &r}, nil
	}
	var e agent.Event
	if err := json.Unmarshal(b, &e); err != nil {
		return Line{}, fmt.Errorf("rpc: decode event %q: %w", clip(b), err)
	}
	return Line{Event: &e}, nil
}

// clip shortens a line for an error message.
func clip(b []byte) string {
	const n = 120
	if len(b) <= n {
		return string(b)
	}
	return string(b[:n]) + "…"
}
