package workflows

import (
	"cmp"
	"fmt"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/session"
)

// SessionWriteWorkflowName is the registered name of the SessionWrite
// workflow.
const SessionWriteWorkflowName = "SessionWrite"

// SessionWriteInput is the input of the SessionWrite workflow: entries
// written from outside a prompt (model_change, thinking_level_change,
// session_info), with their ids and timestamps; their parents are set
// by the workflow.
type SessionWriteInput struct {
	SessionID string          `json:"sessionId"`
	Entries   []session.Entry `json:"entries"`
	// Change, when set, changes one of the session's own settings
	// (session.Settings) after the entries are written.
	Change *SessionSettingChange `json:"change,omitempty"`
	// ForkFrom, when set, first creates the session as a fork of that
	// session: its workspace, tool host and branch up to ForkThrough ("":
	// no entries).
	ForkFrom    string `json:"forkFrom,omitempty"`
	ForkThrough string `json:"forkThrough,omitempty"`
	// ForkWorkspace, when set, is the fork's workspace (Cwd, Worktree)
	// instead of the source's (starter fork).
	ForkWorkspace *session.Header `json:"forkWorkspace,omitempty"`
	// At, when set, is the parent of the first entry instead of the
	// session's leaf: the entries start a branch there and become the
	// leaf (how starter rewind moves the conversation back).
	At string `json:"at,omitempty"`
}

// SessionSettingChange is an explicit change of one session setting.
type SessionSettingChange struct {
	// Key is one of settings.SessionKeys.
	Key string `json:"key"`
	// Value is the new value as the user wrote it (for the events and
	// the session file).
	Value string `json:"value"`
	// From holds the new value at Key: the session settings of a prompt
	// input built with it (the other keys are not read).
	From session.Settings `json:"from"`
}

// Validate reports the problems of the input in one line.
func (in SessionWriteInput) Validate() error {
	var p problems
	p.addErr(session.ValidateID(in.SessionID))
	p.add(len(in.Entries) == 0 && in.Change == nil && in.ForkFrom == "", "no entries")
	if err := session.ValidateID(in.ForkFrom); in.ForkFrom != "" && err != nil {
		p.add(true, "fork: "+err.Error())
	}
	if c := in.Change; c != nil {
		_, err := (session.Settings{}).With(c.Key, c.From) //workflowcheck:ignore reflection over the struct's fields
		p.addErr(err)
		p.add(len(c.Value) > maxChangeValueBytes, fmt.Sprintf("the value of %s is over %d bytes", c.Key, maxChangeValueBytes))
	}
	return p.invalid("session write")
}

// SessionWriteResult says whether the entries were written: a session
// without a file yet (its first prompt makes it, with its workspace and
// tool host) gets none, and the caller keeps them for later.
type SessionWriteResult struct {
	Written bool `json:"written"`
	// LeafID is the session's leaf before the write.
	LeafID string `json:"leafId,omitempty"`
	// LastEvents are the run's events, as PromptResult.LastEvents: where
	// a client reads a finished write's events.
	LastEvents []agent.Event `json:"lastEvents,omitempty"`
}

