package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/retry"
)

// ConnectionLostMessage is the assistant error the workflow records when a
// model call's activity times out (the worker died or lost Temporal). It
// contains "connection error" so the retry policy treats it like any
// network failure (SPEC 7).
const ConnectionLostMessage = "connection error: model call did not finish (%s timeout; the worker may have died)"

// Prompt runs one prompt of a session: the agent loop
// user message → model → (tool calls → tool results → model)* → answer,
// with the retry policy at every model call and compaction between turns.
// It returns only after any retry chain it started has ended (SPEC 6).
func Prompt(ctx workflow.Context, in PromptInput) (PromptResult, error) {
	if err := in.Validate(); err != nil {
		return PromptResult{}, temporal.NewNonRetryableApplicationError(err.Error(), ErrTypeBadInput, nil)
	}
	r := newRun(ctx, in)
	if err := r.registerHandlers(ctx); err != nil {
		return PromptResult{}, err
	}
	r.publishJob(ctx)
	r.startSignalPump(ctx)
	return r.execute(ctx)
}

// classify is the retry classification of o. For an error it is made
// once, in a side effect, so the history carries the verdict and a replay
// takes the decision the run took even when a later release's classifier
// reads the same text differently (every corpus round changes some
// verdicts); anything else (a success that may be a silent overflow, an
// abort) depends only on numbers in the history.
func (r *run) classify(ctx workflow.Context, o retry.Outcome) retry.Classification {
	now := workflow.Now(ctx)
	if o.StopReason != string(agent.StopReasonError) {
		return retry.ClassifyAt(o, now)
	}
	var cls retry.Classification
	verdict := workflow.SideEffect(ctx, func(workflow.Context) any { return retry.ClassifyAt(o, now) })
	if err := verdict.Get(&cls); err != nil {
		// Only a data converter that cannot decode what it encoded gets
		// here; classifying again gives the same verdict on this release.
		return retry.ClassifyAt(o, now)
	}
	return cls
}

// begin reads the session, writes the user message (SPEC: the prompt's
// first entry) and fixes the workspace. A continued run starts from the
// carried state instead.
func (r *run) begin(ctx workflow.Context) error {
	if c := r.in.Continued; c != nil {
		r.loop, r.seq, r.firstSeq = c.loop, c.Seq, c.Seq
		r.settings.Enabled = c.AutoRetry
		r.queueSeq = c.QueueSeq
		for _, m := range c.Queue {
			r.pushQueued(m)
		}
		r.agentRunning = true
		return nil
	}
	r.Turn = 1
	user := userMessage(agent.QueuedMessage{Text: r.in.Message, Images: r.in.Images})
	user.Timestamp = workflow.Now(ctx).UnixMilli()
	userID := r.newID()
	r.PromptEntryID = userID
	var b activities.BeginPromptResult
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.BeginPromptName, activities.BeginPromptInput{
		SessionID: r.in.SessionID, Workspace: r.in.Workspace, Worktree: r.in.Worktree, UserEntryID: userID,
		ParentSession: r.parent().SessionID, ToolHost: cmp.Or(r.parent().ToolHost, r.in.Host),
		Message: r.in.Message, Images: r.in.Images, TimestampMs: user.Timestamp, NeedWorkspace: len(r.in.Tools.Enabled) > 0,
		Faults: r.in.Model.Faults, SummaryFaults: r.in.Model.SummaryFaults,
		// Always: the session's recorded budget (adoptSessionSettings)
		// may set a cap the sender's input does not have.
		SessionUsage: true,
		Tools:        r.in.Tools.Enabled, SystemPrompt: r.in.Agent.SystemPrompt, AppendSystemPrompt: r.in.Agent.AppendSystemPrompt,
	}).Get(ctx, &b)
	if err != nil {
		return fmt.Errorf("start prompt in session %s: %s", r.in.SessionID, rootMessage(err))
	}
	if len(r.in.Model.Faults)+len(r.in.Model.SummaryFaults) > 0 {
		// Kept beside the session now: model calls and the next
		// run's input name them rather than carry them.
		r.FaultsAt = userID
		r.in.Model.Faults, r.in.Model.SummaryFaults = nil, nil
	}
	r.LeafID, r.MessageCount, r.Workspace, r.warnings = b.LeafID, b.MessageCount, b.Workspace, b.Warnings
	r.ToolHost, r.Worktree = b.ToolHost, b.Worktree
	r.ModelQueues = b.ModelQueues
	if b.SessionSpent != nil {
		r.bud.before = *b.SessionSpent
	}
	if err := r.adoptSessionSettings(ctx); err != nil {
		return err
	}
	r.joinApprovalFloor(b.RequireApproval)
	for _, g := range b.Grants { // the session's, at most activities.MaxSessionGrants in all
		r.addGrant(g)
	}
	for _, w := range b.Warnings {
		workflow.GetLogger(ctx).Warn("session file problem", "session", r.in.SessionID, "warning", w)
	}
	r.pendingUser = &agent.Event{Type: agent.EventMessageEnd, EntryID: userID, Message: &user}
	return nil
}

