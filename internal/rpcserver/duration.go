package rpcserver

import (
	"encoding/json"
	"strconv"
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
		ms := max(e.Time.Sub(began).Milliseconds(), 0)
		return timedEnd{e, ms}
	}
	return e
}

// timedEnd is a tool_execution_end with durationMs.
type timedEnd struct {
	e  agent.Event
	ms int64
}

func (t timedEnd) MarshalJSON() ([]byte, error) {
	b, err := json.Marshal(t.e)
	if err != nil || len(b) < 2 {
		return b, err
	}
	out := append([]byte{}, b[:len(b)-1]...)
	out = append(out, `,"durationMs":`...)
	out = strconv.AppendInt(out, t.ms, 10)
	return append(out, '}'), nil
}
