package workflows

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	toolpolicy "github.com/durableagent/durableagent/internal/policy"
	"github.com/durableagent/durableagent/internal/tools"
)

// Tool results the workflow writes itself, when the tool's activity could
// not report one.
const (
	// ToolOutcomeUnknownMessage: a bash command's worker was lost while it
	// ran. bash has one attempt (never run a command twice), so the model
	// is told plainly and decides.
	ToolOutcomeUnknownMessage = "The worker running this command was lost (%s timeout) before the command reported its result: " +
		"the command may or may not have completed. Check its effects before running it again."
	// ToolInterruptedMessage: a bash command's worker shut down while it
	// ran (a graceful stop: the command's process group was killed).
	ToolInterruptedMessage = "The worker running this command shut down while it ran and stopped it: " +
		"the command may or may not have completed. Check its effects before running it again."
	// ToolCutMessage: a bash command's worker cancelled it without an
	// abort (its SDK does when heartbeats fail: a starved worker, the
	// server unreachable).
	ToolCutMessage = "The worker running this command stopped it without an abort (it could not report to the Temporal server) before the command reported its result: " +
		"the command may or may not have completed. Check its effects before running it again."
	// ToolCutOffMessage: another tool's worker stopped it, by a shutdown
	// or without an abort, on every attempt.
	ToolCutOffMessage = "The tool call did not finish: its worker stopped it without an abort on every attempt."
	// ToolLostMessage: another tool's worker was lost on every attempt.
	ToolLostMessage = "The tool call did not finish: its worker was lost (%s timeout) on every attempt."
	// ToolAbortedMessage is the result of a call cancelled by abort.
	ToolAbortedMessage = "Tool call aborted"
	// ToolFailedMessage is the result of a call whose activity failed.
	ToolFailedMessage = "The tool call failed: %s"
)

// Host placement: how long a tool call waits for its host.
const (
	// DefaultHostWait is how long a tool call of a host-placed session
	// waits for its host before the prompt reports it (tools.hostWaitMs).
	DefaultHostWait = 10 * time.Second
	// MaxHostRecheck caps the re-checks of a call waiting for its host:
	// each re-check doubles the last wait up to this (see hostWait).
	MaxHostRecheck = 30 * time.Minute
)

// toolCall is one call of the batch being run.
type toolCall struct {
	ref      activities.ToolCallRef
	spec     tools.Spec
	resultID string
	parentID string
	res      activities.RunToolResult
	fut      workflow.Future
	// waits counts the times the call waited out the host wait unstarted;
	// since is when it was first scheduled.
	waits int
	since time.Time
	// denial is the error result of a call that does not run: denied or
	// not approved in time, or skipped for a steer message.
	denial string
	// policy and why are the approval policy's decision (policy.go);
	// pathRules the rules the tool host applies to the paths it reaches.
	policy, why string
	pathRules   *toolpolicy.PathRules
	// subSession is the session of a task call's sub-agent, once started
	// (subagent.go).
	subSession string
}

// toolStep runs the tool calls of the last answer (docs/spec.md 13.3-13.5):
// consecutive read-only calls in parallel, consecutive task calls up to
// agent.subagents.maxConcurrent at once, any other call alone, in order;
// every call gets its result, in call order, even when aborted or skipped.
func (r *run) toolStep(ctx workflow.Context) step {
	calls := make([]*toolCall, len(r.batch.ToolCalls))
	parent := r.batch.EntryID
	for i, ref := range r.batch.ToolCalls {
		calls[i] = &toolCall{ref: ref, spec: tools.SpecOf(ref.Name), resultID: r.newID(), parentID: parent}
		parent = calls[i].resultID
	}
	r.checkpointTurn(ctx, calls)
	tctx, cancel := workflow.WithCancel(ctx)
	r.cancelTools = cancel
	for i := 0; i < len(calls); {
		j := i + 1
		switch {
		case calls[i].spec.ReadOnly:
			for j < len(calls) && calls[j].spec.ReadOnly {
				j++
			}
		case calls[i].spec.Concurrent:
			for j < len(calls) && calls[j].spec.Concurrent && j-i < r.in.Agent.SubAgents.Limits().MaxConcurrent {
				j++
			}
		}
		r.runGroup(ctx, tctx, calls[i:j])
		i = j
	}
	r.cancelTools = nil
	cancel()

	results := make([]agent.Message, len(calls))
	for i, c := range calls {
		results[i] = toolResultView(c)
	}
	r.LeafID = parent
	r.MessageCount += len(calls)
	r.emit(ctx, agent.Event{Type: agent.EventTurnEnd, Turn: r.Turn, EntryID: r.batch.EntryID,
		Message: r.batchView, ToolResults: results})
	if r.aborted {
		r.closeAgent(ctx, false, agent.StopReasonAborted, "")
		return r.end(r.finishAborted(ctx))
	}
	return stepBoundary
}