// openTurn emits agent_start (when a new agent run begins: the prompt's
// start, or the continuation after a retry or a compaction), turn_start,
// the user message of the prompt the first time, and the messages
// deliverQueued wrote.
func (r *run) openTurn(ctx workflow.Context) {
	r.startAgent(ctx)
	r.emit(ctx, agent.Event{Type: agent.EventTurnStart, Turn: r.Turn})
	r.emitPendingUser(ctx)
	for _, u := range r.deliveredUsers {
		r.emitMessage(ctx, u)
	}
	r.deliveredUsers = nil
}

// startAgent emits agent_start unless an agent run is open.
func (r *run) startAgent(ctx workflow.Context) {
	if !r.agentRunning {
		r.agentRunning = true
		r.emit(ctx, agent.Event{Type: agent.EventAgentStart})
	}
}

// emitPendingUser emits the prompt's user message, once, and the note of
// adoptSessionSettings.
func (r *run) emitPendingUser(ctx workflow.Context) {
	if u := r.pendingUser; u != nil {
		r.pendingUser = nil
		r.emitMessage(ctx, *u)
		if r.sessionSettingsNote != "" {
			r.emit(ctx, agent.Event{Type: agent.EventSessionSettings, Reason: r.sessionSettingsNote})
		}
	}
}

// emitMessage emits the message_start of end's message, then end (its
// message_end).
func (r *run) emitMessage(ctx workflow.Context, end agent.Event) {
	r.emit(ctx, agent.Event{Type: agent.EventMessageStart, EntryID: end.EntryID, Message: end.Message})
	r.emit(ctx, end)
}

// closeAgent emits agent_end: the agent run stopped (an answer without
// tool calls, an error, an abort). willRetry says another run follows in
// this prompt (SPEC 6 [beyond]).
func (r *run) closeAgent(ctx workflow.Context, willRetry bool, stop agent.StopReason, errMsg string) {
	r.agentRunning = false
	r.emit(ctx, agent.Event{Type: agent.EventAgentEnd, WillRetry: willRetry, StopReason: stop, ErrorMessage: errMsg})
}

// retryAfterBackoff runs SPEC 3 steps 7-11 for a retry decision: the
// usage-limit switch, auto_retry_start, dropping the error from the run
// context (the leaf does not move) and the cancellable durable wait; then
// the retry (stepModel), or the end of a prompt whose wait was cut short.
func (r *run) retryAfterBackoff(ctx workflow.Context, d *retry.Decision, res activities.CallModelResult) step {
	if d.UsageLimit {
		var mark activities.MarkUsageLimitResult
		err := workflow.ExecuteActivity(storeOptions(ctx), activities.MarkUsageLimitReachedName,
			activities.MarkUsageLimitInput{Provider: r.in.Model.Provider, Model: r.in.Model.Name,
				SessionID: r.in.SessionID, RetryAfterMs: d.BlockMs}).Get(ctx, &mark)
		if err != nil {
			workflow.GetLogger(ctx).Warn("mark usage limit reached failed; waiting the normal delay", "error", err.Error())
		} else if mark.Switched {
			d.Switched()
			r.in.Model.Name = cmp.Or(mark.Model, r.in.Model.Name)
		}
	}
	st := d.Start
	metrics.Retry(workflow.GetMetricsHandler(ctx), string(d.Classification.Class), st.Attempt)
	r.emit(ctx, agent.Event{Type: agent.EventAutoRetryStart, Attempt: st.Attempt,
		MaxAttempts: st.MaxAttempts, DelayMs: st.DelayMs, ErrorMessage: st.ErrorMessage})

	if r.waitBackoff(ctx, st) {
		if r.budgetReached() && !r.aborted {
			// budget.maxDurationMs ran out during the wait.
			r.emitRetryEnd(ctx, budgetEnd(r.chain.Cancel(), r.bud.reached))
			return r.stopForBudget(ctx)
		}
		r.emitRetryEnd(ctx, r.chain.Cancel())
		r.advance(res.EntryID) // the last error stays the end of the conversation
		if r.aborted {
			return r.end(r.finishAborted(ctx))
		}
		return r.end(r.failCancelled(ctx, fmt.Sprintf("%s (last error: %s)", retry.CancelledMessage, res.ErrorMessage)))
	}
	return stepModel
}

