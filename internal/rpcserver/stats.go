package rpcserver

import (
	"context"
	"math"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/rpc"
)

// sessionStats is get_session_stats: message counts and usage of the run
// context (as the terminal agent counts its agent's messages), and the
// context window's use.
func sessionStats(ctx context.Context, sb *client.Session) (rpc.SessionStats, error) {
	info, err := sb.Info(ctx)
	if err != nil {
		return rpc.SessionStats{}, err
	}
	sess, err := sb.LoadSession(ctx, info.SessionID)
	if err != nil {
		return rpc.SessionStats{}, err
	}
	st := rpc.SessionStats{SessionFile: info.File, SessionID: info.SessionID}
	var msgs []agent.Message
	if sess != nil {
		msgs = sess.Context(sess.LeafID())
		st.Usage, _ = session.Spent(sess)
	}
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
			if u := m.Usage; u != nil {
				st.Tokens.Input += u.Input
				st.Tokens.Output += u.Output
				st.Tokens.CacheRead += u.CacheRead
				st.Tokens.CacheWrite += u.CacheWrite
				st.Cost += u.Cost.Total
			}
		}
	}
	st.Tokens.Total = st.Tokens.Input + st.Tokens.Output + st.Tokens.CacheRead + st.Tokens.CacheWrite
	st.Cost = math.Round(st.Cost*1e8) / 1e8
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
	var branch []session.Entry
	if sess != nil {
		branch = sess.Branch(sess.LeafID())
	}
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
