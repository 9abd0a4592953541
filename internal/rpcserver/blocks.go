package rpcserver

import (
	"cmp"
	"fmt"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
)

// Protocol is the generation of the terminal agent's RPC protocol a
// connection speaks. They differ in message_update only (docs/rpc.md):
// pi 1.6 sends deltas and block frames with a top-level usage, pi 0.73
// also sends the answer so far (message) on every update.
type Protocol string

// Protocols starter rpc speaks (starter rpc --protocol).
const (
	// ProtocolPi16 is the default: message_update carries deltas only.
	ProtocolPi16 Protocol = "1.6"
	// ProtocolPi073 adds the answer so far (message) to every
	// message_update, as pi 0.73's RPC mode wrote it.
	ProtocolPi073 Protocol = "0.73"
)

// ParseProtocol checks a --protocol value ("" is ProtocolPi16).
func ParseProtocol(s string) (Protocol, error) {
	if p := cmp.Or(Protocol(s), ProtocolPi16); p == ProtocolPi16 || p == ProtocolPi073 {
		return p, nil
	}
	return "", fmt.Errorf("invalid protocol %q (want %s or %s)", s, ProtocolPi16, ProtocolPi073)
}

// Message frame types of message_update (pi 1.6's AssistantMessageEvent
// start, done and error): start before the answer's first block, then
// done (the call ended: stop, length or toolUse) or error (it failed or
// was aborted) with the final message, right before its message_end.
// Sent with ProtocolPi16 only: pi 0.73's RPC mode sent none of them.
const (
	frameStart = "start"
	frameDone  = "done"
	frameError = "error"
)

// updateLine is a message_update as RPC mode writes it: the event header,
// the answer's usage so far at the top level, one block event, and (pi
// 0.73 only) the answer so far.
type updateLine struct {
	Type                  string         `json:"type"`
	Seq                   int64          `json:"seq"`
	Time                  time.Time      `json:"time"`
	EntryID               string         `json:"entryId,omitempty"`
	Message               *agent.Message `json:"message,omitempty"`
	Usage                 agent.Usage    `json:"usage"`
	AssistantMessageEvent any            `json:"assistantMessageEvent"` // a blockEvent or a messageEvent
}

// messageEvent is an assistantMessageEvent about the whole answer: start
// (no fields), done (Reason and Message) or error (Reason and Error), as
// pi 1.6 names them; Attempt is the product's, the call's last attempt.
type messageEvent struct {
	Type    string           `json:"type"`
	Reason  agent.StopReason `json:"reason,omitempty"`
	Message *agent.Message   `json:"message,omitempty"`
	Error   *agent.Message   `json:"error,omitempty"`
	Attempt int              `json:"attempt"`
}

// blockEvent is an assistantMessageEvent: a frame (*_start, *_end) or a
// delta of the block at ContentIndex.
type blockEvent struct {
	Type         string `json:"type"`
	ContentIndex int    `json:"contentIndex"`
	// Delta is set on deltas (also when empty); Content on text_end and
	// thinking_end (the block's whole text); ToolCall on toolcall_end.
	Delta    *string             `json:"delta,omitempty"`
	Content  *string             `json:"content,omitempty"`
	ToolCall *agent.ContentBlock `json:"toolCall,omitempty"`
	// ID and ToolName name the call a toolcall_start opens (pi 1.6).
	ID string `json:"id,omitempty"`
	// ToolCallID and ToolName name the call of a toolcall_delta (the
	// product's own, kept for its clients).
	ToolCallID string `json:"toolCallId,omitempty"`
	ToolName   string `json:"toolName,omitempty"`
	// Attempt and OutputTokens are the product's (agent.AssistantMessageEvent).
	Attempt      int `json:"attempt"`
	OutputTokens int `json:"outputTokens,omitempty"`
}

// framer turns the product's live deltas (message_update with a delta of
// one block) into pi 1.6's framed stream: a *_start before a block's
// first delta, a *_end with the block's whole content when the next block
// starts, a later attempt starts over, or the message ends (before its
// message_end); every update carries the usage so far. The blocks of a
// message are streamed one after another, as providers send them.
type framer struct {
	protocol Protocol
	// open is the streamed message of each entry being answered; starts
	// the message_start view of each (provider and model, pi 0.73).
	open   map[string]*framedMessage
	starts map[string]agent.Message
	// last and lastAt are the header of the latest workflow (not live)
	// event framed: the done or error written before a message_end
	// carries them, as a live event carries the seq of the event before it.
	last   int64
	lastAt time.Time
}

type framedMessage struct {
	partial *live.Partial
	// block is the content index of the open block, -1 when none is;
	// delta is its delta type.
	block int
	delta string
	// usage is the answer's usage so far.
	usage agent.Usage
	// seq and at are the header of its last update: a live event
	// carries the seq of the workflow event before it, so the block end
	// written before message_end does too.
	seq int64
	at  time.Time
}

func newFramer(p Protocol) *framer {
	return &framer{protocol: p, open: map[string]*framedMessage{}, starts: map[string]agent.Message{}}
}

