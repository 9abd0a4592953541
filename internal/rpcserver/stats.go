package rpcserver

import (
	"cmp"
	"context"
	"math"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// sessionStats is get_session_stats: message counts and usage of the run
// context (as the terminal agent counts its agent's messages), and the
// context window's use.
func (c *conn) sessionStats(ctx context.Context, _ rpc.Command) (any, error) {
	info, err := c.b.Info(ctx)
	if err != nil {
		return nil, err
	}
	sess, err := c.b.LoadSession(ctx, info.SessionID)
	if err != nil {
		return nil, err
	}
	sess = cmp.Or(sess, &session.Session{}) // none yet: empty
	st := rpc.SessionStats{SessionFile: info.File, SessionID: info.SessionID}
	msgs := sess.Context(sess.LeafID())
	st.Usage, _ = session.Spent(sess)
	var spent agent.Spend // of the run context's answers
	st.TotalMessages = len(msgs)
	for _, m := range msgs {
		switch m.Role {
		case agent.RoleUser:
			st.UserMessages++
		case agent.RoleToolResult:
			st.ToolResults++
		case agent.RoleAssistant:
			st.AssistantMessages++
			st.ToolCalls += len(m.ToolCalls())
			spent.Add(m.Usage)
		}
	}
	st.Tokens = rpc.TokenStats{Input: spent.Input, Output: spent.Output, CacheRead: spent.CacheRead, CacheWrite: spent.CacheWrite,
		Total: spent.Input + spent.Output + spent.CacheRead + spent.CacheWrite}
	st.Cost = spent.CostUsd
	if info.ContextWindow > 0 {
		st.ContextUsage = contextUsage(sess, info.ContextWindow)
	}
	return st, nil
}

// contextUsage is the context size the last answer after the last
// compaction reported (input, output and cache tokens); nil tokens when
// no answer has reported one since.
func contextUsage(sess *session.Session, window int) *rpc.ContextUsage {
	u := &rpc.ContextUsage{ContextWindow: window}
	branch := sess.Branch(sess.LeafID())
	compacted := false
	for i := len(branch) - 1; i >= 0; i-- {
		e := branch[i]
		if e.Type == session.TypeCompaction {
			compacted = true
			break
		}
		m := e.Message
		if m == nil || m.Role != agent.RoleAssistant || m.Usage == nil ||
			m.StopReason == agent.StopReasonError || m.StopReason == agent.StopReasonAborted {
			continue
		}
		n := m.Usage.Input + m.Usage.Output + m.Usage.CacheRead + m.Usage.CacheWrite
		if n == 0 {
			continue
		}
		pct := math.Round(float64(n)*10000/float64(window)) / 100
		u.Tokens, u.Percent = &n, &pct
		return u
	}
	if !compacted {
		zero, pct := 0, 0.0
		u.Tokens, u.Percent = &zero, &pct
	}
	return u
}