// waitBackoff waits the retry delay on a durable timer that abort_retry
// and abort cancel. It reports whether the wait was cancelled.
func (r *run) waitBackoff(ctx workflow.Context, st retry.StartEvent) (cancelled bool) {
	if r.aborted {
		return true
	}
	d := time.Duration(st.DelayMs) * time.Millisecond
	tctx, cancel := workflow.WithCancel(ctx)
	r.cancelTimer = cancel
	r.pending = &agent.PendingRetry{Attempt: st.Attempt, MaxAttempts: st.MaxAttempts,
		DelayMs: st.DelayMs, WakeAt: workflow.Now(ctx).Add(d).UTC()}
	summary := fmt.Sprintf("retry %d/%d after %s", st.Attempt, st.MaxAttempts, line.Cut(st.ErrorMessage, 80))
	// The details stay as written for the whole wait, so they say when
	// the retry wakes up rather than a countdown that goes stale.
	// The UI renders details as Markdown: the command is a code span, so
	// its "--" reaches the clipboard as typed, not as an en dash.
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Retry %d/%d waits until %s (%s after the error): %s\n"+
		"Cancel the retry: signal abort_retry (`starter abort-retry --session %s`)",
		st.Attempt, st.MaxAttempts, r.pending.WakeAt.Format(time.RFC3339), agent.FormatDelay(st.DelayMs),
		line.Cut(st.ErrorMessage, 200), r.in.SessionID))
	metrics.Enter(workflow.GetMetricsHandler(ctx), metrics.StateWaitingRetry)
	err := workflow.NewTimerWithOptions(tctx, d, workflow.TimerOptions{Summary: summary}).Get(ctx, nil)
	metrics.RetryWaited(workflow.GetMetricsHandler(ctx), workflow.Now(ctx).Sub(r.pending.WakeAt.Add(-d)))
	r.cancelTimer, r.pending = nil, nil
	cancel()
	if err != nil || ctx.Err() != nil {
		if ctx.Err() != nil { // the workflow itself was cancelled
			r.aborted = true
		}
		return true
	}
	return false
}

// callModel runs the CallModel activity, turning lost workers and
// cancellations into assistant messages (SPEC 7). It emits message_start
// before the call and the authoritative message_end after it.
func (r *run) callModel(ctx workflow.Context) (activities.CallModelResult, *agent.Message, error) {
	entryID := r.newID()
	r.emit(ctx, agent.Event{Type: agent.EventMessageStart, EntryID: entryID,
		Message: &agent.Message{Role: agent.RoleAssistant, Provider: r.in.Model.Provider, Model: r.in.Model.Name}})
	cctx, cancel := workflow.WithCancel(ctx)
	r.cancelCall = cancel
	r.streaming = true
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Calling model %s/%s (turn %d, entry %s)",
		r.in.Model.Provider, r.in.Model.Name, r.Turn, entryID))
	cctx = modelOptions(cctx, r.in, modelCallSummary(r.in.Model, r.Turn, entryID), r.modelQueue(ctx))
	var res activities.CallModelResult
	err := workflow.ExecuteActivity(cctx, activities.CallModelName, activities.CallModelInput{
		SessionID: r.in.SessionID, LeafID: r.LeafID, EntryID: entryID, Model: r.in.Model,
		Tools: r.in.Tools.Enabled, PromptEntryID: r.PromptEntryID, FaultsAt: r.FaultsAt,
	}).Get(ctx, &res)
	r.cancelCall, r.streaming = nil, false
	cancel()
	workflow.SetCurrentDetails(ctx, "")

	if err != nil {
		synthetic, ferr := r.synthesize(ctx, entryID, err)
		if ferr != nil {
			return activities.CallModelResult{}, nil, ferr
		}
		res = synthetic
	}
	view := r.assistantView(res)
	r.emit(ctx, agent.Event{Type: agent.EventMessageEnd, EntryID: res.EntryID, Message: view})
	return res, view, nil
}