// runGroup starts the calls of one group together, then collects their
// results in call order. Calls that need approval wait for it first
// (approval.go); a queued steer message skips the group.
func (r *run) runGroup(ctx, tctx workflow.Context, group []*toolCall) {
	skip := r.steerQueued(ctx)
	if !skip && !r.aborted {
		r.awaitApprovals(ctx, group)
		skip = r.steerQueued(ctx)
	}
	r.taskShare = r.tasksStarting(group, skip)
	names := make([]string, 0, len(group))
	for _, c := range group {
		names = append(names, c.ref.Name+" "+line.Cut(c.ref.Summary, 60))
		r.emit(ctx, agent.Event{Type: agent.EventToolExecutionStart, ToolCallID: c.ref.ID,
			ToolName: c.ref.Name, Args: c.ref.ArgsPreview})
		if skip && c.denial == "" && !r.aborted {
			c.denial = SkippedForSteerMessage
		}
		if c.spec.Kind == tools.KindSubAgent && c.denial == "" && !r.aborted {
			c.denial = r.subAgentRefusal()
		}
		if r.aborted || c.denial != "" {
			continue
		}
		r.startTool(ctx, tctx, c)
		r.runningTools = append(r.runningTools, c.ref.Name+" "+c.ref.ID)
		r.ToolCalls++
	}
	workflow.SetCurrentDetails(ctx, fmt.Sprintf("Running %s (turn %d)", strings.Join(names, ", "), r.Turn))
	for _, c := range group {
		var err error
		switch {
		case c.fut != nil:
			err = r.awaitTool(ctx, tctx, c)
		case c.denial != "":
			r.recordToolError(ctx, c, c.denial)
		default:
			err = temporal.NewCanceledError()
		}
		if err != nil {
			r.recordToolFailure(ctx, c, err)
		}
		r.noteFilesChanged(c, err)
		r.endSubAgent(ctx, c, err)
		if i := slices.Index(r.runningTools, c.ref.Name+" "+c.ref.ID); i >= 0 {
			r.runningTools = slices.Delete(r.runningTools, i, i+1)
		}
		r.emitToolEnd(ctx, c)
	}
	workflow.SetCurrentDetails(ctx, "")
}

// startTool dispatches the call by its tool's spec (tools.Kind): the
// RunTool activity, or a sub-agent (startSubAgent), whose future gives the
// same result. Either ends as a result or as an error that
// recordToolFailure maps.
func (r *run) startTool(ctx, tctx workflow.Context, c *toolCall) {
	if c.since.IsZero() {
		c.since = workflow.Now(tctx)
	}
	in := activities.RunToolInput{
		SessionID: r.in.SessionID, AssistantEntryID: r.batch.EntryID, ToolCallID: c.ref.ID,
		ToolName: c.ref.Name, ResultEntryID: c.resultID, ParentID: c.parentID,
		Workspace: r.Workspace, Tools: r.in.Tools,
		TrackFiles: c.ref.Name == tools.Bash && r.tracksBashFiles(),
		Checkpoint: r.ckpt.id,
		PathRules:  c.pathRules,
	}
	switch c.spec.Kind {
	case tools.KindSubAgent:
		r.startSubAgent(ctx, tctx, in, c)
	default:
		c.fut = workflow.ExecuteActivity(r.toolOptions(tctx, c), activities.RunToolName, in)
	}
}

