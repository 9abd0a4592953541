package client

import (
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/llm"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

// Session is one session as RPC mode and the terminal UI drive it: prompts, manual
// compactions and user commands are workflows reached through a
// Controller; settings changes are written to the settings file;
// sessions are read through the workers (SessionRead) and the entries of
// set_model, set_thinking_level, set_session_name and fork written with
// the SessionWrite workflow, so the RPC process needs only Temporal, as
// every starter command does.
type Session struct {
	k *Controller
	// Reload, when set, re-reads the settings before a prompt starts and
	// before an idle state is built, so a change made by another process
	// (`starter set-auto-retry off`) is seen.
	Reload func() (settings.Settings, error)
	// Workspace, when set, is the directory a new session's tools work in
	// (prompts and user commands); "" is the current directory.
	Workspace string
	// Host, when set, is the tool host a new session is created on
	// (--host); "": session.host, else a host that has the workspace
	// (Controller.Place).
	Host string
	// FollowGiveUp bounds how long Follow outlasts Temporal not answering
	// (0: DefaultFollowGiveUp); tests shorten it.
	FollowGiveUp time.Duration

	// flushMu serialises flush.
	flushMu sync.Mutex
	mu      sync.Mutex
	s       settings.Settings
	session string
	// model and thinking are the session's choices (set_model,
	// set_thinking_level, or its model_change / thinking_level_change
	// entries); nil and "" follow the settings.
	model    *settings.ModelID
	thinking string
	// steeringMode and followUpMode are set_steering_mode's and
	// set_follow_up_mode's ("": the settings').
	steeringMode, followUpMode string
	// pending holds, per session, the entries recorded while the session
	// ran a prompt (or had no file yet): they are appended after its leaf
	// once it is idle, so they never split the branch a prompt writes.
	pending map[string][]session.Entry
	// fresh holds the sessions known to have no entries yet (new_session,
	// or a write that found none): their pending entries wait for the
	// first prompt, and nothing is read or written for them before.
	fresh map[string]bool
	// bash is the user command (Bash) being started or run, nil when
	// none.
	bash *bashRun
}

// bashRun is a user command of this backend: its session, and started,
// closed once its workflow runs (or failed to start).
type bashRun struct {
	session string
	started chan struct{}
	ok      bool
}

// Open returns the client of one session. Nothing is read yet: the
// session's choices are read when a prompt starts or its state is asked.
func Open(k *Controller, s settings.Settings, sessionID string) (*Session, error) {
	if err := session.ValidateID(sessionID); err != nil {
		return nil, fmt.Errorf("client: %w", err)
	}
	return &Session{k: k, s: s, session: sessionID, pending: map[string][]session.Entry{}, fresh: map[string]bool{}}, nil
}

// SessionID is the session served now (new_session, switch_session and
// fork change it).
func (t *Session) SessionID() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.session
}

// Settings are the settings in force, reloaded when Reload is set (a
// failed reload keeps the last good ones).
func (t *Session) Settings() settings.Settings {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.Reload != nil {
		if s, err := t.Reload(); err == nil {
			t.s = s
		}
	}
	return t.s
}

// input writes the session's pending entries (flush), reads it (read:
// afresh, as another terminal may have changed its choices) and returns
// it with PromptInput of message under its current choices: its model
// (and that model's price), thinking level, own settings (tools,
// approval) and queue modes.
func (t *Session) input(ctx context.Context, message string) (*session.Session, workflows.PromptInput, error) {
	t.flush(ctx, t.SessionID())
	sess, kept, err := t.read(ctx)
	s := t.Settings()
	t.mu.Lock()
	defer t.mu.Unlock()
	in := PromptInput(s, t.session, message)
	if kept != nil {
		// The session's budget caps are the workflow's to join with the
		// sender's (the tighter wins); the rest is the session's.
		budget := in.Budget
		workflows.ApplySessionSettings(*kept, &in)
		in.Budget.SessionMaxTokens, in.Budget.SessionMaxCostUsd = budget.SessionMaxTokens, budget.SessionMaxCostUsd
	}
	if t.Workspace != "" {
		in.Workspace = t.Workspace
	}
	if t.model != nil {
		in.Model.Provider, in.Model.Name = t.model.Provider, t.model.Name
		in.Model.Cost = ModelCost(s, t.model.Provider, t.model.Name)
	}
	if t.thinking != "" {
		in.Model.ThinkingLevel = t.thinking
	}
	if t.steeringMode != "" {
		in.Agent.SteeringMode = t.steeringMode
	}
	if t.followUpMode != "" {
		in.Agent.FollowUpMode = t.followUpMode
	}
	return sess, in, err
}

