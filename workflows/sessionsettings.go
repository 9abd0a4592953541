package workflows

import (
	"fmt"
	"slices"
	"strings"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/session"
)

// A session's own settings (session.Settings; docs/spec.md 14.2): its
// first prompt records them, later prompts run with them.

// SessionSettingsOf takes a prompt input's session-owned settings.
func SessionSettingsOf(in PromptInput) session.Settings {
	return session.Settings{
		Tools: slices.Clone(in.Tools.Enabled), Approval: in.Approval.Approval, SessionLimits: in.Budget.SessionLimits}
}

// ApplySessionSettings puts the session's settings into a prompt input
// (the workflow does, and a client that starts a prompt in the session).
func ApplySessionSettings(s session.Settings, in *PromptInput) {
	in.Tools.Enabled = slices.Clone(s.Tools)
	in.Approval.Approval = s.Approval
	in.Budget.SessionLimits = s.SessionLimits
}

// adoptSessionSettings records the prompt's settings as the session's
// when it has none (its first prompt), else runs the prompt with the
// session's, saying in an event which of the sender's were not used.
func (r *run) adoptSessionSettings(ctx workflow.Context) error {
	own := SessionSettingsOf(r.in)
	var res activities.SessionSettingsResult
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.SessionSettingsName, activities.SessionSettingsInput{
		SessionID: r.in.SessionID, Proposed: own,
	}).Get(ctx, &res)
	if err != nil {
		return fmt.Errorf("read settings of session %s: %s", r.in.SessionID, rootMessage(err))
	}
	if !res.Exists || res.Recorded {
		return nil
	}
	kept := res.Settings
	ApplySessionSettings(kept, &r.in)
	// The session's budget is a cap another terminal cannot raise; a
	// sender's tighter limit applies to its prompt as well.
	r.in.Budget.SessionMaxTokens = tighter(kept.SessionMaxTokens, own.SessionMaxTokens)
	r.in.Budget.SessionMaxCostUsd = tighter(kept.SessionMaxCostUsd, own.SessionMaxCostUsd)
	diff := own.Differences(SessionSettingsOf(r.in)) //workflowcheck:ignore reflection over the struct's fields
	if len(diff) > 0 {
		r.sessionSettingsNote = "this prompt runs with the session's " + strings.Join(diff, ", ") +
			" (starter session set KEY VALUE changes them), not its sender's"
	}
	return nil
}

// tighter is the stricter of two limits, where 0 is no limit.
func tighter[T int64 | float64](a, b T) T {
	switch {
	case a <= 0:
		return b
	case b <= 0:
		return a
	}
	return min(a, b)
}
