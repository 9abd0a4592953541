package tui

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
)

// promptStats are what the stats line shows of the followed prompt (issue
// 23): its model, elapsed time, turn, tokens and cost, and its budget
// when it has one.
type promptStats struct {
	started, ended time.Time
	model          string // provider/model of its latest answer
	turn           int
	// spend is the prompt's usage: the latest usage_update's (the
	// workflow's figure, which the budget compares) plus the answers'
	// since (a usage_update comes after each model call of a prompt with
	// a budget, and after usage no answer shows: summary calls,
	// sub-agents).
	spend  agent.Spend
	budget *agent.Budget
	// subAgents are the sessions of the prompt's running sub-agents
	// (subagent_start without its subagent_end yet), oldest first.
	subAgents []string
}

// statsEvent updates the stats for an event of the followed prompt.
func (m *Model) statsEvent(e agent.Event) {
	s := m.stats
	if s == nil {
		return
	}
	if s.started.IsZero() {
		s.started = m.now()
		if !e.Time.IsZero() && !e.Time.After(s.started) && s.started.Sub(e.Time) < 24*time.Hour {
			s.started = e.Time // attached: the prompt started before the chat saw it
		}
	}
	switch e.Type {
	case agent.EventTurnStart:
		if e.Turn > 0 {
			s.turn = e.Turn
		}
	case agent.EventMessageEnd:
		msg := e.Message
		if msg == nil || msg.Role != agent.RoleAssistant {
			return
		}
		if msg.Model != "" {
			s.model = msg.Provider + "/" + msg.Model
		}
		s.spend.Add(msg.Usage)
	case agent.EventUsage:
		if e.Usage != nil {
			s.spend = *e.Usage
		}
		if e.Budget != nil {
			s.budget = e.Budget
		}
	case agent.EventSubAgentStart:
		if !slices.Contains(s.subAgents, e.SessionID) {
			s.subAgents = append(s.subAgents, e.SessionID)
		}
	case agent.EventSubAgentEnd:
		s.subAgents = slices.DeleteFunc(s.subAgents, func(id string) bool { return id == e.SessionID })
	case agent.EventPromptEnd:
		s.ended = m.now()
		s.subAgents = nil
		if e.Usage != nil { // the prompt's figure: summary calls and sub-agents too
			s.spend = *e.Usage
		}
	}
}

// statsLine is the stats line's text ("" before any prompt ran here).
func (m *Model) statsLine() string {
	s := m.stats
	if s == nil || s.started.IsZero() {
		return ""
	}
	var parts []string
	if s.model != "" {
		parts = append(parts, s.model)
	}
	end := s.ended
	if end.IsZero() {
		end = m.now()
	}
	parts = append(parts, max(end.Sub(s.started), 0).Round(time.Second).String())
	if s.turn > 0 {
		parts = append(parts, fmt.Sprintf("turn %d", s.turn))
	}
	var lim agent.BudgetLimits
	if s.budget != nil {
		lim = s.budget.Limits
	}
	tokens := formatTokens(s.spend.Tokens()) + " tokens"
	if lim.MaxTokens > 0 {
		tokens += " of " + formatTokens(lim.MaxTokens)
	}
	parts = append(parts, tokens)
	if sp := s.spend; sp.CacheRead+sp.CacheWrite > 0 {
		parts = append(parts, "cache "+formatTokens(int64(sp.CacheRead))+" read, "+formatTokens(int64(sp.CacheWrite))+" written")
	}
	switch {
	case lim.MaxCostUsd > 0:
		parts = append(parts, "$"+agent.FormatUsd(s.spend.CostUsd)+" of $"+agent.FormatUsd(lim.MaxCostUsd))
	case s.spend.CostUsd > 0:
		parts = append(parts, "$"+agent.FormatUsd(s.spend.CostUsd))
	}
	if s.budget != nil && s.budget.Deadline != nil && s.ended.IsZero() {
		parts = append(parts, "time left "+max(s.budget.Deadline.Sub(m.now()), 0).Round(time.Second).String())
	}
	if m.retry != nil && s.ended.IsZero() {
		// The status line counts the backoff down; this says until when.
		parts = append(parts, "retry at "+m.retry.wake.Local().Format("15:04:05"))
	}
	switch n := len(s.subAgents); {
	case n == 1:
		parts = append(parts, "sub-agent "+s.subAgents[0]+" running")
	case n > 1:
		parts = append(parts, fmt.Sprintf("%d sub-agents running (latest %s)", n, s.subAgents[n-1]))
	}
	if s.budget != nil && s.budget.Reached != "" {
		parts = append(parts, s.budget.Reached)
	}
	return strings.Join(parts, " · ")
}

// formatTokens writes a token count short: 950, 12.3k, 1.2M.
func formatTokens(n int64) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 1_000_000:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1_000_000)
}
