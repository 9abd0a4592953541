package agent

import (
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"time"
)

// Event is one thing that happened during a prompt. Events are workflow
// state (read with the events query), streamed by RPC mode one JSON object
// per line, and printed by the starter.
//
// Only the fields of the event's Type are marshalled, so every type has the
// exact JSON shape of SPEC section 10, plus "type", "seq" and "time".
type Event struct {
	Type string `json:"type"`
	// Seq numbers the events of one prompt from 1, without gaps.
	Seq int64 `json:"seq"`
	// Time is workflow time (deterministic), UTC.
	Time time.Time `json:"time"`

	// auto_retry_start and auto_retry_end.
	Attempt     int    `json:"attempt"`
	MaxAttempts int    `json:"maxAttempts"`
	DelayMs     int64  `json:"delayMs"`
	Success     bool   `json:"success"`
	FinalError  string `json:"finalError,omitempty"`

	// errorMessage on auto_retry_start, agent_end, auto_compaction_end.
	ErrorMessage string `json:"errorMessage,omitempty"`

	// agent_end: whether another agent run follows in this prompt.
	WillRetry  bool       `json:"willRetry"`
	StopReason StopReason `json:"stopReason,omitempty"`
	// Messages (agent_end) are the messages of the agent run that ended,
	// as the terminal agent's agent_end carries them. The workflow leaves
	// it nil (its events stay small; the messages are in the session);
	// RPC mode fills it from the run's message_end events (written only
	// when not nil).
	Messages []Message `json:"messages,omitempty"`

	// message_end: the entry written and a short view of the message.
	EntryID string   `json:"entryId,omitempty"`
	Message *Message `json:"message,omitempty"`

	// auto_compaction_start / auto_compaction_end.
	Reason  string            `json:"reason,omitempty"`
	Result  *CompactionResult `json:"-"`
	Aborted bool              `json:"aborted"`

	// prompt_end: final status ("completed", "failed", "aborted").
	Status string `json:"status,omitempty"`
	// Undelivered (prompt_end) are the texts of the steer and follow_up
	// messages the prompt accepted and did not deliver, so a client can
	// send them again; UndeliveredMessages are the same messages with
	// their kind and why they did not reach the model. Undelivered stays
	// for the clients that read only the texts.
	Undelivered         []string             `json:"undelivered,omitempty"`
	UndeliveredMessages []UndeliveredMessage `json:"undeliveredMessages,omitempty"`
	// Worktree (prompt_end) says where the branch of a --worktree
	// session stands as the prompt ends; nil for other sessions.
	Worktree *BranchSummary `json:"worktree,omitempty"`

	// tool_execution_start / _update / _end: the call, its arguments, its
	// (partial) result.
	ToolCallID    string          `json:"toolCallId,omitempty"`
	ToolName      string          `json:"toolName,omitempty"`
	Args          json.RawMessage `json:"args,omitempty"`
	ToolResult    *ToolResult     `json:"-"`
	PartialResult *ToolResult     `json:"partialResult,omitempty"`
	IsError       bool            `json:"isError,omitempty"`
	// Policy and Why (tool_approval_request, tool_execution_end): the
	// approval policy's action for the call (allow, ask, deny) and the
	// rule or session grant that decided it; empty without a policy.
	Policy string `json:"policy,omitempty"`
	Why    string `json:"why,omitempty"`
	// SessionScope (tool_approval_request) says what approving the call
	// for the session allows (internal/policy.Grant.Scope).
	SessionScope string `json:"sessionScope,omitempty"`

	// turn_end: the tool results of the turn, in the order of the calls.
	ToolResults []Message `json:"toolResults,omitempty"`

	// message_update: the streamed piece. Live events (message_update,
	// tool_execution_update) are made by clients from the running
	// activity's heartbeat details; they are not workflow state and carry
	// Seq 0 (or the seq of the last workflow event before them).
	AssistantMessageEvent *AssistantMessageEvent `json:"assistantMessageEvent,omitempty"`

	// Turn numbers the model calls of a prompt from 1 (turn_start,
	// turn_end).
	Turn int `json:"turn,omitempty"`

	// subagent_start / subagent_end: the sub-agent's session (and the
	// task call, ToolCallID; its usage on subagent_end, Usage).
	SessionID string `json:"sessionId,omitempty"`

	// usage_update: the prompt's usage so far and its budget; prompt_end:
	// its usage, the figure its budget compared.
	Usage  *Spend  `json:"usage,omitempty"`
	Budget *Budget `json:"budget,omitempty"`
}