// StartPrompt starts a prompt, with its images, and returns once its
// workflow runs. A session runs one prompt at a time: when one runs, the
// error wraps ErrSessionBusy. Entries recorded while the session was busy
// go in first, so the prompt follows them.
func (t *Session) StartPrompt(ctx context.Context, message string, images ...agent.ContentBlock) (Prompt, error) {
	sess, in, err := t.input(ctx, message)
	in.Images = images
	var h session.Header
	if sess != nil {
		h = sess.Header
	} else if err == nil {
		err = session.ErrNotFound // new: its first prompt places it
	}
	if err := t.k.Place(ctx, &in, t.Host, t.Settings().Session.Host, h, err); err != nil {
		return Prompt{}, err
	}
	run, err := t.k.StartPrompt(ctx, in)
	if err != nil {
		return Prompt{}, err
	}
	t.started(in.SessionID)
	return Prompt{WorkflowID: run.GetID(), RunID: run.GetRunID()}, nil
}

// DefaultFollowGiveUp is how long a Session's Follow survives Temporal
// not answering (a Temporal restart): RPC mode and the terminal UI keep
// their stream through it, where `starter events --follow` gives up
// after DefaultUnreachableTimeout. A missing worker is waited for as
// long as ctx lasts (Controller.Follow).
const DefaultFollowGiveUp = 2 * time.Minute

// Follow calls fn with every event of the prompt runID ("": the session's
// latest prompt) after seq `after`, in order and once each, until
// prompt_end (returned) or ctx ends (ctx.Err()). It works with
// Controller.Follow, surviving Temporal not answering for FollowGiveUp
// (DefaultFollowGiveUp when 0). It follows the session served when it is
// called.
func (t *Session) Follow(ctx context.Context, runID string, after int64, fn func(agent.Event)) (agent.Event, error) {
	return t.k.follow(ctx, t.SessionID(), runID, after, cmp.Or(t.FollowGiveUp, DefaultFollowGiveUp), fn)
}

// Abort sends abort to the running prompt; AbortRetry sends abort_retry.
// Without a running prompt both fail with ErrNoRunningPrompt.
func (t *Session) Abort(ctx context.Context) error { return t.k.Abort(ctx, t.SessionID()) }

// AbortRetry sends abort_retry to the running prompt (Abort).
func (t *Session) AbortRetry(ctx context.Context) error {
	return t.k.AbortRetry(ctx, t.SessionID())
}

// Steer queues message for the running prompt (signal steer): it is
// delivered after the current tool batch, whose calls not started yet are
// skipped. Without a running prompt it fails with ErrNoRunningPrompt.
func (t *Session) Steer(ctx context.Context, message string, images ...agent.ContentBlock) error {
	return t.k.Steer(ctx, t.SessionID(), message, images...)
}

// FollowUp queues message for when the running prompt would otherwise end
// (signal follow_up); without a running prompt it fails with
// ErrNoRunningPrompt.
func (t *Session) FollowUp(ctx context.Context, message string, images ...agent.ContentBlock) error {
	return t.k.FollowUp(ctx, t.SessionID(), message, images...)
}

// Send sends message as kind, agent.SignalSteer (Steer) or
// agent.SignalFollowUp (FollowUp): the one door of the front ends that
// choose by a message's kind.
func (t *Session) Send(ctx context.Context, kind, message string, images ...agent.ContentBlock) error {
	return t.k.Send(ctx, t.SessionID(), kind, message, images...)
}

// ApproveTool decides a tool call waiting for approval (update
// approve_tool); an unknown or already decided id is an error.
func (t *Session) ApproveTool(ctx context.Context, p agent.ApproveToolPayload) error {
	return t.k.ApproveTool(ctx, t.SessionID(), p)
}

