package agent

import (
	"encoding/json"
	"fmt"
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

	// message_end: the entry written and a short view of the message.
	EntryID string   `json:"entryId,omitempty"`
	Message *Message `json:"message,omitempty"`

	// auto_compaction_start / auto_compaction_end.
	Reason  string            `json:"reason,omitempty"`
	Result  *CompactionResult `json:"result,omitempty"`
	Aborted bool              `json:"aborted"`

	// prompt_end: final status ("completed", "failed", "aborted").
	Status string `json:"status,omitempty"`
}

// CompactionResult describes a finished compaction.
type CompactionResult struct {
	Summary          string `json:"summary"`
	FirstKeptEntryID string `json:"firstKeptEntryId"`
	TokensBefore     int    `json:"tokensBefore"`
	EntryID          string `json:"entryId,omitempty"`
}

type eventHeader struct {
	Type string    `json:"type"`
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
}

// MarshalJSON writes only the fields that belong to e.Type.
func (e Event) MarshalJSON() ([]byte, error) {
	h := eventHeader{e.Type, e.Seq, e.Time}
	switch e.Type {
	case EventAutoRetryStart:
		return json.Marshal(struct {
			eventHeader
			Attempt      int    `json:"attempt"`
			MaxAttempts  int    `json:"maxAttempts"`
			DelayMs      int64  `json:"delayMs"`
			ErrorMessage string `json:"errorMessage"`
		}{h, e.Attempt, e.MaxAttempts, e.DelayMs, e.ErrorMessage})
	case EventAutoRetryEnd:
		return json.Marshal(struct {
			eventHeader
			Success    bool   `json:"success"`
			Attempt    int    `json:"attempt"`
			FinalError string `json:"finalError,omitempty"`
		}{h, e.Success, e.Attempt, e.FinalError})
	case EventAgentStart:
		return json.Marshal(h)
	case EventAgentEnd:
		return json.Marshal(struct {
			eventHeader
			WillRetry    bool       `json:"willRetry"`
			StopReason   StopReason `json:"stopReason,omitempty"`
			ErrorMessage string     `json:"errorMessage,omitempty"`
		}{h, e.WillRetry, e.StopReason, e.ErrorMessage})
	case EventMessageEnd:
		return json.Marshal(struct {
			eventHeader
			EntryID string   `json:"entryId,omitempty"`
			Message *Message `json:"message,omitempty"`
		}{h, e.EntryID, e.Message})
	case EventAutoCompactionStart:
		return json.Marshal(struct {
			eventHeader
			Reason string `json:"reason"`
		}{h, e.Reason})
	case EventAutoCompactionEnd:
		return json.Marshal(struct {
			eventHeader
			Result       *CompactionResult `json:"result,omitempty"`
			Aborted      bool              `json:"aborted"`
			WillRetry    bool              `json:"willRetry"`
			ErrorMessage string            `json:"errorMessage,omitempty"`
		}{h, e.Result, e.Aborted, e.WillRetry, e.ErrorMessage})
	case EventPromptEnd:
		return json.Marshal(struct {
			eventHeader
			Status       string `json:"status"`
			ErrorMessage string `json:"errorMessage,omitempty"`
		}{h, e.Status, e.ErrorMessage})
	}
	return nil, fmt.Errorf("marshal event: unknown type %q", e.Type)
}

// UnmarshalJSON reads any event shape written by MarshalJSON.
func (e *Event) UnmarshalJSON(b []byte) error {
	type plain Event // no methods: avoids recursion
	var p plain
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*e = Event(p)
	return nil
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
		return fmt.Sprintf("Retry failed after %d attempts: %s", e.Attempt, e.FinalError)
	case EventAgentEnd:
		if e.ErrorMessage != "" {
			return fmt.Sprintf("agent_end (%s, willRetry=%t): %s", e.StopReason, e.WillRetry, e.ErrorMessage)
		}
		return fmt.Sprintf("agent_end (%s, willRetry=%t)", e.StopReason, e.WillRetry)
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
		return "Auto-compaction ended"
	case EventMessageEnd:
		if e.Message != nil {
			return fmt.Sprintf("message_end %s (%s)", e.Message.Role, e.EntryID)
		}
	case EventPromptEnd:
		if e.ErrorMessage != "" {
			return fmt.Sprintf("prompt %s: %s", e.Status, e.ErrorMessage)
		}
		return "prompt " + e.Status
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
