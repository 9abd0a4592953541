package rpcserver

import (
	"time"

	"github.com/durableagent/durableagent/agent"
)

// toolTimer adds pi 1.6's durationMs to tool_execution_end: the time
// from the call's tool_execution_start (event times are workflow time).
type toolTimer map[string]time.Time

// line is what to write for e: e itself, or a tool_execution_end with
// durationMs when its start was seen.
func (tt toolTimer) line(e agent.Event) any {
	switch e.Type {
	case agent.EventToolExecutionStart:
		tt[e.ToolCallID] = e.Time
	case agent.EventToolExecutionEnd:
		began, ok := tt[e.ToolCallID]
		if !ok || e.Time.IsZero() || began.IsZero() {
			return e
		}
		delete(tt, e.ToolCallID)
		return renamed{e, e.Type, map[string]any{"durationMs": max(e.Time.Sub(began).Milliseconds(), 0)}}
	}
	return e
}