// UndeliveredMessage is a steer or follow_up message a prompt accepted
// and ended without giving to the model: the client hands it back to its
// user with the reason.
type UndeliveredMessage struct {
	// Kind is SignalSteer or SignalFollowUp.
	Kind string `json:"kind"`
	Text string `json:"text"`
	// Reason says why it did not reach the model ("retry cancelled",
	// "prompt aborted", ...).
	Reason string `json:"reason"`
}

// BranchSummary is where the branch of a session's git worktree stands
// against the commit it was made from (prompt_end, the prompt's result).
// It is bounded: Recent holds at most MaxRecentCommits commits.
type BranchSummary struct {
	Branch string `json:"branch"`
	Base   string `json:"base"`
	// Commits counts the branch's commits since Base; Recent are the
	// newest of them, newest first, as "<short hash> <subject>".
	Commits int      `json:"commits"`
	Recent  []string `json:"recent,omitempty"`
	// Uncommitted counts the changed and untracked files not committed.
	Uncommitted int `json:"uncommitted,omitempty"`
	// Files are the paths that differ from Base, committed or not, at
	// most MaxBranchFiles of them, sorted; FilesMore counts the others.
	Files     []string `json:"files,omitempty"`
	FilesMore int      `json:"filesMore,omitempty"`
	// Text is all of it on one line, as people read it ("branch
	// agent/s1: 1 commit since 1a2b3c4 (9f8e7d6 fix parser)").
	Text string `json:"text"`
}

// MaxRecentCommits bounds BranchSummary.Recent.
const MaxRecentCommits = 10

// MaxBranchFiles bounds BranchSummary.Files.
const MaxBranchFiles = 50

// UndeliveredTexts returns the texts of ms (nil when none).
func UndeliveredTexts(ms []UndeliveredMessage) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Text)
	}
	return out
}

// ToolResult is the outcome of a tool call as events carry it (the
// terminal agent's {content, details}).
type ToolResult struct {
	Content []ContentBlock `json:"content"`
	Details map[string]any `json:"details,omitempty"`
}

// Text joins the result's text ("" for nil; a preview when Details says
// truncated).
func (r *ToolResult) Text() string {
	if r == nil {
		return ""
	}
	var b strings.Builder
	for _, c := range r.Content {
		b.WriteString(c.Text)
	}
	return b.String()
}

// Delta types of message_update (AssistantMessageEvent.Type), as the
// terminal agent names them; providers stream pieces of these types.
const (
	DeltaText     = "text_delta"
	DeltaThinking = "thinking_delta"
	DeltaToolCall = "toolcall_delta"
)

// AssistantMessageEvent is the streamed piece of a message_update.
type AssistantMessageEvent struct {
	// Type is DeltaText, DeltaThinking or DeltaToolCall.
	Type         string `json:"type"`
	ContentIndex int    `json:"contentIndex"`
	Delta        string `json:"delta"`
	// Attempt numbers the model calls of the prompt's current turn from
	// 0 (retries included; always present); a client drops the partial
	// text of an attempt when a later attempt's deltas arrive.
	Attempt int `json:"attempt"`
	// ToolCallID and ToolName name the call a toolcall_delta belongs to.
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// OutputTokens is the number of output tokens of the message so far:
	// the provider's count when its stream reports one, else an estimate
	// from the streamed bytes (about four per token). The final count is
	// message_end's usage.
	OutputTokens int `json:"outputTokens,omitempty"`
	// Usage is the message's usage so far, as far as the provider's
	// stream reported it (input, cache reads and writes; Output is
	// OutputTokens) and priced when the model's prices are known; nil
	// when nothing was reported. The final usage is message_end's.
	Usage *Usage `json:"usage,omitempty"`
}

// CompactionResult describes a finished compaction.
type CompactionResult struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	EntryID          string `json:"entryId,omitempty"`
}