// awaitTool waits for the call's result. A call of a host-placed session
// that no worker of its host took within the host wait never ran: the
// prompt says it waits for that host and schedules the call again
// (hostWait), for as long as it takes; tools never run elsewhere.
func (r *run) awaitTool(ctx, tctx workflow.Context, c *toolCall) error {
	for {
		err := c.fut.Get(ctx, &c.res)
		var timeoutErr *temporal.TimeoutError
		if err == nil || r.ToolHost == "" || !errors.As(err, &timeoutErr) ||
			timeoutErr.TimeoutType() != enumspb.TIMEOUT_TYPE_SCHEDULE_TO_START || tctx.Err() != nil {
			if r.waitingHost != "" {
				r.waitingHost = ""
				workflow.SetCurrentDetails(ctx, "")
			}
			return err
		}
		if r.waitingHost == "" {
			workflow.GetLogger(ctx).Warn("waiting for workspace host", "host", r.ToolHost, "toolCallId", c.ref.ID)
		}
		r.waitingHost = r.ToolHost
		workflow.SetCurrentDetails(ctx, fmt.Sprintf("Waiting for workspace host %s since %s: %s %s is queued on %s (turn %d)",
			r.ToolHost, c.since.UTC().Format(time.RFC3339), c.ref.Name, c.ref.ID,
			activities.ToolQueue(workflow.GetInfo(ctx).TaskQueueName, r.ToolHost), r.Turn))
		c.waits++
		r.startTool(ctx, tctx, c)
	}
}

// recordToolFailure writes the result of a call whose activity did not
// report one, as cutOf and toolCutText see it, with what the workspace
// changed since the turn's checkpoint when its outcome is unknown; a
// result the activity managed to write first stands (recordToolError).
func (r *run) recordToolFailure(ctx workflow.Context, c *toolCall, err error) {
	cut, detail := cutOf(ctx, err)
	text := toolCutText(cut, detail, c.spec.Attempts == 1)
	if cut != cutAborted && cut != cutFailed && c.spec.Attempts == 1 {
		text += r.checkpointEvidence(ctx, c)
	}
	r.recordToolError(ctx, c, text)
}

// recordToolError writes an error result with text for a call (unless the
// activity wrote the call's result first: that one stands).
func (r *run) recordToolError(ctx workflow.Context, c *toolCall, text string) {
	c.res = activities.RunToolResult{EntryID: c.resultID, IsError: true, Preview: text, Bytes: len(text)}
	rec, werr := r.record(ctx, c.resultID, c.parentID, toolResultView(c))
	switch {
	case werr != nil:
		workflow.GetLogger(ctx).Error("tool result not recorded", "toolCallId", c.ref.ID, "error", werr.Error())
	case !rec.Written && rec.Tool != nil:
		c.res = *rec.Tool
	}
}

// emitToolEnd emits tool_execution_end and the toolResult message's
// message_start/message_end. Events carry the result's preview; the whole
// result is in the session entry (entryId).
func (r *run) emitToolEnd(ctx workflow.Context, c *toolCall) {
	view := toolResultView(c)
	result := &agent.ToolResult{Content: view.Content}
	if c.res.Truncated {
		result.Details = map[string]any{"truncated": true, "bytes": c.res.Bytes, "entryId": c.res.EntryID}
	}
	r.emit(ctx, agent.Event{Type: agent.EventToolExecutionEnd, EntryID: c.res.EntryID, ToolCallID: c.ref.ID,
		ToolName: c.ref.Name, ToolResult: result, IsError: c.res.IsError, Policy: c.policy, Why: c.why})
	r.emitMessage(ctx, agent.Event{Type: agent.EventMessageEnd, EntryID: c.res.EntryID, Message: &view})
}

// toolResultView is the call's toolResult message with its preview as text.
func toolResultView(c *toolCall) agent.Message {
	return agent.Message{Role: agent.RoleToolResult, ToolCallID: c.ref.ID, ToolName: c.ref.Name,
		IsError: c.res.IsError, Content: []agent.ContentBlock{{Type: "text", Text: c.res.Preview}}}
}

// hostWait is the schedule-to-start timeout of a host-placed call's
// re-check after waits timed-out schedules: the first wait doubled per
// re-check, capped at MaxHostRecheck (or at the first wait, if longer).
// Waiting longer costs no latency, and fewer re-checks keep history flat.
func hostWait(first time.Duration, waits int) time.Duration {
	d, limit := first, max(MaxHostRecheck, first)
	for ; waits > 0 && d < limit; waits-- {
		d *= 2
	}
	return min(d, limit)
}

// idChars keeps the first n characters of s that are ASCII letters,
// digits or in extra: an id made of s stays readable and bounded (model
// tool-call ids are printable, but bounded here all the same).
func idChars(s string, n int, extra string) string {
	s = strings.Map(func(c rune) rune {
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.ContainsRune(extra, c) {
			return c
		}
		return -1
	}, s)
	return s[:min(len(s), n)]
}
