package rpcserver

import (
	"cmp"
	"context"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// completer gives a prompt's events the terminal agent's content: the
// workflow's events carry short views of messages (history carries ids,
// bodies live in the session), and RPC mode replaces each view with the
// whole message from the session entry it names (message_start of user
// and tool results, message_end, turn_end, tool_execution_end), fills
// agent_end's messages with the run's (framer shapes message_update).
// Without a session to read (none yet, or an entry not found) the views
// stay.
type completer struct {
	ctx  context.Context
	load func(ctx context.Context) (*session.Session, error)
	sess *session.Session
	// run holds the messages since the last agent_start.
	run []agent.Message
	// results maps a tool call id to its result entry (tool_execution_end).
	results map[string]string
}

func newCompleter(ctx context.Context, load func(ctx context.Context) (*session.Session, error)) *completer {
	return &completer{ctx: ctx, load: load, results: map[string]string{}}
}

// entry returns the whole message of a session entry (nil when it cannot
// be read), reading the session again when the entry is newer than the
// copy in hand.
func (c *completer) entry(id string) *agent.Message {
	if id == "" {
		return nil
	}
	find := func() *agent.Message {
		if c.sess == nil {
			return nil
		}
		e, ok := c.sess.Get(id)
		if !ok || e.Message == nil {
			return nil
		}
		m := *e.Message
		if m.Timestamp == 0 && !e.Timestamp.IsZero() {
			m.Timestamp = e.Timestamp.UnixMilli()
		}
		return &m
	}
	if m := find(); m != nil {
		return m
	}
	if s, err := c.load(c.ctx); err == nil && s != nil {
		c.sess = s
	}
	return find()
}

// whole returns the message of entry id, or the view normalised.
func (c *completer) whole(id string, view *agent.Message) *agent.Message {
	if m := c.entry(id); m != nil {
		return piMessage(m)
	}
	if view == nil {
		return nil
	}
	v := *view
	return piMessage(&v)
}

// complete returns e as RPC mode writes it.
func (c *completer) complete(e agent.Event) agent.Event {
	switch e.Type {
	case agent.EventAgentStart:
		c.run = []agent.Message{}
	case agent.EventAgentEnd:
		e.Messages = c.run
		if e.Messages == nil {
			e.Messages = []agent.Message{}
		}
		c.run = nil
	case agent.EventMessageStart:
		if e.Message == nil {
			break
		}
		if e.Message.Role == agent.RoleAssistant {
			v := *e.Message
			e.Message = piMessage(&v)
			break
		}
		e.Message = c.whole(e.EntryID, e.Message)
	case agent.EventMessageEnd:
		e.Message = c.whole(e.EntryID, e.Message)
		if e.Message != nil && c.run != nil {
			c.run = append(c.run, *e.Message)
		}
	case agent.EventToolExecutionEnd:
		if e.ToolCallID != "" && e.EntryID != "" {
			c.results[e.ToolCallID] = e.EntryID
		}
		if m := c.entry(e.EntryID); m != nil && e.ToolResult != nil {
			r := *e.ToolResult
			r.Content = m.Content
			e.ToolResult = &r
		}
	case agent.EventTurnEnd:
		e.Message = c.whole(e.EntryID, e.Message)
		results := make([]agent.Message, len(e.ToolResults))
		for i, v := range e.ToolResults {
			results[i] = *c.whole(c.results[v.ToolCallID], &v)
		}
		e.ToolResults = results
	}
	return e
}

// piMessage fills in what the terminal agent's messages always have: an
// answer's api and usage (zero when the provider reported none).
func piMessage(m *agent.Message) *agent.Message {
	if m.Role == agent.RoleAssistant {
		m.API = cmp.Or(m.API, agent.APIOf(m.Provider))
		if m.Usage == nil {
			m.Usage = &agent.Usage{}
		}
	}
	return m
}

// piMessages applies piMessage to a list (get_messages).
func piMessages(msgs []agent.Message) []agent.Message {
	out := make([]agent.Message, len(msgs))
	for i, m := range msgs {
		out[i] = *piMessage(&m)
	}
	return out
}