// assistantView is the message_end view of an answer: its text, its tool
// calls with their argument previews, and the error fields.
func (r *run) assistantView(res activities.CallModelResult) *agent.Message {
	view := agent.Message{Role: agent.RoleAssistant, StopReason: res.StopReason,
		ErrorMessage: res.ErrorMessage, ErrorStatus: res.ErrorStatus, ErrorType: res.ErrorType,
		Usage: res.Usage, Provider: r.in.Model.Provider, Model: r.in.Model.Name}
	if res.Text != "" {
		view.Content = []agent.ContentBlock{{Type: "text", Text: res.Text}}
	}
	for _, tc := range res.ToolCalls {
		view.Content = append(view.Content, agent.ContentBlock{Type: "toolCall",
			ToolCall: &agent.ToolCall{ID: tc.ID, Name: tc.Name, Arguments: tc.ArgsPreview}})
	}
	return &view
}

// synthesize turns a failed CallModel activity into an assistant message
// and records it in the session (idempotent: if the activity managed to
// write its own message under the same id, that one stays).
func (r *run) synthesize(ctx workflow.Context, entryID string, err error) (activities.CallModelResult, error) {
	res := activities.CallModelResult{EntryID: entryID}
	var fatal string
	if res.StopReason, res.ErrorMessage, fatal = r.modelFailure(ctx, err, "model call"); fatal != "" {
		return res, errors.New(fatal)
	}
	rec, werr := r.record(ctx, entryID, r.LeafID, agent.Message{Role: agent.RoleAssistant, Provider: r.in.Model.Provider,
		Model: r.in.Model.Name, StopReason: res.StopReason, ErrorMessage: res.ErrorMessage})
	if werr != nil {
		return res, werr
	}
	if !rec.Written && rec.Model != nil {
		res.Usage = rec.Model.Usage // an aborted call the provider billed
	}
	if !rec.Written && rec.Model != nil && (res.StopReason != agent.StopReasonAborted || len(rec.Model.ToolCalls) > 0) {
		// The activity wrote its answer before its worker was lost (or
		// before an abort reached it): the session's record stands, and
		// the workflow uses it, so the file and the events agree (the
		// model is not called again). An answer with tool calls that an
		// abort overtook goes on to the tool step, which gives each call
		// its aborted result.
		return *rec.Model, nil
	}
	return res, nil
}

// recordMessage writes msg, stamped now, to a session as entry id after
// parent, unless an entry with its id is there already, and describes the
// entry that stands. It survives a cancelled workflow context so an abort
// never loses what was already decided. It is the RecordEntry local
// activity (session writes are short, idempotent and local to the worker,
// so they need no task of their own).
func recordMessage(ctx workflow.Context, sessionID, id, parent string, msg agent.Message) (activities.RecordEntryResult, error) {
	if ctx.Err() != nil {
		ctx, _ = workflow.NewDisconnectedContext(ctx)
	}
	msg.Timestamp = workflow.Now(ctx).UnixMilli()
	entry := session.Entry{Type: session.TypeMessage, ID: id, ParentID: parent, Timestamp: workflow.Now(ctx).UTC(), Message: &msg}
	var rec activities.RecordEntryResult
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.RecordEntryName,
		activities.RecordEntryInput{SessionID: sessionID, Entry: entry}).Get(ctx, &rec)
	return rec, err
}