// SetAutoRetry persists retry.enabled in the settings file first (so the
// next prompt has it), then tells the running prompt, if any, with the
// set_auto_retry signal (SPEC 8).
func (t *Session) SetAutoRetry(ctx context.Context, enabled bool) error {
	t.mu.Lock()
	file := t.s.File()
	err := settings.SetBool(file, "retry.enabled", enabled)
	if err == nil {
		t.s.Retry.Enabled = enabled
	}
	id := t.session
	t.mu.Unlock()
	if err != nil {
		return err
	}
	if err := t.k.SetAutoRetry(ctx, id, enabled); err != nil && !errors.Is(err, ErrNoRunningPrompt) {
		return fmt.Errorf("retry.enabled=%t saved in %s, but the running prompt was not told: %w", enabled, file, err)
	}
	return nil
}

// SetAutoCompaction persists compaction.enabled in the settings file; it
// applies from the next prompt.
func (t *Session) SetAutoCompaction(ctx context.Context, enabled bool) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := settings.SetBool(t.s.File(), "compaction.enabled", enabled); err != nil {
		return err
	}
	t.s.Compaction.Enabled = enabled
	return nil
}

// State is the running prompt's state (the state query), or, with no
// prompt running, the session's state (Status agent.StatusIdle) from the
// settings and the session, read through a worker: with none up it fails
// after DefaultReadWait.
func (t *Session) State(ctx context.Context) (agent.State, error) {
	id := t.SessionID()
	status, _, err := t.k.RunStatus(ctx, id, "")
	if err != nil && !isNotFound(err) {
		return agent.State{}, fmt.Errorf("describe workflow %s: %w", workflows.WorkflowID(id), err)
	}
	if err == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING {
		st, err := t.k.State(ctx, id)
		if !errors.Is(err, ErrNoPrompt) {
			return st, err
		}
	}
	sess, in, err := t.input(ctx, "")
	if err != nil {
		return agent.State{}, err
	}
	return agent.State{
		SessionID: id, Model: in.Model.Name, Provider: in.Model.Provider, Status: agent.StatusIdle,
		AutoRetryEnabled: in.Retry.Enabled, AutoCompactionEnabled: in.Compaction.Enabled, MessageCount: len(runContext(sess)),
		SteeringMode: queueMode(in.Agent.SteeringMode), FollowUpMode: queueMode(in.Agent.FollowUpMode),
	}, nil
}

// queueMode is a delivery mode with its default filled in.
func queueMode(m string) string { return cmp.Or(m, agent.QueueModeOneAtATime) }

// LatestPrompt returns the session's latest prompt, running or closed (ok
// false when the session's workflow has no run yet, or its latest run is a
// compaction or a user command). It works with one
// DescribeWorkflowExecution of the session's workflow id.
func (t *Session) LatestPrompt(ctx context.Context) (PromptRun, bool, error) {
	id := workflows.WorkflowID(t.SessionID())
	d, err := t.k.Client.DescribeWorkflowExecution(ctx, id, "")
	if isNotFound(err) {
		return PromptRun{}, false, nil
	}
	if err != nil {
		return PromptRun{}, false, fmt.Errorf("describe workflow %s: %w", id, err)
	}
	info := d.GetWorkflowExecutionInfo()
	if info.GetType().GetName() != workflows.PromptWorkflowName {
		return PromptRun{}, false, nil
	}
	run := info.GetExecution().GetRunId()
	return PromptRun{Prompt: Prompt{WorkflowID: id, RunID: run}, FirstRunID: cmp.Or(info.GetFirstRunId(), run),
		Running: info.GetStatus() == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING}, true, nil
}

// LoadSession reads a session through the workers (nil, nil when it has
// no entries yet). Events are completed from it.
func (t *Session) LoadSession(ctx context.Context, id string) (*session.Session, error) {
	t.mu.Lock()
	fresh := t.fresh[id]
	t.mu.Unlock()
	if fresh {
		return nil, nil
	}
	sess, err := t.k.ReadSession(ctx, id)
	if errors.Is(err, session.ErrNotFound) {
		return nil, nil
	}
	return sess, err
}

// Messages is the run context at the end of the session (a session
// without entries has no messages).
func (t *Session) Messages(ctx context.Context) ([]agent.Message, error) {
	sess, err := t.LoadSession(ctx, t.SessionID())
	return runContext(sess), err
}

