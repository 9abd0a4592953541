package workflows

import (
	"fmt"
	"hash/fnv"
	"slices"
	"strconv"

	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/retry"
)

// run is the state of one prompt workflow. Queries read it; only the
// workflow's own coroutines write it.
type run struct {
	in PromptInput
	// loop is the state a continued run carries (Carry).
	loop
	// sessionSettingsNote says which of the sender's settings the
	// session's replaced (adoptSessionSettings), until emitted.
	sessionSettingsNote string
	// waitingHost is set while a tool call waits for ToolHost.
	waitingHost string
	settings    retry.Settings
	chain       retry.Chain

	eventLog

	// agentRunning is true between agent_start and agent_end.
	agentRunning bool
	// pendingUser is the user message's message_end, emitted once the
	// first turn has started.
	pendingUser *agent.Event
	// warnings are the session reader's warnings, for the state query.
	warnings []string
	// batch is the answer whose tool calls run next; batchView its
	// message_end view.
	batch     activities.CallModelResult
	batchView *agent.Message
	// lastUsage is the usage of the last answer with tool calls (the
	// threshold check between turns).
	lastUsage *agent.Usage
	// runningTools names the tool calls in flight, for the state query;
	// taskShare is how many task calls of the group being started share
	// the budget left (subagent.go).
	runningTools []string
	taskShare    int
	// ckpt: the workspace's checkpoints (checkpoint.go).
	ckpt checkpoints
	// cancelTools cancels the tool calls in flight (nil when none).
	cancelTools workflow.CancelFunc

	endRes PromptResult
	endErr error

	idPrefix   string
	nextID     int
	status     string
	streaming  bool
	compacting bool
	pending    *agent.PendingRetry
	// manualCompaction: the run is a Compact workflow, whose summary
	// retries emit auto_retry events (changeSummaryRetryEvents).
	manualCompaction bool

	// cancelTimer cancels the pending backoff timer (nil when not waiting);
	// cancelCall cancels the in-flight model call (nil when none).
	cancelTimer workflow.CancelFunc
	cancelCall  workflow.CancelFunc
	aborted     bool

	// steering and followUps are the queued steer and follow_up messages,
	// oldest first (steer.go); queueSeq numbers their ids; queueGone says
	// why an id left the queue (queue.go). answered says the next turn
	// boundary follows an answer, not tool calls (agent.maxTurns does not
	// apply). deliveredUsers are the message_end events of the messages
	// delivered for the next turn.
	steering, followUps []agent.QueuedMessage
	queueSeq            int
	queueGone           map[string]string
	answered            bool
	deliveredUsers      []agent.Event
	// approvals are the calls of the running group that asked for
	// approval (approval.go); decided maps the ids decided in this run to
	// their outcome as approve_tool decided it, or as the wait ended, so
	// a late approve_tool is told what happened.
	approvals []*approval
	decided   map[string]string
	// pol is the approval policy's state (policy.go).
	pol policyState
	// bud is the prompt's usage and budget (budget.go).
	bud budget
}

func newRun(ctx workflow.Context, in PromptInput) *run {
	return &run{
		in:        in,
		settings:  in.Retry,
		status:    agent.StatusRunning,
		idPrefix:  stableIDPrefix(ctx),
		decided:   map[string]string{},
		queueGone: map[string]string{},
	}
}

// stableIDPrefix makes the prefix of a run's entry ids from facts every
// attempt of its first workflow task sees alike (the run id, and its start
// time, since the test environment reuses one run id), so a retried first
// task writes the same ids. Not the workflow id: the SDK's replayer
// replays a history under another one.
func stableIDPrefix(ctx workflow.Context) string {
	info := workflow.GetInfo(ctx)
	h := fnv.New32a()
	_, _ = h.Write([]byte(info.WorkflowExecution.RunID + "\x00" + strconv.FormatInt(info.WorkflowStartTime.UnixNano(), 10)))
	return idChars(info.WorkflowExecution.RunID, 8, "") + fmt.Sprintf("%08x", h.Sum32())
}

// newID returns the next entry id of this prompt run (deterministic),
// its number with at least three digits: 001, 999, 1000, 123456.
func (r *run) newID() string {
	r.nextID++
	return fmt.Sprintf("%s-%03d", r.idPrefix, r.nextID)
}

func (r *run) emitRetryEnd(ctx workflow.Context, end *retry.EndEvent) {
	if end == nil {
		return
	}
	r.emit(ctx, agent.Event{
		Type: agent.EventAutoRetryEnd, Success: end.Success,
		Attempt: end.Attempt, FinalError: end.FinalError,
	})
	workflow.SetCurrentDetails(ctx, "")
}

// state builds the state query's answer, bounded (agent.BoundState).
func (r *run) state() agent.State {
	st := agent.State{
		SessionID:             r.in.SessionID,
		Model:                 r.in.Model.Name,
		Provider:              r.in.Model.Provider,
		Status:                r.status,
		AutoRetryEnabled:      r.settings.Enabled,
		AutoCompactionEnabled: r.in.Compaction.Enabled,
		IsRetrying:            r.chain.Active,
		RetryAttempt:          r.chain.Attempt,
		IsStreaming:           r.streaming,
		IsCompacting:          r.compacting,
		MessageCount:          r.MessageCount,
		LastSeq:               r.seq,
		Turn:                  r.Turn,
		Workspace:             r.Workspace,
		ToolHost:              r.ToolHost,
		WaitingForHost:        r.waitingHost,
		Warnings:              r.warnings,
		PendingMessageCount:   len(r.steering) + len(r.followUps),
		SteeringMode:          queueMode(r.in.Agent.SteeringMode),
		FollowUpMode:          queueMode(r.in.Agent.FollowUpMode),
		PendingApprovals:      r.pendingApprovals(),
		ToolDecisions:         slices.Clone(r.pol.decisions),
		RunningTools:          slices.Clone(r.runningTools),
	}
	if r.pending != nil {
		p := *r.pending
		st.PendingRetry = &p
	}
	if !r.manualCompaction {
		spent := r.bud.spent
		st.Usage, st.Budget = &spent, r.budgetState()
	}
	return agent.BoundState(st) //workflowcheck:ignore deterministic JSON encoding (see emit)
}