// record is recordMessage in the run's session.
func (r *run) record(ctx workflow.Context, id, parent string, msg agent.Message) (activities.RecordEntryResult, error) {
	rec, err := recordMessage(ctx, r.in.SessionID, id, parent, msg)
	if err != nil {
		return rec, fmt.Errorf("write session %s: %s", r.in.SessionID, rootMessage(err))
	}
	return rec, nil
}

// advance makes entryID the end of the run context.
func (r *run) advance(entryID string) {
	r.LeafID = entryID
	r.MessageCount++
}

// closePrompt ends the prompt with status: it hands back the messages
// still queued (reason says why they were not delivered), emits prompt_end
// (with errMsg and its usage, for people and clients) and returns the result, with
// where a --worktree session's branch stands.
func (r *run) closePrompt(ctx workflow.Context, status, errMsg, reason string) PromptResult {
	r.status = status
	r.closeCheckpoint(ctx)
	back := r.handBack(ctx, reason)
	wt := r.branchSummary(ctx)
	spent := r.bud.spent // the figure the budget compared (cache reads and writes too)
	r.emit(ctx, agent.Event{Type: agent.EventPromptEnd, Status: status, ErrorMessage: errMsg,
		Undelivered: agent.UndeliveredTexts(back), UndeliveredMessages: back, Worktree: wt, Usage: &spent})
	// The result gives the prompt's account: usage, turns, tool calls and files changed.
	return PromptResult{Status: status, Error: errMsg, LeafID: r.LeafID, Events: r.seq, LastEvents: r.lastEvents(),
		Undelivered: agent.UndeliveredTexts(back), UndeliveredMessages: back, Worktree: wt,
		Usage: &spent, Turns: r.Turn, ToolCalls: r.ToolCalls, FileChanges: r.FileChanges}
}

func (r *run) complete(ctx workflow.Context, text string) (PromptResult, error) {
	workflow.SetCurrentDetails(ctx, "")
	res := r.closePrompt(ctx, agent.StatusCompleted, "", ReasonPromptEnded)
	res.Text = text
	return res, nil
}

// fail ends a failed prompt.
func (r *run) fail(ctx workflow.Context, msg string) (PromptResult, error) {
	workflow.SetCurrentDetails(ctx, "Failed: "+line.Cut(msg, 200))
	res := r.closePrompt(ctx, agent.StatusFailed, msg, ReasonPromptFailed)
	return res, temporal.NewNonRetryableApplicationError(msg, ErrTypePromptFailed, nil, res)
}

// failCancelled ends a prompt the user stopped with abort_retry: the
// result is a failed prompt ("Retry cancelled ..."), and the run closes
// as Canceled, so the Temporal UI tells it from a real failure.
func (r *run) failCancelled(ctx workflow.Context, msg string) (PromptResult, error) {
	res := r.closePrompt(ctx, agent.StatusFailed, msg, ReasonRetryCancelled)
	workflow.SetCurrentDetails(ctx, "Cancelled by the user: "+line.Cut(msg, 200))
	return res, temporal.NewCanceledError(res)
}

// finishAborted ends an aborted prompt. It closes as Canceled, whether
// cancelled through Temporal (UI, `temporal workflow cancel`) or by the
// abort signal.
func (r *run) finishAborted(ctx workflow.Context) (PromptResult, error) {
	res := r.closePrompt(ctx, agent.StatusAborted, "", ReasonPromptAborted)
	res.Error = "prompt aborted"
	workflow.SetCurrentDetails(ctx, "Aborted by the user")
	return res, temporal.NewCanceledError(res)
}

// modelCallSummary labels a model call in the Temporal Web UI with its
// model and turn (the entry id last), at most maxActivitySummaryBytes,
// cut on a rune boundary with "…".
func modelCallSummary(m activities.ModelRef, turn int, entryID string) string {
	s := fmt.Sprintf("%s/%s · turn %d · %s", m.Provider, m.Name, turn, entryID)
	if len(s) > maxActivitySummaryBytes {
		// A rune the cut splits is invalid UTF-8 and goes.
		s = strings.ToValidUTF8(s[:maxActivitySummaryBytes-len("…")], "") + "…"
	}
	return s
}

// maxActivitySummaryBytes bounds an activity's summary (kept in history).
const maxActivitySummaryBytes = 200