// eventKeys are the JSON keys each event type writes after "type", "seq"
// and "time", in order (SPEC section 10): a key ending in "?" is left out
// when its value is empty, as omitempty leaves it out.
var eventKeys = map[string][]string{
	EventAutoRetryStart:      {"attempt", "maxAttempts", "delayMs", "errorMessage"},
	EventAutoRetryEnd:        {"success", "attempt", "finalError?"},
	EventAgentStart:          {},
	EventAgentEnd:            {"messages", "willRetry", "stopReason?", "errorMessage?"},
	EventMessageStart:        {"entryId?", "message?"},
	EventMessageEnd:          {"entryId?", "message?"},
	EventMessageUpdate:       {"entryId?", "message?", "assistantMessageEvent"},
	EventTurnStart:           {"turn"},
	EventTurnEnd:             {"turn", "entryId?", "message?", "toolResults"},
	EventToolExecutionStart:  {"toolCallId", "toolName", "args", "policy?", "why?", "sessionScope?"},
	EventToolApprovalRequest: {"toolCallId", "toolName", "args", "policy?", "why?", "sessionScope?"},
	EventToolExecutionUpdate: {"toolCallId", "toolName", "args", "partialResult"},
	EventToolExecutionEnd:    {"entryId?", "toolCallId", "toolName", "result", "isError", "policy?", "why?"},
	EventAutoCompactionStart: {"reason"},
	EventSessionSettings:     {"reason"},
	EventCheckpointWarning:   {"reason"},
	EventAutoCompactionEnd:   {"result?", "aborted", "willRetry", "errorMessage?"},
	EventPromptEnd:           {"status", "errorMessage?", "undelivered?", "undeliveredMessages?", "worktree?", "usage?"},
	EventUsage:               {"usage", "budget?"},
	EventSubAgentStart:       {"toolCallId", "sessionId", "isError?", "usage?"},
	EventSubAgentEnd:         {"toolCallId", "sessionId", "isError?", "usage?"},
	EventQueueChanged:        {},
}

// eventField is the index of the Event field of each JSON key (its json
// tag), so a key is named once.
var eventField = func() map[string]int {
	m := map[string]int{}
	t := reflect.TypeFor[Event]()
	for i := range t.NumField() {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("json"), ",")
		m[name] = i
	}
	return m
}()

// value is the value of key on the wire; nil leaves the key out.
func (e *Event) value(key string) any {
	switch key {
	case "result": // two fields, by the event's type
		if e.Type == EventToolExecutionEnd {
			return e.ToolResult
		}
		return e.Result
	case "args":
		return rawOrEmpty(e.Args)
	case "toolResults":
		if e.ToolResults == nil {
			return []Message{}
		}
	case "messages":
		if e.Messages == nil {
			return nil // written only when RPC mode filled it
		}
	}
	return reflect.ValueOf(e).Elem().Field(eventField[key]).Interface()
}

// MarshalJSON writes only the fields that belong to e.Type (eventKeys).
func (e Event) MarshalJSON() ([]byte, error) {
	keys, ok := eventKeys[e.Type]
	if !ok {
		return nil, fmt.Errorf("marshal event: unknown type %q", e.Type)
	}
	b, err := json.Marshal(struct {
		Type string    `json:"type"`
		Seq  int64     `json:"seq"`
		Time time.Time `json:"time"`
	}{e.Type, e.Seq, e.Time})
	if err != nil {
		return nil, err
	}
	b = b[:len(b)-1] // the closing brace
	for _, key := range keys {
		key, optional := strings.CutSuffix(key, "?")
		v := e.value(key)
		if v == nil || optional && isEmpty(v) {
			continue
		}
		val, err := json.Marshal(v)
		if err != nil {
			return nil, err
		}
		b = fmt.Appendf(b, ",%q:%s", key, val)
	}
	return append(b, '}'), nil
}

// isEmpty is what omitempty leaves out: false, 0, "", a nil pointer, an
// empty list.
func isEmpty(v any) bool {
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice || rv.Kind() == reflect.String {
		return rv.Len() == 0
	}
	return rv.IsZero()
}