// SessionWrite appends entries after the session's leaf, chained, under
// the session's workflow id, so it never interleaves with a prompt
// (docs/architecture.md, "Session writes"). Like Bash and Compact it
// answers the state query and ends its events with prompt_end.
func SessionWrite(ctx workflow.Context, in SessionWriteInput) (SessionWriteResult, error) {
	if err := in.Validate(); err != nil {
		return SessionWriteResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	st := agent.State{SessionID: in.SessionID, Status: agent.StatusRunning}
	var log eventLog
	if err := log.serveQueries(ctx, func() agent.State { st.LastSeq = log.seq; return st }); err != nil {
		return SessionWriteResult{}, err
	}
	var err error
	if in.ForkFrom != "" {
		if err = workflow.ExecuteActivity(storeOptions(ctx), activities.AppendEntriesName, activities.AppendEntriesInput{
			SessionID: in.SessionID, ForkFrom: in.ForkFrom, ForkThrough: in.ForkThrough, ForkWorkspace: in.ForkWorkspace}).Get(ctx, nil); err != nil {
			err = fmt.Errorf("fork session %s: %s", in.ForkFrom, rootMessage(err))
		}
	}
	var res SessionWriteResult
	if err == nil {
		res, err = writeEntries(ctx, in)
	}
	if err == nil && res.Written && in.Change != nil {
		if err = changeSetting(ctx, in.SessionID, *in.Change); err == nil {
			log.emit(ctx, agent.Event{Type: agent.EventSessionSettings,
				Reason: fmt.Sprintf("session %s: %s set to %q", in.SessionID, in.Change.Key, in.Change.Value)})
		}
	}
	st.Status = agent.StatusCompleted
	end := agent.Event{Type: agent.EventPromptEnd, Status: st.Status}
	if err != nil {
		st.Status, end.Status, end.ErrorMessage = agent.StatusFailed, agent.StatusFailed, err.Error()
	}
	log.emit(ctx, end)
	res.LastEvents = log.lastEvents()
	return res, err
}

// writeEntries loads the session's leaf and appends the entries after it.
func writeEntries(ctx workflow.Context, in SessionWriteInput) (SessionWriteResult, error) {
	sctx := storeOptions(ctx)
	var loaded activities.LoadSessionResult
	if err := workflow.ExecuteActivity(sctx, activities.LoadSessionName,
		activities.LoadSessionInput{SessionID: in.SessionID}).Get(ctx, &loaded); err != nil {
		return SessionWriteResult{}, fmt.Errorf("write session %s: %s", in.SessionID, rootMessage(err))
	}
	if !loaded.Exists {
		return SessionWriteResult{}, nil
	}
	if len(in.Entries) > 0 {
		entries := append([]session.Entry(nil), in.Entries...)
		parent := cmp.Or(in.At, loaded.LeafID)
		for i := range entries {
			entries[i].ParentID, parent = parent, entries[i].ID
		}
		if err := workflow.ExecuteActivity(sctx, activities.AppendEntriesName,
			activities.AppendEntriesInput{SessionID: in.SessionID, Entries: entries}).Get(ctx, nil); err != nil {
			return SessionWriteResult{}, fmt.Errorf("write session %s: %s", in.SessionID, rootMessage(err))
		}
	}
	return SessionWriteResult{Written: true, LeafID: loaded.LeafID}, nil
}

// maxChangeValueBytes bounds a change's value (in history and events).
const maxChangeValueBytes = 4 << 10

// changeSetting replaces one key of the session's settings: it reads
// them (a session that has none records its sender's first) and keeps
// them with the key changed.
func changeSetting(ctx workflow.Context, sessionID string, c SessionSettingChange) error {
	lctx := localOptions(ctx)
	var cur activities.SessionSettingsResult
	if err := workflow.ExecuteLocalActivity(lctx, activities.SessionSettingsName,
		activities.SessionSettingsInput{SessionID: sessionID, Proposed: c.From}).Get(ctx, &cur); err != nil {
		return fmt.Errorf("change settings of session %s: %s", sessionID, rootMessage(err))
	}
	next, err := cur.Settings.With(c.Key, c.From) //workflowcheck:ignore reflection over the struct's fields
	if err != nil {
		return err
	}
	// The change's custom entry is named by the run id, stable on replay.
	if err := workflow.ExecuteLocalActivity(lctx, activities.SessionSettingsName,
		activities.SessionSettingsInput{SessionID: sessionID, Proposed: next, Replace: true, Change: &session.SettingsChange{Key: c.Key, Value: c.Value},
			ChangeEntryID: "set" + idChars(workflow.GetInfo(ctx).WorkflowExecution.RunID, 12, "")}).Get(ctx, nil); err != nil {
		return fmt.Errorf("change settings of session %s: %s", sessionID, rootMessage(err))
	}
	return nil
}
