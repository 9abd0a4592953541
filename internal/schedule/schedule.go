// Package schedule manages scheduled jobs (docs/spec.md 16): Temporal
// Schedules, visible and editable in the Temporal UI, whose action is the
// ScheduledPrompt workflow, which runs a prompt in a fresh session per run
// (prefix-<scheduled time>) or in one named session. A Manager creates,
// updates, lists, describes, pauses, unpauses, triggers and deletes them.
// A new schedule's overlap policy is skip and its catch-up window 1 h
// unless given (Info counts the runs each skipped or dropped); the prompt
// input is built by the caller as `starter prompt` builds it
// (client.PromptInput).
package schedule

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	sdkclient "go.temporal.io/sdk/client"
	"go.temporal.io/sdk/converter"
	"go.temporal.io/sdk/temporal"

	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/workflows"
)

// Defaults of a new schedule.
const (
	DefaultOverlap       = "skip"
	DefaultCatchupWindow = time.Hour
	// MinCatchupWindow is the smallest catch-up window the server keeps
	// (it raises a smaller one to this).
	MinCatchupWindow = 10 * time.Second
	// MinEvery is the shortest interval of --every.
	MinEvery = time.Second
)

// ActionIDPrefix starts the workflow id of a schedule's action; Temporal
// appends the run's scheduled time.
const ActionIDPrefix = "scheduled-"

// MemoWhen is the schedule memo field that keeps its spec as created
// (`cron "0 3 * * *"`, "every 6h0m0s"). An update cannot change a
// schedule's memo: a cron expression also carries itself as the comment
// of the calendar the server makes of it (specOf), which Describe and
// List read first.
const MemoWhen = "when"

// ErrNotFound: no schedule has the id.
var ErrNotFound = errors.New("schedule not found")

// overlaps are the overlap policies by their CLI name.
var overlaps = map[string]enumspb.ScheduleOverlapPolicy{
	"skip":       enumspb.SCHEDULE_OVERLAP_POLICY_SKIP,
	"buffer-one": enumspb.SCHEDULE_OVERLAP_POLICY_BUFFER_ONE,
	"allow-all":  enumspb.SCHEDULE_OVERLAP_POLICY_ALLOW_ALL,
}

// ParseOverlap is the overlap policy named s (skip, buffer-one,
// allow-all).
func ParseOverlap(s string) (enumspb.ScheduleOverlapPolicy, error) {
	if p, ok := overlaps[s]; ok {
		return p, nil
	}
	return 0, fmt.Errorf("invalid overlap policy %q: want skip, buffer-one or allow-all", s)
}

// OverlapName is the CLI name of p: the enum's name in kebab case (also
// for a policy the CLI does not set, e.g. one chosen in the Temporal UI).
func OverlapName(p enumspb.ScheduleOverlapPolicy) string {
	if p == enumspb.SCHEDULE_OVERLAP_POLICY_UNSPECIFIED {
		return DefaultOverlap
	}
	return kebab(enumspb.ScheduleOverlapPolicy_name[int32(p)], "SCHEDULE_OVERLAP_POLICY_")
}

// kebab is an enum's protobuf name without prefix in kebab case
// ("SCHEDULE_OVERLAP_POLICY_CANCEL_OTHER": "cancel-other").
func kebab(name, prefix string) string {
	return strings.ReplaceAll(strings.ToLower(strings.TrimPrefix(name, prefix)), "_", "-")
}

// Spec is a schedule to create.
type Spec struct {
	ID string
	// Cron or Every says when it fires; exactly one is set.
	Cron  string
	Every time.Duration
	// SessionPrefix (a fresh session per run) or SessionID (one named
	// session); exactly one is set.
	SessionPrefix string
	SessionID     string
	// Overlap is an overlap policy name ("": DefaultOverlap).
	Overlap string
	// CatchupWindow (0: DefaultCatchupWindow).
	CatchupWindow time.Duration
	// Prompt is the prompt each run starts, its SessionID empty.
	Prompt workflows.PromptInput
}

// Validate reports the first problem of the spec in one line.
func (s Spec) Validate() error {
	if err := validate(s.ID, s.Cron, s.Every, cmp.Or(s.Overlap, DefaultOverlap), s.CatchupWindow, true); err != nil {
		return err
	}
	return s.input().Validate()
}

// validate reports the first problem of the fields a new schedule and a
// change share; empty ones are not checked, but for id, and for cron
// and every when one of them is required.
func validate(id, cron string, every time.Duration, overlap string, catchup time.Duration, requireWhen bool) error {
	if id == "" {
		return errors.New("missing --id")
	}
	if err := ValidateID(id); err != nil {
		return err
	}
	switch {
	case requireWhen && (cron == "") == (every == 0):
		return errors.New("give --cron or --every, not both or neither")
	case cron != "" && every != 0:
		return errors.New("give --cron or --every, not both")
	case every != 0 && every < MinEvery:
		return fmt.Errorf("invalid --every %s: at least %s", every, MinEvery)
	}
	if overlap != "" {
		if _, err := ParseOverlap(overlap); err != nil {
			return err
		}
	}
	if catchup != 0 && catchup < MinCatchupWindow {
		return fmt.Errorf("invalid --catchup %s: at least %s", catchup, MinCatchupWindow)
	}
	return nil
}

