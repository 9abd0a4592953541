package control

import (
	"encoding/json"
	"sort"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
)

// IsLive reports whether e is a live event (message_update,
// tool_execution_update): made by Follow from a running activity's
// heartbeat details, not workflow state. A live event carries the seq of
// the last workflow event delivered before it, so a consumer that drops
// events with a seq it has already seen must let live events through.
func IsLive(e agent.Event) bool {
	return e.Type == agent.EventMessageUpdate || e.Type == agent.EventToolExecutionUpdate
}

// liveStream turns the successive snapshots of running activities
// (activities.StreamSnapshot) into live events, given the workflow events
// delivered so far. It is pure: no clock, no I/O.
//
// Rules:
//   - per entry and content index it remembers how many bytes of the
//     block's text the client has; a snapshot yields the bytes past that
//     (a client that attaches late gets the text so far as one delta);
//   - when a snapshot's tail starts past what the client has (the stream
//     was coalesced beyond the bounded tail) it yields the tail: what is
//     known, never text twice;
//   - a model snapshot with a higher Attempt in the same turn supersedes
//     the earlier attempts (its deltas start from its own beginning; a
//     lower one is stale and ignored);
//   - once the message_end (tool_execution_end) of an entry (tool call)
//     was delivered, its snapshots yield nothing: the workflow event is
//     authoritative.
type liveStream struct {
	entries map[string]*liveEntry
	// ended holds the entry ids and "tool:"+call ids whose end event was
	// delivered.
	ended map[string]bool
	// turnAttempt is the highest model Attempt seen in the current turn.
	turnAttempt int
	// args are the arguments of the running tool calls (from
	// tool_execution_start), repeated on their updates.
	args map[string]json.RawMessage
}

type liveEntry struct {
	attempt int
	// have is, per content index, how many bytes of the block's text the
	// client has.
	have map[int]int
	// output is the tool output last sent.
	output string
}

func newLiveStream() *liveStream {
	return &liveStream{entries: map[string]*liveEntry{}, ended: map[string]bool{}, args: map[string]json.RawMessage{}}
}

func toolKey(callID string) string { return "tool:" + callID }

// observe updates the stream with a workflow event delivered to the
// client.
func (s *liveStream) observe(e agent.Event) {
	switch e.Type {
	case agent.EventTurnStart:
		s.turnAttempt = 0
	case agent.EventMessageEnd:
		if e.EntryID != "" {
			s.ended[e.EntryID] = true
			delete(s.entries, e.EntryID)
		}
		// An answer that is not an error ends the turn's model calls: the
		// next call starts counting again (also without turn_start).
		if m := e.Message; m != nil && m.Role == agent.RoleAssistant && m.StopReason != agent.StopReasonError {
			s.turnAttempt = 0
		}
	case agent.EventToolExecutionStart:
		if e.ToolCallID != "" && len(e.Args) > 0 {
			s.args[e.ToolCallID] = e.Args
		}
	case agent.EventToolExecutionEnd:
		if e.ToolCallID != "" {
			s.ended[toolKey(e.ToolCallID)] = true
			delete(s.entries, toolKey(e.ToolCallID))
			delete(s.args, e.ToolCallID)
		}
		if e.EntryID != "" {
			s.ended[e.EntryID] = true
			delete(s.entries, e.EntryID)
		}
	}
}

// diff returns the live events that bring the client from what it has to
// snap, and records that it has them. The events have no Seq or Time.
func (s *liveStream) diff(snap activities.StreamSnapshot) []agent.Event {
	switch snap.Kind {
	case activities.SnapshotModel:
		return s.diffModel(snap)
	case activities.SnapshotTool:
		return s.diffTool(snap)
	}
	return nil
}

func (s *liveStream) diffModel(snap activities.StreamSnapshot) []agent.Event {
	if snap.EntryID == "" || s.ended[snap.EntryID] || snap.Attempt < s.turnAttempt {
		return nil
	}
	if snap.Attempt > s.turnAttempt {
		s.turnAttempt = snap.Attempt
		for id, e := range s.entries {
			if e.have != nil && e.attempt < snap.Attempt {
				delete(s.entries, id) // superseded: its activity is over
			}
		}
	}
	e := s.entries[snap.EntryID]
	if e == nil || e.attempt < snap.Attempt {
		e = &liveEntry{attempt: snap.Attempt, have: map[int]int{}}
		s.entries[snap.EntryID] = e
	}
	blocks := append([]activities.SnapshotBlock(nil), snap.Blocks...)
	sort.SliceStable(blocks, func(i, j int) bool { return blocks[i].Index < blocks[j].Index })
	var out []agent.Event
	for _, b := range blocks {
		typ := activities.DeltaType(b.Type)
		if typ == "" || b.Offset < 0 {
			continue
		}
		have := e.have[b.Index]
		end := b.End()
		if end <= have {
			continue
		}
		// Bytes [have, Offset) were coalesced away: what is known is the
		// tail.
		start := max(have-b.Offset, 0)
		e.have[b.Index] = end
		out = append(out, agent.Event{
			Type:    agent.EventMessageUpdate,
			EntryID: snap.EntryID,
			AssistantMessageEvent: &agent.AssistantMessageEvent{
				Type: typ, ContentIndex: b.Index, Delta: b.Tail[start:], Attempt: snap.Attempt,
				ToolCallID: b.ToolCallID, ToolName: b.ToolName,
			},
		})
	}
	return out
}

func (s *liveStream) diffTool(snap activities.StreamSnapshot) []agent.Event {
	key := snap.EntryID
	if key == "" {
		key = toolKey(snap.ToolCallID)
	}
	if key == toolKey("") || s.ended[key] || (snap.ToolCallID != "" && s.ended[toolKey(snap.ToolCallID)]) {
		return nil
	}
	e := s.entries[key]
	if e == nil {
		e = &liveEntry{}
		s.entries[key] = e
	}
	if snap.Output == e.output {
		return nil
	}
	e.output = snap.Output
	return []agent.Event{{
		Type:       agent.EventToolExecutionUpdate,
		EntryID:    snap.EntryID,
		ToolCallID: snap.ToolCallID,
		ToolName:   snap.ToolName,
		Args:       s.args[snap.ToolCallID],
		PartialResult: &agent.ToolResult{
			Content: []agent.ContentBlock{{Type: "text", Text: snap.Output}},
		},
	}}
}