// UnmarshalJSON reads any event shape written by MarshalJSON. "result"
// is a CompactionResult on compaction events and a ToolResult on
// tool_execution_end.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event // no methods: avoids recursion
	var p struct {
		plain
		RawResult json.RawMessage `json:"result,omitempty"`
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Event(p.plain)
	e.Result, e.ToolResult = nil, nil
	switch {
	case len(p.RawResult) == 0 || string(p.RawResult) == "null":
		return nil
	case e.Type == EventToolExecutionEnd:
		e.ToolResult = new(ToolResult)
		return json.Unmarshal(p.RawResult, e.ToolResult)
	}
	e.Result = new(CompactionResult)
	return json.Unmarshal(p.RawResult, e.Result)
}

func rawOrEmpty(r json.RawMessage) json.RawMessage {
	if len(r) == 0 || !json.Valid(r) {
		return json.RawMessage("{}")
	}
	return r
}

// String renders an event for people (the starter's live output).
func (e Event) String() string {
	switch e.Type {
	case EventAutoRetryStart:
		return fmt.Sprintf("Retrying (%d/%d) in %s… (%s)", e.Attempt, e.MaxAttempts, FormatDelay(e.DelayMs), e.ErrorMessage)
	case EventAutoRetryEnd:
		if e.Success {
			return fmt.Sprintf("Retry succeeded on attempt %d", e.Attempt)
		}
		n := fmt.Sprintf("%d attempts", e.Attempt)
		if e.Attempt == 1 {
			n = "1 attempt"
		}
		return fmt.Sprintf("Retry failed after %s: %s", n, e.FinalError)
	case EventAgentEnd:
		s := fmt.Sprintf("agent_end (%s, willRetry=%t)", e.StopReason, e.WillRetry)
		if e.ErrorMessage != "" {
			s += ": " + e.ErrorMessage
		}
		return s
	case EventAutoCompactionStart:
		if e.Reason == "overflow" {
			return "Context overflow detected, auto-compacting…"
		}
		return "Auto-compacting…"
	case EventAutoCompactionEnd:
		switch {
		case e.Aborted:
			return "Auto-compaction aborted"
		case e.ErrorMessage != "":
			return "Auto-compaction failed: " + e.ErrorMessage
		case e.Result != nil:
			return fmt.Sprintf("Auto-compacted %d tokens (willRetry=%t)", e.Result.TokensBefore, e.WillRetry)
		}
		// No result, no error, not aborted: a threshold compaction
		// found nothing it may summarise (the recent messages are all
		// kept); the next prompt checks again.
		return "Auto-compaction skipped: nothing to compact yet"
	case EventMessageEnd:
		if e.Message != nil {
			return fmt.Sprintf("message_end %s (%s)", e.Message.Role, e.EntryID)
		}
	case EventToolApprovalRequest:
		s := fmt.Sprintf("Waiting for approval of %s %s %s (starter approve --session S %s [--deny | --for-session])",
			e.ToolName, e.ToolCallID, rawOrEmpty(e.Args), e.ToolCallID)
		if e.Why != "" {
			s += ": asked by " + e.Why
		}
		if e.SessionScope != "" {
			s += "; --for-session allows " + e.SessionScope
		}
		return s
	case EventUsage:
		if e.Usage != nil {
			return usageLine(*e.Usage, e.Budget)
		}
	case EventSessionSettings:
		return "Session settings: " + e.Reason
	case EventCheckpointWarning:
		return "Warning: " + e.Reason
	case EventSubAgentStart:
		return fmt.Sprintf("Sub-agent %s started for %s (follow it: starter events --session %s --follow)", e.SessionID, e.ToolCallID, e.SessionID)
	case EventSubAgentEnd:
		s := fmt.Sprintf("Sub-agent %s ended", e.SessionID)
		if e.IsError {
			s += " without an answer"
		}
		if e.Usage != nil {
			s += fmt.Sprintf(" (%d input + %d output tokens)", e.Usage.Input, e.Usage.Output)
		}
		return s
	case EventPromptEnd:
		s := "prompt " + e.Status
		if e.ErrorMessage != "" {
			s += ": " + e.ErrorMessage
		}
		if e.Usage != nil {
			s += "; " + usageLine(*e.Usage, nil)
		}
		return s
	}
	return e.Type
}

// FormatDelay renders a delay in whole seconds, rounded up ("2s", "0s").
func FormatDelay(ms int64) string {
	if ms <= 0 {
		return "0s"
	}
	return fmt.Sprintf("%ds", (ms+999)/1000)
}