// registerHandlers installs the queries (state, events, the queue) and
// the updates (edit_queue: queue.go; approve_tool: approval.go).
func (r *run) registerHandlers(ctx workflow.Context) error {
	if err := r.serveQueries(ctx, r.state); err != nil {
		return err
	}
	if err := workflow.SetQueryHandlerWithOptions(ctx, agent.QueryQueue,
		func() ([]agent.QueuedMessage, error) { return r.queued(), nil },
		workflow.QueryHandlerOptions{Description: "the queued steer and follow_up messages, in delivery order: [{id, kind, text, images, sentAt}]"},
	); err != nil {
		return err
	}
	steer, followUp := workflow.GetSignalChannel(ctx, agent.SignalSteer), workflow.GetSignalChannel(ctx, agent.SignalFollowUp)
	if err := workflow.SetUpdateHandlerWithOptions(ctx, agent.UpdateEditQueue, r.editQueue, workflow.UpdateHandlerOptions{
		Validator:   func(p agent.EditQueuePayload) error { return r.validateQueueEdit(p, steer, followUp) },
		Description: `change the queue: {"action": "edit", "id": "m1", "text": "...", "kind": "steer"|"follow_up"}, {"action": "remove", "id": "m1"} or {"action": "clear"}`,
	}); err != nil {
		return err
	}
	return workflow.SetUpdateHandlerWithOptions(ctx, agent.UpdateApproveTool, r.approveTool, workflow.UpdateHandlerOptions{
		Validator:   r.validateApproval,
		Description: `decide a tool call waiting for approval: {"toolCallId": "...", "approved": true|false, "reason": "...", "scope": "session" (optional: allow the session's later matching calls too)}`,
	})
}

// signalHandlers are the signals the run serves, in the order a drain
// applies them; receive takes one signal of the channel if there is one.
func (r *run) signalHandlers(ctx workflow.Context) []signalHandler {
	bare := func(apply func()) func(workflow.ReceiveChannel) bool {
		return func(c workflow.ReceiveChannel) bool {
			ok := c.ReceiveAsync(nil)
			if ok {
				apply()
			}
			return ok
		}
	}
	hs := []signalHandler{
		{agent.SignalAbortRetry, bare(r.abortRetry)},
		{agent.SignalAbort, bare(r.abort)},
		{agent.SignalSetAutoRetry, func(c workflow.ReceiveChannel) bool {
			// A payload that does not decode is dropped (and logged) by
			// the SDK; one without "enabled" (agent.SetAutoRetryPayload,
			// with a missing field told from false) is ignored here.
			// Neither fails the workflow task.
			var p struct {
				Enabled *bool `json:"enabled"`
			}
			if !c.ReceiveAsync(&p) {
				return false
			}
			if p.Enabled == nil {
				workflow.GetLogger(ctx).Warn(`set_auto_retry ignored: want {"enabled": true|false}`)
			} else {
				r.settings.Enabled = *p.Enabled
			}
			return true
		}},
	}
	for _, name := range []string{agent.SignalSteer, agent.SignalFollowUp} {
		hs = append(hs, signalHandler{name, func(c workflow.ReceiveChannel) bool { return r.receiveMessage(ctx, c, name) }})
	}
	return hs
}

// signalHandler is one signal the run serves.
type signalHandler struct {
	name    string
	receive func(workflow.ReceiveChannel) bool
}

// startSignalPump serves the signals for the whole life of the run, in
// its own workflow coroutine, so a signal is handled while the main
// coroutine waits on a model call, a tool call or a backoff timer.
func (r *run) startSignalPump(ctx workflow.Context) {
	hs := r.signalHandlers(ctx)
	workflow.Go(ctx, func(ctx workflow.Context) {
		for {
			sel := workflow.NewSelector(ctx)
			for _, h := range hs {
				sel.AddReceive(workflow.GetSignalChannel(ctx, h.name), func(c workflow.ReceiveChannel, _ bool) { h.receive(c) })
			}
			sel.Select(ctx)
		}
	})
}

// drainSignals applies the signals still waiting in their channels.
func (r *run) drainSignals(ctx workflow.Context) {
	for _, h := range r.signalHandlers(ctx) {
		for h.receive(workflow.GetSignalChannel(ctx, h.name)) {
		}
	}
}

// abortRetry cancels a pending backoff; outside a wait it does nothing
// (SPEC 5).
func (r *run) abortRetry() {
	if r.cancelTimer != nil {
		r.cancelTimer()
	}
}

// abort cancels the retry first, then the in-flight model call and tool
// calls (SPEC 5).
func (r *run) abort() {
	r.aborted = true
	r.abortRetry()
	if r.cancelCall != nil {
		r.cancelCall()
	}
	if r.cancelTools != nil {
		r.cancelTools()
	}
}