// frame returns the lines RPC mode writes for e, in order: for a
// message_update its frames and its delta; for a message_end the end of
// its open block and then e itself; any other event as it is.
func (f *framer) frame(e agent.Event) []any {
	prev, prevAt := f.last, f.lastAt
	if !live.IsLive(e) {
		f.last, f.lastAt = e.Seq, e.Time
	}
	switch e.Type {
	case agent.EventMessageStart:
		if e.Message == nil || e.Message.Role != agent.RoleAssistant {
			break
		}
		f.starts[e.EntryID] = *e.Message
		if f.protocol == ProtocolPi16 {
			return []any{e, updateLine{Type: agent.EventMessageUpdate, Seq: e.Seq, Time: e.Time, EntryID: e.EntryID,
				AssistantMessageEvent: messageEvent{Type: frameStart}}}
		}
	case agent.EventMessageUpdate:
		if e.AssistantMessageEvent == nil {
			return []any{e}
		}
		return f.update(e)
	case agent.EventMessageEnd:
		m := f.open[e.EntryID]
		_, started := f.starts[e.EntryID]
		delete(f.open, e.EntryID)
		delete(f.starts, e.EntryID)
		var out []any
		if m != nil && m.block >= 0 {
			last := e
			last.Seq, last.Time = m.seq, m.at
			out = append(out, f.end(last, m))
		}
		if started && f.protocol == ProtocolPi16 && e.Message != nil && e.Message.Role == agent.RoleAssistant {
			out = append(out, f.outcome(e, m, prev, prevAt))
		}
		return append(out, e)
	}
	return []any{e}
}

// outcome is the done or error of the answer e ends, with the header of
// the workflow event before e.
func (f *framer) outcome(e agent.Event, m *framedMessage, seq int64, at time.Time) updateLine {
	msg := *e.Message
	ev := messageEvent{Type: frameDone, Reason: msg.StopReason, Message: &msg}
	if m != nil {
		ev.Attempt = m.partial.Attempt
	}
	switch msg.StopReason {
	case agent.StopReasonError, agent.StopReasonAborted:
		ev.Type, ev.Message, ev.Error = frameError, nil, &msg
	case "":
		ev.Reason = agent.StopReasonStop
	}
	l := updateLine{Type: agent.EventMessageUpdate, Seq: seq, Time: at, EntryID: e.EntryID, AssistantMessageEvent: ev}
	if msg.Usage != nil {
		l.Usage = *msg.Usage
	}
	return l
}

func (f *framer) update(e agent.Event) []any {
	d := *e.AssistantMessageEvent
	m := f.open[e.EntryID]
	var out []any
	if m != nil && d.Attempt > m.partial.Attempt {
		// A later attempt starts over: the earlier one's open block ends
		// (each start has its end), and its text is dropped.
		if m.block >= 0 {
			out = append(out, f.end(e, m))
		}
		m = nil
	}
	if m == nil {
		m = &framedMessage{partial: live.NewPartial(e.EntryID, d.Attempt), block: -1}
		f.open[e.EntryID] = m
	}
	if d.ContentIndex != m.block {
		if m.block >= 0 {
			out = append(out, f.end(e, m))
		}
		m.block, m.delta = d.ContentIndex, d.Type
		start := blockEvent{Type: blockName(d.Type) + "_start", ContentIndex: d.ContentIndex, Attempt: d.Attempt}
		if d.Type == agent.DeltaToolCall {
			start.ID, start.ToolName = d.ToolCallID, d.ToolName
		}
		out = append(out, f.line(e, m, start))
	}
	m.partial.Add(d)
	m.seq, m.at = e.Seq, e.Time
	output := max(m.usage.Output, d.OutputTokens)
	if d.Usage != nil {
		// The provider's report so far (input, cache, output) and its
		// cost, as far as the stream gave them.
		m.usage, output = *d.Usage, max(output, d.Usage.Output)
	}
	m.usage.Output = output
	m.usage.TotalTokens = m.usage.Input + m.usage.Output + m.usage.CacheRead + m.usage.CacheWrite
	delta := d.Delta
	out = append(out, f.line(e, m, blockEvent{Type: d.Type, ContentIndex: d.ContentIndex, Delta: &delta,
		ToolCallID: d.ToolCallID, ToolName: d.ToolName, Attempt: d.Attempt, OutputTokens: d.OutputTokens}))
	return out
}

// end closes the open block of m with its whole content (as
// live.Partial's message has it).
func (f *framer) end(e agent.Event, m *framedMessage) updateLine {
	c := m.partial.Message().Content[m.block]
	ev := blockEvent{Type: blockName(m.delta) + "_end", ContentIndex: m.block, Attempt: m.partial.Attempt}
	if c.ToolCall != nil {
		ev.ToolCall = &c
	} else {
		ev.Content = &c.Text
	}
	m.block = -1
	return f.line(e, m, ev)
}

// line is one message_update of the answer e belongs to.
func (f *framer) line(e agent.Event, m *framedMessage, ev blockEvent) updateLine {
	l := updateLine{Type: agent.EventMessageUpdate, Seq: e.Seq, Time: e.Time, EntryID: e.EntryID,
		Usage: m.usage, AssistantMessageEvent: ev}
	if f.protocol == ProtocolPi073 {
		msg := m.partial.Message()
		if v, ok := f.starts[e.EntryID]; ok {
			msg.Provider, msg.Model, msg.API = v.Provider, v.Model, v.API
		}
		u := m.usage
		msg.Usage = &u
		l.Message = piMessage(&msg)
	}
	return l
}

// blockName is how pi 1.6's block frames (text_start, thinking_end,
// toolcall_start, ...) name a block of a delta type: any delta but
// thinking and a tool call's is a text block's.
func blockName(delta string) string {
	if delta == agent.DeltaThinking || delta == agent.DeltaToolCall {
		return strings.TrimSuffix(delta, "_delta")
	}
	return "text"
}
