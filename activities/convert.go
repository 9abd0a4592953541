package activities

import (
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/compaction"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
)

// CompactionItem converts a session message to the compaction planner's
// view of it; id is its session entry id.
// A bash execution the user ran is the user message a model sees; one
// kept from the context (ExcludeFromContext) is a user message without
// text, which counts no tokens and leaves the summary, and still marks
// where the user spoke.
func CompactionItem(id string, m agent.Message) compaction.Item {
	if m.Role == agent.RoleBashExecution && m.ExcludeFromContext {
		return compaction.Item{ID: id, Role: string(agent.RoleUser)}
	}
	if m.Role == agent.RoleBashExecution {
		return compaction.Item{ID: id, Role: string(agent.RoleUser), Text: llm.BashExecutionText(m)}
	}
	it := compaction.Item{ID: id, Role: string(m.Role), ToolCallID: m.ToolCallID, ToolName: m.ToolName, IsError: m.IsError}
	for _, b := range m.Content {
		switch b.Type {
		case "text":
			it.Text += b.Text
		case "thinking":
			it.Thinking += b.Text
		case "toolCall":
			if b.ToolCall != nil {
				it.ToolCalls = append(it.ToolCalls, compaction.ToolCallRef{
					ID: b.ToolCall.ID, Name: b.ToolCall.Name, Arguments: b.ToolCall.Arguments,
				})
			}
		}
	}
	return it
}

// contextItems is session.Session.Context with entry ids: the run context
// ending at leafID (session.Session.RunContext) as compaction items,
// oldest first. With a compaction on the branch, the last one's summary
// comes first (as a RoleSummary item with the compaction entry's id), then
// the messages from its FirstKeptEntryID on.
//
// anchor is the provider-reported usage of the newest successful assistant
// message after the last compaction (nil if there is none): it is the real
// size of the context up to that message. Usage reported before the last
// compaction measured a context that no longer exists, so it is not used.
func contextItems(sess *session.Session, leafID string) (items []compaction.Item, anchor *compaction.UsageAnchor) {
	rc := sess.RunContext(leafID)
	if c := rc.Compaction; c != nil {
		items = append(items, compaction.Item{ID: c.ID, Role: compaction.RoleSummary, Text: c.Summary})
	}
	for _, e := range rc.Kept {
		items = append(items, CompactionItem(e.ID, *e.Message))
	}
	for _, e := range rc.After {
		m := e.Message
		items = append(items, CompactionItem(e.ID, *m))
		if m.Role == agent.RoleAssistant && m.Usage != nil &&
			m.StopReason != agent.StopReasonError && m.StopReason != agent.StopReasonAborted {
			u := m.Usage
			anchor = &compaction.UsageAnchor{Index: len(items) - 1, Input: u.Input, Output: u.Output,
				CacheRead: u.CacheRead, CacheWrite: u.CacheWrite}
		}
	}
	return items, anchor
}
