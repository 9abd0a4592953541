package session

import (
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// SummaryPromptRunes bounds a summary's last prompt.
const SummaryPromptRunes = 60

// Summary is what a list of sessions shows of one (`starter sessions`):
// small enough that a worker returns hundreds in one read.
type Summary struct {
	Header Header `json:"header"`
	// LastPrompt is the text of the last user message on one line of at
	// most SummaryPromptRunes runes.
	LastPrompt string `json:"lastPrompt,omitempty"`
	// LastActivity is the time of the last entry (the header's without
	// entries).
	LastActivity time.Time `json:"lastActivity"`
	// Usage is what the session spent, as its budgets count it (Spent;
	// nil: nothing reported usage).
	Usage *agent.Spend `json:"usage,omitempty"`
	// Unreadable is why the session could not be read ("" when it was).
	Unreadable string `json:"unreadable,omitempty"`
}

// Summarize is sess's summary.
func Summarize(sess *Session) Summary {
	sum := Summary{Header: sess.Header, LastActivity: sess.Header.Timestamp}
	for _, e := range sess.Entries {
		if e.Timestamp.After(sum.LastActivity) {
			sum.LastActivity = e.Timestamp
		}
		if m := e.Message; m != nil && m.Role == agent.RoleUser {
			if text := strings.TrimSpace(m.Text()); text != "" {
				sum.LastPrompt = line.Preview(text, SummaryPromptRunes)
			}
		}
	}
	if spend, ok := Spent(sess); ok {
		sum.Usage = &spend
	}
	return sum
}

// Spent is what the session's model calls were billed, as its prompts'
// budgets count them: the usage of every assistant message (answers,
// failed, aborted and paused attempts, on any branch), of each task
// call's result (its sub-agent's, theirs included) and of each
// compaction entry (its summary calls). ok: something reported usage.
func Spent(sess *Session) (s agent.Spend, ok bool) {
	for _, e := range sess.Entries {
		u := e.Usage
		if e.Message != nil {
			u = e.Message.Usage
		}
		if u != nil {
			s.Add(u)
			ok = true
		}
	}
	return s, ok
}
