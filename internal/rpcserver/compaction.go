package rpcserver

import (
	"encoding/json"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
	"github.com/durableagent/durableagent/rpc"
)

// reasonManual is the reason of a manual compact's compaction_start and
// compaction_end.
const reasonManual = "manual"

// piLines writes a followed prompt's events in pi 1.6's words: its
// auto_compaction_start/_end are compaction_start/_end, the end with the
// reason of its start, and tool_execution_end has durationMs, the time
// from the call's tool_execution_start (event times are workflow time).
type piLines struct {
	reason  string
	started map[string]time.Time // by tool call id
}

func (n *piLines) line(e agent.Event) any {
	switch e.Type {
	case agent.EventAutoCompactionStart:
		n.reason = e.Reason
		return renamed{e, rpc.EventCompactionStart, nil}
	case agent.EventAutoCompactionEnd:
		return renamed{e, rpc.EventCompactionEnd, map[string]any{"reason": n.reason}}
	case agent.EventToolExecutionStart:
		n.started[e.ToolCallID] = e.Time
	case agent.EventToolExecutionEnd:
		if began, ok := n.started[e.ToolCallID]; ok && !e.Time.IsZero() && !began.IsZero() {
			delete(n.started, e.ToolCallID)
			return renamed{e, e.Type, map[string]any{"durationMs": max(e.Time.Sub(began).Milliseconds(), 0)}}
		}
	}
	return e
}

// summaryRetryLine is a manual compaction's summary retry event in pi
// 1.6's words: auto_retry_start is summarization_retry_scheduled (same
// fields), auto_retry_end summarization_retry_finished (its success,
// attempt and finalError kept).
func summaryRetryLine(e agent.Event) any {
	switch e.Type {
	case agent.EventAutoRetryStart:
		return renamed{e, rpc.EventSummarizationRetryScheduled, nil}
	case agent.EventAutoRetryEnd:
		return renamed{e, rpc.EventSummarizationRetryFinished, nil}
	}
	return e
}

// renamed is an event written under another type (or its own), with
// extra fields.
type renamed struct {
	e     agent.Event
	typ   string
	extra map[string]any
}

func (r renamed) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(r.e)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["type"] = r.typ
	for k, v := range r.extra {
		m[k] = v
	}
	return json.Marshal(m)
}

// manualCompactionEnd is compaction_end of a manual compact.
type manualCompactionEnd struct {
	Type         string                  `json:"type"`
	Reason       string                  `json:"reason"`
	Result       *agent.CompactionResult `json:"result,omitempty"`
	Aborted      bool                    `json:"aborted"`
	WillRetry    bool                    `json:"willRetry"`
	ErrorMessage string                  `json:"errorMessage,omitempty"`
}

// manualStart is compaction_start of a manual compact.
func manualStart() any {
	return struct {
		Type   string `json:"type"`
		Reason string `json:"reason"`
	}{rpc.EventCompactionStart, reasonManual}
}

func manualEnd(res *agent.CompactionResult, errMsg string) manualCompactionEnd {
	return manualCompactionEnd{Type: rpc.EventCompactionEnd, Reason: reasonManual, Result: res, ErrorMessage: errMsg,
		Aborted: strings.Contains(errMsg, retry.CancelledMessage) || strings.Contains(errMsg, "aborted")}
}
