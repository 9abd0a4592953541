package live

import (
	"cmp"
	"encoding/json"
	"slices"
	"strings"

	"github.com/durableagent/durableagent/agent"
)

// IsLive reports whether e is a live event (message_update,
// tool_execution_update): made by a follower from running calls'
// snapshots, not workflow state. A live event carries the seq of
// the last workflow event delivered before it, so a consumer that drops
// events with a seq it has already seen must let live events through.
func IsLive(e agent.Event) bool {
	return e.Type == agent.EventMessageUpdate || e.Type == agent.EventToolExecutionUpdate
}

// Cursor turns the successive snapshots of running activities
// (Snapshot) into live events, given the workflow events
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
//     authoritative;
//   - before an assistant message_end of an entry the client got deltas
//     of, finish yields the rest of its text and tool-call arguments (the
//     words after the last snapshot), so the deltas of a message
//     concatenate to message_end's text exactly. It cannot when the
//     client missed bytes (a late attach, or more than the snapshot's tail
//     streamed between two reads): message_end is then the only whole
//     text.
type Cursor struct {
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
	// got is what the client got of the message (for finish: its text
	// and arguments, up to maxKeptBytes in all).
	got  *Partial
	kept int
	// gapped: the client missed bytes of a block (finish cannot complete
	// the text), or the kept text outgrew maxKeptBytes.
	gapped bool
	// output is the tool output last sent.
	output string
}

// maxKeptBytes bounds the text a follower keeps per streaming message to
// complete it at message_end.
const maxKeptBytes = 4 << 20

// NewCursor is the cursor of a client that has no live output yet.
func NewCursor() *Cursor {
	return &Cursor{entries: map[string]*liveEntry{}, ended: map[string]bool{}, args: map[string]json.RawMessage{}}
}

func toolKey(callID string) string { return "tool:" + callID }

// Observe updates the cursor with a workflow event delivered to the
// client.
func (s *Cursor) Observe(e agent.Event) {
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

// Known reports whether the client got live events of snap's entry (or
// its end event): its next live events may go out without a fresh events
// query.
func (s *Cursor) Known(snap Snapshot) bool {
	key := snap.key()
	return s.ended[key] || s.entries[key] != nil
}

// key is the cursor's key of snap's entry: its entry id, or for a tool
// call without one, toolKey of its call id.
func (snap Snapshot) key() string {
	if snap.Kind == KindTool && snap.EntryID == "" {
		return toolKey(snap.ToolCallID)
	}
	return snap.EntryID
}

// Diff returns the live events that bring the client from what it has to
// snap, and records that it has them. The events have no Seq or Time.
func (s *Cursor) Diff(snap Snapshot) []agent.Event {
	switch snap.Kind {
	case KindModel:
		return s.diffModel(snap)
	case KindTool:
		return s.diffTool(snap)
	}
	return nil
}

func (s *Cursor) diffModel(snap Snapshot) []agent.Event {
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
		e = &liveEntry{attempt: snap.Attempt, have: map[int]int{}, got: NewPartial(snap.EntryID, snap.Attempt)}
		s.entries[snap.EntryID] = e
	}
	var out []agent.Event
	for _, b := range slices.SortedStableFunc(slices.Values(snap.Blocks), func(a, b Block) int { return cmp.Compare(a.Index, b.Index) }) {
		typ := deltaType(b.Type)
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
		if have < b.Offset {
			e.gapped = true
		}
		e.have[b.Index] = end
		ev := agent.AssistantMessageEvent{
			Type: typ, ContentIndex: b.Index, Delta: b.Tail[start:], Attempt: snap.Attempt,
			ToolCallID: b.ToolCallID, ToolName: b.ToolName, OutputTokens: snap.OutputTokens, Usage: snap.Usage,
		}
		e.keep(ev)
		out = append(out, agent.Event{Type: agent.EventMessageUpdate, EntryID: snap.EntryID, AssistantMessageEvent: &ev})
	}
	return out
}

// keep records a delta the client gets, while what it got is whole and
// within maxKeptBytes.
func (e *liveEntry) keep(d agent.AssistantMessageEvent) {
	if e.kept += len(d.Delta); e.kept > maxKeptBytes {
		e.gapped = true
	}
	if !e.gapped {
		e.got.Add(d)
	}
}

// Finish returns the live events that complete what the client got of
// the streamed message end (an assistant message_end about to be
// delivered) to end's text and tool-call arguments, one per block that
// lacks bytes: text deltas concatenate to Message.Text(), the deltas of a
// tool call to its arguments in end. Nothing when the client got no delta
// of the message, missed some of its bytes, or got text end does not
// start with (a superseded attempt). Thinking is not in message_end, so
// it is not completed.
func (s *Cursor) Finish(end agent.Event) []agent.Event {
	m := end.Message
	e := s.entries[end.EntryID]
	if end.Type != agent.EventMessageEnd || m == nil || m.Role != agent.RoleAssistant || e == nil || e.gapped {
		return nil
	}
	blocks := e.got.Blocks()
	if len(blocks) == 0 {
		return nil
	}
	next := blocks[len(blocks)-1].Index + 1 // for a block the client has not seen
	var got strings.Builder
	textIndex := -1
	calls := map[string]*PartialBlock{}
	for _, b := range blocks {
		switch b.Type {
		case agent.DeltaText:
			got.WriteString(b.Text())
			textIndex = b.Index
		case agent.DeltaToolCall:
			calls[b.ToolCallID] = b
		}
	}
	tokens := 0
	if m.Usage != nil {
		tokens = m.Usage.Output
	}
	var out []agent.Event
	add := func(typ string, index int, delta, callID, callName string) {
		out = append(out, agent.Event{
			Type: agent.EventMessageUpdate, EntryID: end.EntryID,
			AssistantMessageEvent: &agent.AssistantMessageEvent{Type: typ, ContentIndex: index, Delta: delta,
				Attempt: e.attempt, ToolCallID: callID, ToolName: callName, OutputTokens: tokens, Usage: m.Usage},
		})
	}
	if rest, ok := strings.CutPrefix(m.Text(), got.String()); ok && rest != "" {
		if textIndex < 0 {
			textIndex = next
			next++
		}
		add(agent.DeltaText, textIndex, rest, "", "")
	}
	for _, c := range m.Content {
		tc := c.ToolCall
		if c.Type != agent.BlockToolCall || tc == nil {
			continue
		}
		i, had := next, ""
		if b := calls[tc.ID]; b != nil {
			i, had = b.Index, b.Text()
		} else {
			next++
		}
		if rest, ok := strings.CutPrefix(string(tc.Arguments), had); ok && rest != "" {
			add(agent.DeltaToolCall, i, rest, tc.ID, tc.Name)
		}
	}
	return out
}

func (s *Cursor) diffTool(snap Snapshot) []agent.Event {
	key := snap.key()
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
