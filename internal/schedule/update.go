package schedule

import (
	"context"
	"errors"
	"fmt"
	"time"

	commonpb "go.temporal.io/api/common/v1"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/workflows"
)

// Change is an update of a schedule (Manager.Update): each field set
// replaces the schedule's, the others stay as they are.
type Change struct {
	ID string
	// Cron or Every (at most one) replace when it fires.
	Cron  string
	Every time.Duration
	// Message replaces the prompt's text; the prompt's other settings
	// (model, tools, workspace) stay those it was created with.
	Message string
	// Overlap is an overlap policy name; CatchupWindow a catch-up window
	// (at least MinCatchupWindow).
	Overlap       string
	CatchupWindow time.Duration
	// Worktree, when set, turns the runs' worktree on or off.
	Worktree *bool
	// SessionPrefix (a fresh session per run) or SessionID (one named
	// session), at most one, replace where the runs go.
	SessionPrefix string
	SessionID     string
	// Check, when set, vets the schedule's updated action input before it
	// is written (the CLI checks the repository of a worktree).
	Check func(workflows.ScheduledPromptInput) error
}

// Validate reports the first problem of the change in one line.
func (c Change) Validate() error {
	if err := validate(c.ID, c.Cron, c.Every, c.Overlap, c.CatchupWindow, false); err != nil {
		return err
	}
	if c.SessionPrefix != "" && c.SessionID != "" {
		return errors.New("give --session or --session-prefix, not both")
	}
	if c.Cron == "" && c.Every == 0 && c.Message == "" && c.Overlap == "" && c.CatchupWindow == 0 &&
		c.Worktree == nil && c.SessionPrefix == "" && c.SessionID == "" {
		return errors.New("nothing to change: give --cron, --every, --overlap, --catchup, --worktree, --session-prefix, --session or a new PROMPT")
	}
	return nil
}

// Update changes the schedule c.ID as c says, with the SDK's
// read-modify-write (ScheduleHandle.Update: it describes the schedule,
// applies the change to what it read and writes the whole schedule
// back). It returns what changed, one "field: old -> new" each. The
// schedule keeps its id, state (paused or not), counts and recent runs;
// runs already started are not changed. A schedule that does not start
// a scheduled prompt (one edited into another workflow in the Temporal
// UI) is refused.
func (m *Manager) Update(ctx context.Context, c Change) ([]string, error) {
	if err := c.Validate(); err != nil {
		return nil, err
	}
	var changed []string
	err := m.handle(ctx, c.ID, "update", func(h client.ScheduleHandle) error {
		return h.Update(ctx, client.ScheduleUpdateOptions{DoUpdate: func(u client.ScheduleUpdateInput) (*client.ScheduleUpdate, error) {
			s := u.Description.Schedule
			var err error
			changed, err = m.apply(c, &s, u.Description.Memo)
			if err != nil {
				return nil, err
			}
			if len(changed) == 0 {
				return nil, temporal.ErrSkipScheduleUpdate // already so: write nothing
			}
			return &client.ScheduleUpdate{Schedule: &s}, nil
		}})
	})
	if err != nil {
		return nil, cronErr(c.Cron, err)
	}
	return changed, nil
}

// apply makes the change to s (as described; memo is its memo, for
// the spec as created) and returns what changed.
func (m *Manager) apply(c Change, s *client.Schedule, memo *commonpb.Memo) ([]string, error) {
	a, ok := s.Action.(*client.ScheduleWorkflowAction)
	if !ok || a.Workflow != workflows.ScheduledPromptWorkflowName {
		return nil, fmt.Errorf("it does not start a scheduled prompt (edit it in the Temporal UI)")
	}
	if len(a.Args) != 1 {
		return nil, fmt.Errorf("its action has %d arguments, want one scheduled prompt input", len(a.Args))
	}
	in, ok := m.decodeInput(a.Args[0])
	if !ok {
		return nil, fmt.Errorf("its action's input cannot be read as a scheduled prompt")
	}
	var changed []string
	note := func(field, from, to string) {
		if from != to {
			changed = append(changed, fmt.Sprintf("%s: %s -> %s", field, from, to))
		}
	}

	if c.Cron != "" || c.Every != 0 {
		from, to := m.when(memo, s.Spec), WhenOf(c.Cron, c.Every)
		if from != to {
			note("when", from, to)
			s.Spec = specOf(c.Cron, c.Every)
		}
	}
	if c.Overlap != "" || c.CatchupWindow != 0 {
		if s.Policy == nil {
			s.Policy = &client.SchedulePolicies{}
		}
		if c.Overlap != "" {
			p, _ := ParseOverlap(c.Overlap)
			note("overlap", OverlapName(s.Policy.Overlap), OverlapName(p))
			s.Policy.Overlap = p
		}
		if c.CatchupWindow != 0 {
			note("catch-up window", s.Policy.CatchupWindow.String(), c.CatchupWindow.String())
			s.Policy.CatchupWindow = c.CatchupWindow
		}
	}

	before := in
	if c.Message != "" {
		in.Prompt.Message = c.Message
	}
	switch {
	case c.SessionPrefix != "":
		in.SessionPrefix, in.SessionID = c.SessionPrefix, ""
	case c.SessionID != "":
		in.SessionPrefix, in.SessionID = "", c.SessionID
	}
	if c.Worktree != nil {
		in.Prompt.Worktree = ""
		if *c.Worktree {
			in.Prompt.Worktree = activities.WorktreeRequired
		}
	}
	n := len(changed)
	if before.Prompt.Message != in.Prompt.Message {
		changed = append(changed, fmt.Sprintf("prompt: %q", line.Preview(in.Prompt.Message, 60)))
	}
	note("session", sessionWords(before), sessionWords(in))
	onOff := map[bool]string{true: "on", false: "off"}
	note("worktree", onOff[before.Prompt.Worktree != ""], onOff[in.Prompt.Worktree != ""])
	if len(changed) > n {
		if err := in.Validate(); err != nil {
			return nil, err
		}
		if c.Check != nil {
			if err := c.Check(in); err != nil {
				return nil, err
			}
		}
		a.Args = []any{in}
	}
	return changed, nil
}

// sessionWords says where a scheduled prompt's runs go.
func sessionWords(in workflows.ScheduledPromptInput) string {
	if in.SessionID != "" {
		return "session " + in.SessionID
	}
	return "fresh sessions " + in.SessionPrefix + "-<scheduled time>"
}