// runContext is the run context at the end of sess (none when nil).
func runContext(sess *session.Session) []agent.Message {
	if sess == nil {
		return []agent.Message{}
	}
	return sess.Context(sess.LeafID())
}

// Compact compacts the session's context now with its current choices
// (Controller.Compact).
func (t *Session) Compact(ctx context.Context, customInstructions string, onRetry func(agent.Event)) (workflows.CompactResult, error) {
	_, p, _ := t.input(ctx, "")
	in := workflows.CompactInputFrom(p, customInstructions)
	in.Model.ThinkingLevel = "" // a summary needs no reasoning
	return t.k.Compact(ctx, in, onRetry)
}

// Info is what get_state adds to the workflow's state.
func (t *Session) Info(ctx context.Context) (SessionInfo, error) {
	id := t.SessionID()
	sess, in, err := t.input(ctx, "")
	if err != nil {
		return SessionInfo{}, err
	}
	info := SessionInfo{
		SessionID:     id,
		Model:         settings.ModelID{Provider: in.Model.Provider, Name: in.Model.Name},
		ThinkingLevel: cmp.Or(in.Model.ThinkingLevel, llm.ThinkingOff),
		SteeringMode:  queueMode(in.Agent.SteeringMode),
		FollowUpMode:  queueMode(in.Agent.FollowUpMode),
		ContextWindow: t.Settings().Model.ContextWindow,
	}
	if dir := t.sessionsDir(); dir != "" {
		info.File = filepath.Join(dir, id+".jsonl")
	}
	if sess != nil {
		info.Name = sess.Name()
	}
	t.mu.Lock()
	for _, e := range t.pending[id] {
		if e.Type == session.TypeSessionInfo {
			info.Name = e.Name
		}
	}
	t.mu.Unlock()
	return info, nil
}

// Models are the models set_model may choose (get_available_models):
// model.provider/model.name and model.available.
func (t *Session) Models() []settings.ModelID { return t.Settings().Model.AvailableModels() }

// SetModel chooses the session's model for its next prompts and records a
// model_change entry; a model that is not available is an error ("Model
// not found: provider/id").
func (t *Session) SetModel(ctx context.Context, provider, modelID string) error {
	want := settings.ModelID{Provider: provider, Name: modelID}
	if !slices.Contains(t.Models(), want) {
		return TerminalError(fmt.Sprintf("Model not found: %s/%s (available: model.provider/model.name and model.available)", provider, modelID))
	}
	t.mu.Lock()
	t.model = &want
	t.mu.Unlock()
	t.record(ctx, session.Entry{Type: session.TypeModelChange, Provider: provider, ModelID: modelID})
	return nil
}

// SetThinkingLevel chooses the thinking level of the next prompts and
// records a thinking_level_change entry.
func (t *Session) SetThinkingLevel(ctx context.Context, level string) error {
	if !slices.Contains(llm.ThinkingLevels, level) {
		return fmt.Errorf("invalid thinking level %q (want one of %s)", level, strings.Join(llm.ThinkingLevels, ", "))
	}
	t.mu.Lock()
	t.thinking = level
	t.mu.Unlock()
	t.record(ctx, session.Entry{Type: session.TypeThinkingLevelChange, ThinkingLevel: level})
	return nil
}

