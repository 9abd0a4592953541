package workflows

import (
	"cmp"
	"errors"
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"go.temporal.io/sdk/temporal"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// Sub-agents (the task tool; docs/spec.md section 17): a task call runs
// the sub-agent's prompt as a child Prompt workflow in a session of its
// own, whose workflow id derives from the parent's session and the call,
// so a replayed or retried start never starts a second child.

// Error results of task calls the prompt does not start.
const (
	SubAgentDepthMessage  = "task refused: this prompt is a sub-agent at depth %d and agent.subagents.maxDepth is %d; do the work yourself"
	SubAgentTotalMessage  = "task refused: this prompt already started %d sub-agents (agent.subagents.maxTotal); do the rest yourself or in fewer tasks"
	SubAgentBudgetMessage = "task refused: the prompt's budget is spent (%s)"
)

// SubAgentSessionID is the session of the sub-agent of a task call: the
// parent's session id, ".task-", the call id, and a hash of the three
// (with the call's result entry, unique in the session even where a
// provider repeats call ids), within the session id limit.
func SubAgentSessionID(parentSession, resultEntryID, toolCallID string) string {
	h := fnv.New32a()
	h.Write([]byte(parentSession + "\x00" + resultEntryID + "\x00" + toolCallID))
	suffix := fmt.Sprintf(".task-%s-%08x", idChars(toolCallID, 24, "_-"), h.Sum32())
	return parentSession[:min(len(parentSession), session.MaxIDLen-len(suffix))] + suffix
}

// SubAgentCall is the task call a sub-agent's prompt runs for, on its
// first run when the calling prompt started it (its parent is the
// caller's prompt): the worker's tracing interceptor makes its span the
// call's (tracing.SubAgentPrompt). ("", "") for any other prompt.
func (in PromptInput) SubAgentCall(parentWorkflowID string) (toolCallID, subAgentSession string) {
	if in.Parent == nil || in.Continued != nil || parentWorkflowID != WorkflowID(in.Parent.SessionID) {
		return "", ""
	}
	return in.Parent.ToolCallID, in.SessionID
}

// runSubAgent runs one task call's step: it reads and checks the call's
// arguments (call is as the RunTool activity gets it), runs the
// sub-agent's prompt (child, less its message, tools and worktree, which
// the arguments give) as a child workflow of the workflow it runs in, and
// writes the parent's tool result: the sub-agent's final answer and its
// account. siblings are the other task calls started with it (in one
// workspace, what changed while one's bash commands ran may be
// another's). Cancelled (the parent aborted), it cancels the sub-agent,
// waits for it to end, writes the aborted result and returns a
// cancellation carrying the call's result.
func runSubAgent(ctx workflow.Context, call activities.RunToolInput, child PromptInput, siblings int) (activities.RunToolResult, error) {
	var t activities.SubAgentTaskResult
	err := workflow.ExecuteLocalActivity(localOptions(ctx), activities.SubAgentTaskName, activities.SubAgentTaskInput{
		SessionID: call.SessionID, AssistantEntryID: call.AssistantEntryID, ToolCallID: call.ToolCallID,
		Enabled: call.Tools.Enabled,
	}).Get(ctx, &t)
	if err != nil {
		return activities.RunToolResult{}, err
	}
	if t.Problem != "" {
		return recordSubAgentResult(ctx, call, t.Problem, true, nil)
	}
	child.Message = t.Task.Prompt
	child.Tools.Enabled = t.Task.Tools
	if child.Parent != nil && child.Parent.Depth >= child.Agent.SubAgents.Limits().MaxDepth {
		// A sub-agent at the depth limit is not offered the task tool.
		child.Tools.Enabled = slices.DeleteFunc(slices.Clone(child.Tools.Enabled), func(n string) bool { return n == tools.Task })
	}
	if t.Task.Worktree {
		child.Worktree = activities.WorktreeRequired
	}
	var res PromptResult
	err = workflow.ExecuteChildWorkflow(subAgentOptions(ctx, child.SessionID, t.Task.Description),
		PromptWorkflowName, child).Get(ctx, &res)
	text, isError := subAgentAnswer(child.SessionID, t.Task.Description, &res, err, siblings)
	out, rerr := recordSubAgentResult(ctx, call, text, isError, res.Usage)
	if rerr != nil {
		return out, rerr
	}
	if !t.Task.Worktree {
		// Changes in the caller's workspace are the caller's too; a
		// worktree's are on the sub-agent's branch (its account says).
		out.Files, out.FilesMore = res.FilesChanged, res.FilesChangedMore
	}
	if ctx.Err() != nil {
		return out, temporal.NewCanceledError(out)
	}
	return out, nil
}

// subAgentAnswer is the parent's tool result of a sub-agent's prompt
// that ended with res or err: its final answer (or why it has none) and
// an account of its work. It fills res from err's details for a prompt
// that failed or was aborted.
func subAgentAnswer(sessionID, description string, res *PromptResult, err error, siblings int) (string, bool) {
	var canceled *temporal.CanceledError
	var appErr *temporal.ApplicationError
	var started *temporal.ChildWorkflowExecutionAlreadyStartedError
	var head string
	switch {
	case err == nil:
		head = res.Text
		if strings.TrimSpace(head) == "" {
			head = "(the sub-agent ended without a text answer)"
		}
	case errors.As(err, &started):
		return fmt.Sprintf("The sub-agent of this call (session %s) was started before and is not started again; "+
			"read its answer with `starter events --session %s`.", sessionID, sessionID), true
	case errors.As(err, &canceled):
		_ = canceled.Details(res) // none: res stays as it is
		head = "The sub-agent was aborted before it answered."
	case errors.As(err, &appErr):
		_ = appErr.Details(res)
		if res.Status == agent.StatusAborted {
			head = "The sub-agent was aborted before it answered."
		} else {
			head = "The sub-agent failed: " + cmp.Or(res.Error, appErr.Message())
		}
	default:
		head = "The sub-agent failed: " + rootMessage(err)
	}
	status := cmp.Or(res.Status, agent.StatusFailed)
	files := filesText("files changed", "by write or edit", res.FilesChanged, res.FilesChangedMore)
	if res.FilesByBash {
		files = filesText("files changed (by write and edit, and in the workspace while its bash commands ran)",
			"by write, edit or while its bash commands ran", res.FilesChanged, res.FilesChangedMore)
		if siblings > 0 {
			files += fmt.Sprintf("; %d other sub-agents started with it may have worked in the same workspace meanwhile, so their changes may be listed here and theirs may list its", siblings)
		}
	}
	if res.FilesBashNote != "" {
		files += "; bash's changes not known: " + res.FilesBashNote
	}
	if w := res.Worktree; w != nil {
		// Its branch knows every change, bash's included.
		files = filesText("files changed on its branch", "on its branch", w.Files, w.FilesMore) + "; " + w.Text
	}
	usage := "unknown"
	if s := res.Usage; s != nil {
		usage = fmt.Sprintf("%d input + %d output tokens", s.Input, s.Output)
		if !s.Unpriced && s.CostUsd > 0 {
			usage += ", " + agent.FormatUsd(s.CostUsd)
		}
	}
	acct := fmt.Sprintf("[sub-agent %q, session %s: %s after %d turns and %d tool calls; usage %s; %s]",
		description, sessionID, status, res.Turns, res.ToolCalls, usage, files)
	return head + "\n\n" + acct, err != nil
}

// filesText says which files a prompt changed, in a few words: "what:
// a, b and 3 more", or "no files changed where".
func filesText(what, where string, files []string, more int) string {
	if len(files) == 0 {
		return "no files changed " + where
	}
	t := what + ": " + strings.Join(files, ", ")
	if more > 0 {
		t += fmt.Sprintf(" and %d more", more)
	}
	return t
}

// recordSubAgentResult writes the task call's result entry in the
// parent's session (even when the workflow is cancelled: the result of
// an aborted call is decided) unless one stands there already, and
// returns the call's result with the sub-agent's usage.
func recordSubAgentResult(ctx workflow.Context, call activities.RunToolInput, text string, isError bool, usage *agent.Spend) (activities.RunToolResult, error) {
	msg := agent.Message{Role: agent.RoleToolResult, ToolCallID: call.ToolCallID, ToolName: call.ToolName,
		IsError: isError, Content: []agent.ContentBlock{{Type: "text", Text: text}}}
	if usage != nil {
		msg.Usage = usage.Usage() // the session's figure counts its sub-agents
	}
	rec, err := recordMessage(ctx, call.SessionID, call.ResultEntryID, call.ParentID, msg)
	if err != nil {
		return activities.RunToolResult{}, fmt.Errorf("write the result of task call %s in session %s: %s", call.ToolCallID, call.SessionID, rootMessage(err))
	}
	preview := line.Cut(text, activities.PreviewChars)
	out := activities.RunToolResult{EntryID: call.ResultEntryID, IsError: isError, Preview: preview,
		Bytes: len(text), Truncated: preview != text}
	if !rec.Written && rec.Tool != nil {
		out = *rec.Tool
	}
	out.Usage = usage
	return out, nil
}

// The parent's side: limits, the sub-agent's input, events and usage.

// parent is the task call this prompt runs for (zero: a prompt a user
// started, at depth 0, with no parent session or host).
func (r *run) parent() SubAgentParent {
	if r.in.Parent == nil {
		return SubAgentParent{}
	}
	return *r.in.Parent
}

// subAgentRefusal is the error result of a task call the prompt may not
// start (agent.subagents.maxDepth, task not enabled, maxTotal, a spent
// budget); "" if it may.
func (r *run) subAgentRefusal() string {
	lim := r.in.Agent.SubAgents.Limits()
	switch {
	case r.parent().Depth >= lim.MaxDepth:
		return fmt.Sprintf(SubAgentDepthMessage, r.parent().Depth, lim.MaxDepth)
	case !slices.Contains(r.in.Tools.Enabled, tools.Task):
		// As RunTool answers a call of a tool that is not enabled.
		return tools.NotEnabled(r.in.Tools.Enabled, tools.Task)
	case r.SubAgents >= lim.MaxTotal:
		return fmt.Sprintf(SubAgentTotalMessage, lim.MaxTotal)
	case r.budgetReached():
		return fmt.Sprintf(SubAgentBudgetMessage, r.bud.reached)
	}
	return ""
}

// subAgentInput is the sub-agent's prompt input of a task call: the
// parent's, less what is the parent's own (its message and images, its
// continued state, its session grants, its fault scripts), in the
// parent's workspace, with what is left of the parent's budget.
func (r *run) subAgentInput(ctx workflow.Context, c *toolCall) PromptInput {
	p := r.in
	p.SessionID = c.subSession
	p.Message, p.Images, p.Continued = "", nil, nil
	p.Workspace, p.Worktree = r.Workspace, ""
	p.Model.Faults, p.Model.SummaryFaults = nil, nil
	p.Approval.Grants = nil
	p.Budget = r.childBudget(ctx)
	p.Parent = &SubAgentParent{SessionID: r.in.SessionID, ToolCallID: c.ref.ID, Depth: r.parent().Depth + 1, ToolHost: r.ToolHost}
	// Delegated work: its model calls give way to interactive prompts'
	// (priority.go).
	p.Origin = OriginDelegated
	return p
}

// tasksStarting is how many task calls of a group start together: those
// not denied, skipped or aborted, at most what agent.subagents.maxTotal
// still allows; at least 1.
func (r *run) tasksStarting(group []*toolCall, skip bool) int {
	n := 0
	for _, c := range group {
		if c.spec.Kind == tools.KindSubAgent && c.denial == "" && !skip && !r.aborted {
			n++
		}
	}
	return max(1, min(n, r.in.Agent.SubAgents.Limits().MaxTotal-r.SubAgents))
}

// childBudget is a sub-agent's prompt budget: its share of what is left
// of the prompt's budget (and of its session's). The tokens and cost left
// are divided among the r.taskShare sub-agents started together, so their
// limits add up to at most what is left (a token limit is at least 1,
// since 0 would lift it); each runs until the rest of
// budget.maxDurationMs. A sub-agent stops at its share, before the parent
// reaches its limit.
func (r *run) childBudget(ctx workflow.Context) agent.BudgetLimits {
	if !r.bud.on {
		return agent.BudgetLimits{}
	}
	lim, spent := r.in.Budget, r.bud.spent
	all := r.bud.before.Plus(spent)
	var out agent.BudgetLimits
	out.MaxTokens = tighter(remaining(lim.MaxTokens, spent.Tokens(), 1), remaining(lim.SessionMaxTokens, all.Tokens(), 1))
	out.MaxCostUsd = tighter(remaining(lim.MaxCostUsd, spent.CostUsd, 0.000001), remaining(lim.SessionMaxCostUsd, all.CostUsd, 0.000001))
	if ms := lim.MaxDurationMs; ms > 0 {
		left := r.bud.startedAt.Add(time.Duration(ms) * time.Millisecond).Sub(workflow.Now(ctx))
		out.MaxDurationMs = max(1, left.Milliseconds())
	}
	if n := r.taskShare; n > 1 && (out.MaxTokens > 0 || out.MaxCostUsd > 0) {
		if out.MaxTokens > 0 {
			out.MaxTokens = max(1, out.MaxTokens/int64(n))
		}
		out.MaxCostUsd /= float64(n)
	}
	return out
}

// remaining is what a limit leaves (0: no limit; at least least otherwise,
// since 0 would lift it).
func remaining[T int64 | float64](limit, spent, least T) T {
	if limit <= 0 {
		return 0
	}
	return max(least, limit-spent)
}

// startSubAgent starts a task call's step and emits subagent_start: in a
// coroutine of the prompt, cancelled with the calls in flight (tctx),
// whose future is the call's.
func (r *run) startSubAgent(ctx, tctx workflow.Context, in activities.RunToolInput, c *toolCall) {
	c.subSession = SubAgentSessionID(r.in.SessionID, c.resultID, c.ref.ID)
	r.SubAgents++
	child, siblings := r.subAgentInput(ctx, c), max(0, r.taskShare-1)
	fut, set := workflow.NewFuture(tctx)
	workflow.Go(tctx, func(gctx workflow.Context) {
		set.Set(runSubAgent(gctx, in, child, siblings))
	})
	c.fut = fut
	r.emit(ctx, agent.Event{Type: agent.EventSubAgentStart, ToolCallID: c.ref.ID, SessionID: c.subSession})
}

// endSubAgent emits subagent_end for a task call that started a
// sub-agent, and counts its usage in the prompt's: the usage and budget
// of the parent include its sub-agents'. err is the call's step's (an
// aborted one carries its result in the cancellation's details).
func (r *run) endSubAgent(ctx workflow.Context, c *toolCall, err error) {
	if c.subSession == "" {
		return
	}
	res := c.res // an aborted call's result is in the cancellation
	var canceled *temporal.CanceledError
	var d activities.RunToolResult
	if errors.As(err, &canceled) && canceled.Details(&d) == nil {
		res = d
	}
	r.addFilesChanged(res.FilesMore, res.Files...)
	r.emit(ctx, agent.Event{Type: agent.EventSubAgentEnd, ToolCallID: c.ref.ID, SessionID: c.subSession,
		IsError: c.res.IsError || err != nil, Usage: res.Usage})
	if res.Usage != nil {
		r.countSpend(ctx, *res.Usage, false)
	}
}

// Files changed (PromptResult.FilesChanged). The workflow knows them from
// its own tool calls, so the list is deterministic: the path argument
// (ToolCallRef.PolicyArg, in history) of each write and edit call whose
// result is not an error, and the lists of its sub-agents in the same
// workspace. In a sub-agent working in its parent's workspace, what
// changed there since the checkpoint of each turn with a bash command, as
// the bash calls' results report it (activities/checkpoint.go; SPEC 17.9). At most
// MaxFilesChanged paths are kept, so history stays flat.

// MaxFilesChanged bounds PromptResult.FilesChanged.
const MaxFilesChanged = 50

// tracksBashFiles says the prompt's bash calls report what changed while
// they ran: a sub-agent's in its parent's workspace, whose account lists
// them (a worktree's branch summary has them anyway).
func (r *run) tracksBashFiles() bool { return r.in.Parent != nil && r.in.Worktree == "" }

// noteBashFiles notes what changed while a bash call ran, as its result
// reports it (activities.RunToolInput.TrackFiles), or why it is not known.
func (r *run) noteBashFiles(c *toolCall, err error) {
	note := c.res.FilesNote
	switch {
	case c.denial != "":
		return
	case err != nil:
		note = "a command was interrupted or failed to report"
	case c.res.Reused:
		note = "a command's result was found stored by a re-run"
	case note == "" && !c.res.FilesTracked:
		note = "a command ran on a worker that does not report them"
	}
	if note != "" {
		if r.FilesBashNote == "" {
			r.FilesBashNote = note
		}
		return
	}
	r.FilesByBash = true
	r.addFilesChanged(c.res.FilesMore, c.res.Files...)
}

// noteFilesChanged notes the file a write or edit call changed.
func (r *run) noteFilesChanged(c *toolCall, err error) {
	if c.ref.Name == tools.Bash && r.tracksBashFiles() {
		r.noteBashFiles(c, err)
		return
	}
	if err != nil || c.denial != "" || c.res.IsError || (c.ref.Name != tools.Write && c.ref.Name != tools.Edit) || c.ref.PolicyArg == "" {
		return
	}
	p := c.ref.PolicyArg
	if c.ref.PolicyArgCut {
		p += "…"
	}
	r.addFilesChanged(0, r.workspacePath(p))
}

// workspacePath is p relative to the workspace when it lies inside it.
func (r *run) workspacePath(p string) string {
	if filepath.IsAbs(p) && r.Workspace != "" {
		if rel, err := filepath.Rel(r.Workspace, p); err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return rel
		}
	}
	return filepath.Clean(p)
}

// addFilesChanged adds paths to the files changed, each once; past
// MaxFilesChanged it counts them in FilesChangedMore, with more (the
// changes a list reported past its own paths).
func (r *run) addFilesChanged(more int, paths ...string) {
	for _, p := range paths {
		switch {
		case slices.Contains(r.FilesChanged, p):
		case len(r.FilesChanged) < MaxFilesChanged:
			r.FilesChanged = append(r.FilesChanged, p)
		default:
			r.FilesChangedMore++
		}
	}
	r.FilesChangedMore += more
}
