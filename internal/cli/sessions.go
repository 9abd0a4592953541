package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/serviceerror"
	"go.temporal.io/sdk/converter"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

const sessionsUsage = "starter sessions [--failed | --running] [--json]"

// sessionSummary is one line of `starter sessions`.
type sessionSummary struct {
	ID string `json:"id"`
	// Status is how the session's last job ended or what it does:
	// "running", "waiting for approval", "completed", "failed", "budget
	// stop", "aborted" (or Temporal's name of another close: "terminated",
	// "timed_out"); "idle" when no prompt of it is known to Temporal,
	// "unknown" when Temporal could not be asked.
	Status string `json:"status"`
	// Error is the first line of a failed job's error (a budget stop's
	// names the limit).
	Error     string `json:"error,omitempty"`
	Workspace string `json:"workspace"`
	// Branch is the branch of the session's git worktree ("" without one).
	Branch string `json:"branch,omitempty"`
	// ParentSession is the session whose task call started this one (a
	// sub-agent's session; "" for a session a person started).
	ParentSession string    `json:"parentSession,omitempty"`
	LastPrompt    string    `json:"lastPrompt"`
	LastActivity  time.Time `json:"lastActivity"`
	// Usage is what the session's model calls reported (nil: none did).
	Usage *agent.Spend `json:"usage,omitempty"`
	// from is the directory a worktree session was started in (its
	// workspace's place in the repository the worktree was made from):
	// --continue there finds it. "" without a worktree.
	from string
}

func runSessions(ctx context.Context, env Env, args []string) int {
	c := newFlags("sessions", env)
	failed := c.fs.Bool("failed", false, "only sessions whose last job failed (budget stops included)")
	running := c.fs.Bool("running", false, "only sessions with a running job (waiting for approval included)")
	_ = c.fs.MarkHidden("session")
	if !c.parseArgs(env, args, 0, sessionsUsage) {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		all, err := k.SessionSummaries(ctx)
		if err != nil {
			return fail(env, "sessions", err)
		}
		sums := sessionLines(all)
		kept := sums[:0]
		for _, sum := range sums {
			sum.Status, sum.Error = jobOutcome(ctx, k, sum.ID)
			switch {
			case *failed && sum.Status != agent.StatusFailed && sum.Status != statusBudgetStop,
				*running && sum.Status != agent.StatusRunning && sum.Status != statusApproval:
				continue
			}
			kept = append(kept, sum)
		}
		if c.json {
			printEach(env.Stdout, kept)
		} else {
			printSessions(env.Stdout, kept, time.Now())
		}
		return ExitOK
	})
}

// sessionLines are the lines of the summaries of the workers' store,
// newest activity first (Status not set).
func sessionLines(all []session.Summary) []sessionSummary {
	sums := make([]sessionSummary, 0, len(all))
	for _, sum := range all {
		if sum.Unreadable != "" {
			// One unreadable session does not hide the others.
			sums = append(sums, sessionSummary{ID: sum.Header.ID, LastPrompt: "(unreadable: " + line.Preview(sum.Unreadable, session.SummaryPromptRunes) + ")"})
			continue
		}
		sums = append(sums, summaryOf(sum))
	}
	slices.SortStableFunc(sums, func(a, b sessionSummary) int {
		return cmp.Or(b.LastActivity.Compare(a.LastActivity), strings.Compare(a.ID, b.ID))
	})
	return sums
}

// summaryOf is a session's line: its workspace (and worktree), the text
// of its last user message, its last entry's time and its usage.
func summaryOf(sum session.Summary) sessionSummary {
	h := sum.Header
	out := sessionSummary{ID: h.ID, Workspace: h.Cwd, LastActivity: sum.LastActivity, ParentSession: h.ParentSession,
		LastPrompt: sum.LastPrompt, Usage: sum.Usage}
	if wt := h.Worktree; wt != nil {
		out.Branch = wt.Branch
		if rel, err := filepath.Rel(wt.Dir, h.Cwd); err == nil && wt.Repo != "" && !strings.HasPrefix(rel, "..") {
			out.from = filepath.Join(wt.Repo, rel)
		}
	}
	return out
}