// SetQueueMode sets the steering (steer true) or follow-up mode of the
// next prompts. The mode applies to the prompts this process starts from
// now on (a running prompt keeps its own).
func (t *Session) SetQueueMode(ctx context.Context, steer bool, mode string) error {
	if mode != agent.QueueModeAll && mode != agent.QueueModeOneAtATime {
		return fmt.Errorf("invalid mode %q (want %s or %s)", mode, agent.QueueModeAll, agent.QueueModeOneAtATime)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if steer {
		t.steeringMode = mode
	} else {
		t.followUpMode = mode
	}
	return nil
}

// SetSessionName records a session_info entry.
func (t *Session) SetSessionName(ctx context.Context, name string) error {
	name = strings.TrimSpace(name)
	if name == "" {
		return TerminalError("Session name cannot be empty")
	}
	t.record(ctx, session.Entry{Type: session.TypeSessionInfo, Name: name})
	return nil
}

// record queues an entry of the session served and appends it after the
// leaf when the session is idle and has a file (see flush).
func (t *Session) record(ctx context.Context, e session.Entry) {
	e.ID = newEntryID()
	e.Timestamp = time.Now().UTC()
	t.mu.Lock()
	id := t.session
	t.pending[id] = append(t.pending[id], e)
	t.mu.Unlock()
	t.flush(ctx, id)
}

// writeWait bounds how long a session write is waited for (no worker
// up: the write is durable and lands when one comes).
const writeWait = 5 * time.Second

// flush writes the session's pending entries after its leaf, chained,
// with the SessionWrite workflow (Controller.StartSessionWrite), so they
// never interleave with a prompt: while a workflow of the session runs
// they stay pending and a later call writes them. Once the workflow
// started they are its to write; flush waits for it up to writeWait. A
// session without entries yet (a new session gets its file, with its
// workspace and tool host, from its first prompt) writes none: they are
// pending again until its first prompt starts (started).
func (t *Session) flush(ctx context.Context, id string) {
	t.flushMu.Lock()
	defer t.flushMu.Unlock()
	t.mu.Lock()
	entries, fresh := t.pending[id], t.fresh[id]
	t.mu.Unlock()
	if len(entries) == 0 || fresh {
		return
	}
	run, err := t.k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: id, Entries: entries})
	if err != nil {
		return
	}
	t.mu.Lock()
	if t.pending[id] = t.pending[id][len(entries):]; len(t.pending[id]) == 0 {
		delete(t.pending, id)
	}
	t.mu.Unlock()
	wctx, cancel := context.WithTimeout(ctx, writeWait)
	defer cancel()
	var res workflows.SessionWriteResult
	if run.Get(wctx, &res) == nil && !res.Written {
		t.mu.Lock()
		t.pending[id], t.fresh[id] = append(entries, t.pending[id]...), true
		t.mu.Unlock()
	}
}

// started notes that a workflow that creates the session's file (a
// prompt, a user command) started: its pending entries go after it.
func (t *Session) started(id string) {
	t.mu.Lock()
	delete(t.fresh, id)
	t.mu.Unlock()
}

// TerminalError is an error in the terminal agent's words, which start
// with a capital letter ("Model not found: ..."): its clients may match
// them.
type TerminalError string

func (e TerminalError) Error() string { return string(e) }