// input is the ScheduledPrompt input of the schedule's action.
func (s Spec) input() workflows.ScheduledPromptInput {
	return workflows.ScheduledPromptInput{ScheduleID: s.ID, SessionPrefix: s.SessionPrefix, SessionID: s.SessionID, Prompt: s.Prompt}
}

// Manager manages the schedules of one namespace; the runs go to
// TaskQueue.
type Manager struct {
	Client    sdkclient.Client
	TaskQueue string
	// DataConverter decodes the action's input on Describe (nil: the
	// default; a client with a payload codec passes its converter).
	DataConverter converter.DataConverter
}

// Create creates the schedule of s.
func (m *Manager) Create(ctx context.Context, s Spec) error {
	if err := s.Validate(); err != nil {
		return err
	}
	overlap, _ := ParseOverlap(cmp.Or(s.Overlap, DefaultOverlap))
	_, err := m.Client.ScheduleClient().Create(ctx, sdkclient.ScheduleOptions{
		ID:            s.ID,
		Spec:          *specOf(s.Cron, s.Every),
		Overlap:       overlap,
		CatchupWindow: cmp.Or(s.CatchupWindow, DefaultCatchupWindow),
		Memo:          map[string]any{MemoWhen: WhenOf(s.Cron, s.Every)},
		Action: &sdkclient.ScheduleWorkflowAction{
			ID:            ActionIDPrefix + s.ID,
			Workflow:      workflows.ScheduledPromptWorkflowName,
			Args:          []any{s.input()},
			TaskQueue:     m.TaskQueue,
			StaticSummary: "scheduled prompt (" + s.ID + ")",
		},
	})
	switch {
	case errors.Is(err, temporal.ErrScheduleAlreadyRunning):
		return fmt.Errorf("schedule %s already exists (starter schedule delete %s first)", s.ID, s.ID)
	case err != nil:
		return cronErr(s.Cron, fmt.Errorf("create schedule %s: %w", s.ID, err))
	}
	return nil
}

// cronErr is err, or the server's refusal of the cron expression cron
// named as --cron: the server's check is the one a cron expression gets.
func cronErr(cron string, err error) error {
	var bad *serviceerror.InvalidArgument
	if errors.As(err, &bad) && cron != "" {
		if reason, ok := strings.CutPrefix(bad.Message, "Invalid schedule spec: "); ok {
			return fmt.Errorf("invalid --cron %q: %s", cron, reason)
		}
	}
	return err
}

// specOf is the schedule spec of a cron expression or an interval.
// The server keeps a cron expression as calendar specs; its comment,
// `cron "EXPR"`, says when it fires (when).
func specOf(cron string, every time.Duration) *sdkclient.ScheduleSpec {
	if cron == "" {
		return &sdkclient.ScheduleSpec{Intervals: []sdkclient.ScheduleIntervalSpec{{Every: every}}}
	}
	expr := strings.TrimSpace(cron)
	if !strings.Contains(expr, "#") && !strings.HasPrefix(expr, "@every") {
		// The server cuts the comment at the first '#': an expression
		// with a comment of its own keeps it (and the memo says when).
		expr += " #" + WhenOf(cron, 0)
	}
	return &sdkclient.ScheduleSpec{CronExpressions: []string{expr}}
}

// WhenOf is a spec in words as given: `cron "0 3 * * *"`, "every 6h0m0s".
func WhenOf(cron string, every time.Duration) string {
	if cron != "" {
		return fmt.Sprintf("cron %q", cron)
	}
	return "every " + every.String()
}

// Pause pauses the schedule id with note ("" : a default note).
func (m *Manager) Pause(ctx context.Context, id, note string) error {
	return m.handle(ctx, id, "pause", func(h sdkclient.ScheduleHandle) error {
		return h.Pause(ctx, sdkclient.SchedulePauseOptions{Note: note})
	})
}

// Unpause resumes the schedule id.
func (m *Manager) Unpause(ctx context.Context, id, note string) error {
	return m.handle(ctx, id, "unpause", func(h sdkclient.ScheduleHandle) error {
		return h.Unpause(ctx, sdkclient.ScheduleUnpauseOptions{Note: note})
	})
}

// Trigger starts a run of the schedule id now, under its overlap policy
// (with skip, nothing starts while a run is going).
func (m *Manager) Trigger(ctx context.Context, id string) error {
	return m.handle(ctx, id, "trigger", func(h sdkclient.ScheduleHandle) error {
		return h.Trigger(ctx, sdkclient.ScheduleTriggerOptions{})
	})
}

// Delete deletes the schedule id; runs it started keep running.
func (m *Manager) Delete(ctx context.Context, id string) error {
	return m.handle(ctx, id, "delete", func(h sdkclient.ScheduleHandle) error { return h.Delete(ctx) })
}

func (m *Manager) handle(ctx context.Context, id, what string, do func(sdkclient.ScheduleHandle) error) error {
	if err := ValidateID(id); err != nil {
		return err
	}
	err := do(m.Client.ScheduleClient().GetHandle(ctx, id))
	var nf *serviceerror.NotFound
	if errors.As(err, &nf) {
		return fmt.Errorf("%s %s: %w (starter schedule list shows the schedules)", what, id, ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("%s schedule %s: %w", what, id, err)
	}
	return nil
}

// ValidateID reports a schedule id that is not a valid session id (the
// characters a session id allows: it prefixes session ids).
func ValidateID(id string) error {
	if err := session.ValidateID(id); err != nil {
		return fmt.Errorf("invalid schedule id: %w", err)
	}
	return nil
}