// Statuses of `starter sessions` besides the prompt's own.
const (
	statusApproval   = "waiting for approval"
	statusBudgetStop = "budget stop"
)

// jobOutcome is the status of session id's latest workflow run: what a
// running prompt does (its memo, as starter top reads it), how a closed
// one ended (its result); a session workflow that is not a prompt
// (compact, bash) shows as running or idle.
func jobOutcome(ctx context.Context, k *client.Controller, id string) (status, errLine string) {
	d, err := k.Client.DescribeWorkflowExecution(ctx, workflows.WorkflowID(id), "")
	if errors.As(err, new(*serviceerror.NotFound)) { // never ran one, or its history is gone
		return "idle", ""
	}
	if err != nil {
		return "unknown", ""
	}
	info := d.GetWorkflowExecutionInfo()
	st := info.GetStatus()
	switch {
	case st == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		dc, js := cmp.Or(k.DataConverter, converter.GetDefaultDataConverter()), agent.JobStatus{}
		if p := info.GetMemo().GetFields()[agent.MemoJob]; p != nil && dc.FromPayload(p, &js) == nil && js.Status == agent.JobApproval {
			return statusApproval, ""
		}
		return agent.StatusRunning, ""
	case info.GetType().GetName() != workflows.PromptWorkflowName:
		return "idle", ""
	case st == enumspb.WORKFLOW_EXECUTION_STATUS_CANCELED: // abort, abort_retry, a cancel in the Temporal UI
		return agent.StatusAborted, ""
	case st != enumspb.WORKFLOW_EXECUTION_STATUS_FAILED: // completed, terminated, timed_out
		return client.StatusName(st), ""
	}
	res, err := client.Result(ctx, k.Client.GetWorkflow(ctx, workflows.WorkflowID(id), info.GetExecution().GetRunId()))
	// A budget stop's error is "budget.maxTokens 1 reached: ..." (workflows/budget.go).
	if limit, _, ok := strings.Cut(res.Error, " "); ok && strings.HasPrefix(limit, "budget.") && strings.Contains(res.Error, " reached") {
		return statusBudgetStop, line.First(res.Error)
	}
	return agent.StatusFailed, line.First(err.Error())
}

// printSessions writes one line per session: id, status (naming the
// parent of a sub-agent's session), last activity, usage, workspace (with
// its worktree's branch in brackets) and last prompt.
func printSessions(w io.Writer, sums []sessionSummary, now time.Time) {
	if len(sums) == 0 {
		fmt.Fprintln(w, "no sessions yet (starter prompt MESSAGE starts one)")
		return
	}
	for _, s := range sums {
		usage := "-"
		if u := s.Usage; u != nil {
			usage = fmt.Sprintf("%d tokens", u.Tokens())
			if !u.Unpriced && u.CostUsd > 0 {
				usage += " $" + agent.FormatUsd(u.CostUsd)
			}
		}
		ws := cmp.Or(s.Workspace, "-")
		if s.Branch != "" {
			ws += " [" + s.Branch + "]"
		}
		prompt := "-"
		if s.LastPrompt != "" {
			prompt = fmt.Sprintf("%q", s.LastPrompt)
		}
		status := s.Status
		if s.Error != "" {
			status += " (" + line.Preview(s.Error, session.SummaryPromptRunes) + ")"
		}
		if s.ParentSession != "" {
			status += " (sub-agent of " + s.ParentSession + ")"
		}
		fmt.Fprintf(w, "%s  %s  %s  %s  %s  %s\n", s.ID, status, activity(s.LastActivity, now), usage, ws, prompt)
	}
}

// activity is a last activity time as people read it: local time, with
// the date when it is not today.
func activity(t time.Time, now time.Time) string {
	t, now = t.Local(), now.Local()
	if t.Year() == now.Year() && t.YearDay() == now.YearDay() {
		return t.Format("15:04:05")
	}
	return t.Format("2006-01-02 15:04")
}