// newEntryID is 8 random hex digits, as the terminal agent's entry ids
// (and the random part of a new or forked session's id).
func newEntryID() string {
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// NewSession switches to a new, empty session, whose file appears with its
// first prompt (workspace: Workspace, else this process's directory). The
// model and thinking level chosen carry over.
func (t *Session) NewSession(ctx context.Context) error {
	id := "rpc-" + time.Now().UTC().Format("20060102-150405") + "-" + newEntryID()
	_, _, _ = t.read(ctx) // the current session's choices, which carry over
	t.mu.Lock()
	t.session, t.fresh[id] = id, true
	model, thinking := t.model, t.thinking
	t.mu.Unlock()
	if model != nil {
		t.record(ctx, session.Entry{Type: session.TypeModelChange, Provider: model.Provider, ModelID: model.Name})
	}
	if thinking != "" {
		t.record(ctx, session.Entry{Type: session.TypeThinkingLevelChange, ThinkingLevel: thinking})
	}
	return nil
}

// SwitchSession switches to an existing session: ref is a session id or,
// with JSONL sessions, a session file of the store's directory.
func (t *Session) SwitchSession(ctx context.Context, ref string) error {
	id, err := t.resolve(ref)
	if err != nil {
		return err
	}
	sess, err := t.LoadSession(ctx, id)
	if err != nil {
		return err
	}
	if sess == nil {
		return fmt.Errorf("session %q not found (new_session starts a new one)", id)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.session = id
	t.chooseLocked(sess.BranchSettings(sess.LeafID()))
	return nil
}

// sessionsDir is the directory of the workers' session files, from the
// settings ("" when sessions live in PostgreSQL).
func (t *Session) sessionsDir() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.s.Session.Store == settings.SessionStorePostgres {
		return ""
	}
	return filepath.Join(t.s.DataDir, "sessions")
}

// resolve turns a switch_session reference into a session id.
func (t *Session) resolve(ref string) (string, error) {
	if !strings.ContainsRune(ref, filepath.Separator) && !strings.HasSuffix(ref, ".jsonl") {
		return ref, session.ValidateID(ref)
	}
	dir := t.sessionsDir()
	if dir == "" {
		return "", fmt.Errorf("sessions live in PostgreSQL (session.store postgres): give switch_session a session id, not the path %q", ref)
	}
	abs, err := filepath.Abs(ref)
	if err != nil {
		return "", err
	}
	if d, err := filepath.EvalSymlinks(filepath.Dir(abs)); err == nil {
		if real, err := filepath.EvalSymlinks(dir); err == nil && d == real {
			abs = filepath.Join(dir, filepath.Base(abs))
		}
	}
	if filepath.Dir(abs) != filepath.Clean(dir) || !strings.HasSuffix(abs, ".jsonl") {
		return "", fmt.Errorf("%s is not a session file of %s (the store of this data dir); give a file there or a session id", ref, dir)
	}
	id := strings.TrimSuffix(filepath.Base(abs), ".jsonl")
	return id, session.ValidateID(id)
}

// read reads the session served through the workers (nil when it has no
// entries yet) and its own settings (nil when it has none yet: its first
// prompt records the settings'), and takes the session's model and
// thinking level from its model_change and thinking_level_change
// entries, which another client may have written; entries this client
// recorded and has not written yet (pending) win. A session that cannot
// be read keeps the choices this client had. The cost is one or two
// reads (SessionRead) per prompt start, state and info.
func (t *Session) read(ctx context.Context) (*session.Session, *session.Settings, error) {
	id := t.SessionID()
	sess, err := t.LoadSession(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	var kept *session.Settings
	if sess != nil {
		if data, err := t.k.ReadSessionAside(ctx, id, session.SettingsKey); err == nil && data != nil && json.Unmarshal(data, &kept) != nil {
			kept = nil
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if id != t.session {
		return sess, kept, nil
	}
	var b session.BranchSettings
	if sess != nil {
		b = sess.BranchSettings(sess.LeafID())
	}
	if !t.fresh[id] {
		t.chooseLocked(b)
	}
	for _, e := range t.pending[id] {
		switch e.Type {
		case session.TypeModelChange:
			t.model = &settings.ModelID{Provider: e.Provider, Name: e.ModelID}
		case session.TypeThinkingLevelChange:
			t.thinking = e.ThinkingLevel
		}
	}
	return sess, kept, nil
}

// chooseLocked takes the model and thinking level of a branch's
// model_change and thinking_level_change entries (none: the settings').
// t.mu is held.
func (t *Session) chooseLocked(b session.BranchSettings) {
	t.model, t.thinking = nil, b.ThinkingLevel
	if b.Provider != "" && b.Model != "" {
		t.model = &settings.ModelID{Provider: b.Provider, Name: b.Model}
	}
}

// Fork switches to a new session holding the current one's branch up to
// entryID: before it (a user message, whose text it returns) or, with at,
// including it (clone). The SessionWrite workflow creates the new session
// on a worker with the branch's entries (same ids, so compactions keep
// their first kept entry) and the source's workspace and tool host.
func (t *Session) Fork(ctx context.Context, entryID string, at bool) (string, error) {
	src := t.SessionID()
	sess, err := t.LoadSession(ctx, src)
	if err != nil {
		return "", err
	}
	var e session.Entry
	ok := false
	if sess != nil {
		e, ok = sess.Get(entryID)
	}
	if !ok || (!at && (e.Message == nil || e.Message.Role != agent.RoleUser)) {
		return "", TerminalError(fmt.Sprintf("Invalid entry ID for forking: %q is not a user message of session %s (get_fork_messages lists them)", entryID, src))
	}
	through, text := entryID, ""
	if !at {
		through, text = e.ParentID, e.Message.Text()
	}
	random := newEntryID()
	id := src + "-fork-" + random
	if len(id) > session.MaxIDLen {
		id = "fork-" + time.Now().UTC().Format("20060102-150405") + "-" + random
	}
	run, err := t.k.StartSessionWrite(ctx, workflows.SessionWriteInput{SessionID: id, ForkFrom: src, ForkThrough: through})
	if err != nil {
		return "", err
	}
	wctx, cancel := context.WithTimeout(ctx, DefaultReadWait)
	defer cancel()
	if err := run.Get(wctx, nil); err != nil {
		return "", fmt.Errorf("fork session %s into %s: %w", src, id, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	t.session = id
	t.chooseLocked(sess.BranchSettings(through))
	return text, nil
}

// Bash runs a user command in the session's workspace on its tool host
// (the Bash workflow, under the session's workflow id: ErrSessionBusy
// while another workflow of the session runs; it records the command),
// waits for it and returns its bashExecution message, read from the entry
// it wrote; a command that could not be run is an error. AbortBash stops
// the one running; when ctx ends first the command keeps running in
// Temporal.
func (t *Session) Bash(ctx context.Context, command string, opts BashOptions) (agent.Message, error) {
	id := t.SessionID()
	t.flush(ctx, id)
	s := t.Settings()
	wd, _ := os.Getwd()
	wd = cmp.Or(t.Workspace, wd)
	b := &bashRun{session: id, started: make(chan struct{})}
	t.mu.Lock()
	t.bash = b
	t.mu.Unlock()
	defer func() {
		t.mu.Lock()
		if t.bash == b {
			t.bash = nil
		}
		t.mu.Unlock()
	}()
	in := workflows.BashInput{SessionID: id, Command: command, Workspace: wd, ExcludeFromContext: opts.ExcludeFromContext,
		TimeoutMs: s.Tools.BashTimeoutMs, HostWaitMs: s.Tools.HostWaitMs, HeartbeatTimeoutMs: s.Model.HeartbeatTimeoutMs}
	run, err := t.k.startSessionWorkflow(ctx, id, Summary("bash: ", command), "bash in", workflows.BashWorkflowName, in, nil)
	b.ok = err == nil
	close(b.started)
	if err != nil {
		return agent.Message{}, err
	}
	t.started(id)
	streamed := t.streamBash(ctx, id, run.GetRunID(), opts.OnOutput)
	res, err := runResult[workflows.BashResult](ctx, run)
	streamed()
	switch {
	case err != nil && res.Status != "":
		return agent.Message{}, errors.New(res.Error)
	case err != nil:
		return agent.Message{}, fmt.Errorf("bash in session %s: %w", id, err)
	}
	if e, ok, err := t.k.ReadEntry(ctx, id, res.EntryID); err == nil && ok && e.Message != nil {
		return *e.Message, nil
	}
	return agent.Message{Role: agent.RoleBashExecution, Command: command, ExitCode: res.ExitCode, Cancelled: res.Cancelled, ExcludeFromContext: opts.ExcludeFromContext,
		Truncated: res.Truncated, Output: res.Preview}, nil
}

// streamBash follows the Bash run's live output (the UserBash activity's
// output tail, as tool_execution_update) and passes what each read adds
// to onOutput, until the run's prompt_end; the returned func waits for
// that (at most asideGrace) and stops it. Nothing without onOutput.
func (t *Session) streamBash(ctx context.Context, id, runID string, onOutput func(string)) func() {
	if onOutput == nil {
		return func() {}
	}
	prev := ""
	return t.k.followAside(ctx, id, runID, func(e agent.Event) {
		if e.Type != agent.EventToolExecutionUpdate || e.PartialResult == nil {
			return
		}
		cur := e.PartialResult.Text()
		if d := live.TailDelta(prev, cur); d != "" {
			onOutput(d)
		}
		prev = cur
	})
}

// AbortBash aborts the user command this session runs (waiting for its
// workflow to start if it is starting); without one it does nothing (a
// prompt is not touched).
func (t *Session) AbortBash(ctx context.Context) error {
	t.mu.Lock()
	b := t.bash
	t.mu.Unlock()
	if b == nil {
		return nil
	}
	select {
	case <-b.started:
	case <-ctx.Done():
		return ctx.Err()
	}
	if !b.ok {
		return nil
	}
	return IdleOK(t.k.Abort(ctx, b.session))
}

// IdleOK makes abort and abort_retry without a running prompt a harmless
// no-op (SPEC 5: "outside a wait it is a harmless no-op").
func IdleOK(err error) error {
	if errors.Is(err, ErrNoRunningPrompt) {
		return nil
	}
	return err
}
