package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"sort"
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

const sessionsUsage = "starter sessions [--store S] [--failed | --running] [--json]"

// lastPromptRunes bounds the last prompt's text in a sessions line.
const lastPromptRunes = 60

var sessionsCmd = Command{
	Name:    "sessions",
	Summary: "list sessions, newest first: how the last job ended (or what it waits for), workspace and branch, last prompt, last activity and usage",
	Run:     runSessions,
}

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
	store := c.fs.String("store", "", "session store: jsonl or postgres (default: session.store)")
	failed := c.fs.Bool("failed", false, "only sessions whose last job failed (budget stops included)")
	running := c.fs.Bool("running", false, "only sessions with a running job (waiting for approval included)")
	_ = c.fs.MarkHidden("session")
	if !c.parseNoArgs(env, args, sessionsUsage) {
		return ExitUsage
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	sums, err := summarize(s, *store)
	if err != nil {
		return fail(env, "sessions", err)
	}
	status, closeFn, err := statusLookup(ctx, env, s)
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter sessions: status unknown: %s\n", line.First(err.Error()))
	}
	defer closeFn()
	kept := sums[:0]
	for _, sum := range sums {
		sum.Status, sum.Error = status(ctx, sum.ID)
		switch {
		case *failed && sum.Status != agent.StatusFailed && sum.Status != statusBudgetStop,
			*running && sum.Status != agent.StatusRunning && sum.Status != statusApproval:
			continue
		}
		kept = append(kept, sum)
	}
	sums = kept
	if c.json {
		enc := json.NewEncoder(env.Stdout)
		for _, sum := range sums {
			_ = enc.Encode(sum)
		}
		return ExitOK
	}
	printSessions(env.Stdout, sums, time.Now())
	return ExitOK
}

// summarize reads every session of the store and returns their
// summaries, newest activity first (Status not set).
func summarize(s settings.Settings, kind string) ([]sessionSummary, error) {
	st, _, err := openStore(s, kind)
	if err != nil {
		return nil, err
	}
	if c, ok := st.(interface{ Close() }); ok {
		defer c.Close()
	}
	ids, err := st.List()
	if err != nil {
		return nil, err
	}
	sums := make([]sessionSummary, 0, len(ids))
	for _, id := range ids {
		sess, err := st.Load(id)
		if err != nil {
			// One unreadable session does not hide the others.
			sums = append(sums, sessionSummary{ID: id, LastPrompt: "(unreadable: " + line.Preview(err.Error(), lastPromptRunes) + ")"})
			continue
		}
		sums = append(sums, summaryOf(sess))
	}
	sort.SliceStable(sums, func(i, j int) bool {
		if !sums[i].LastActivity.Equal(sums[j].LastActivity) {
			return sums[i].LastActivity.After(sums[j].LastActivity)
		}
		return sums[i].ID < sums[j].ID
	})
	return sums, nil
}

// summaryOf is a session's summary: its workspace, the text of its last
// user message on one bounded line, its last entry's time and the usage
// its assistant messages reported.
func summaryOf(sess *session.Session) sessionSummary {
	sum := sessionSummary{ID: sess.Header.ID, Workspace: sess.Header.Cwd, LastActivity: sess.Header.Timestamp, ParentSession: sess.Header.ParentSession}
	if wt := sess.Header.Worktree; wt != nil {
		sum.Branch = wt.Branch
		if rel, err := filepath.Rel(wt.Dir, sess.Header.Cwd); err == nil && wt.Repo != "" && !strings.HasPrefix(rel, "..") {
			sum.from = filepath.Join(wt.Repo, rel)
		}
	}
	var spend agent.Spend
	metered := false
	for _, e := range sess.Entries {
		if e.Timestamp.After(sum.LastActivity) {
			sum.LastActivity = e.Timestamp
		}
		m := e.Message
		if m == nil {
			continue
		}
		if m.Role == agent.RoleUser {
			if text := strings.TrimSpace(m.Text()); text != "" {
				sum.LastPrompt = line.Preview(text, lastPromptRunes)
			}
		}
		if m.Role == agent.RoleAssistant && m.Usage != nil {
			spend.AddSpent(m)
			metered = true
		}
	}
	if metered {
		sum.Usage = &spend
	}
	return sum
}

// Statuses of `starter sessions` besides the prompt's own.
const (
	statusApproval   = "waiting for approval"
	statusBudgetStop = "budget stop"
)

// statusLookup dials Temporal and returns a function that says how a
// session's last job ended or what it does, with a failed one's error.
// When Temporal cannot be reached every status is "unknown" and the
// error says why.
func statusLookup(ctx context.Context, env Env, s settings.Settings) (func(context.Context, string) (string, string), func(), error) {
	unknown := func(context.Context, string) (string, string) { return "unknown", "" }
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := client.DialEnv(dctx, s, nil, env.temporalEnv())
	if err != nil {
		return unknown, func() {}, fmt.Errorf("temporal at %s: %w", s.Temporal.Address, err)
	}
	k, err := client.NewController(cl, s)
	if err != nil {
		cl.Close()
		return unknown, func() {}, err
	}
	return func(ctx context.Context, id string) (string, string) { return jobOutcome(ctx, k, id) }, cl.Close, nil
}

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
	if budgetStop(res.Error) {
		return statusBudgetStop, line.First(res.Error)
	}
	return agent.StatusFailed, line.First(err.Error())
}

// budgetStop says whether a failed prompt's error is a budget stop's
// ("budget.maxTokens 1 reached: ...", workflows/budget.go).
func budgetStop(msg string) bool {
	limit, _, ok := strings.Cut(msg, " ")
	return ok && strings.HasPrefix(limit, "budget.") && strings.Contains(msg, " reached")
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
		ws := s.Workspace
		if ws == "" {
			ws = "-"
		}
		if s.Branch != "" {
			ws += " [" + s.Branch + "]"
		}
		prompt := "-"
		if s.LastPrompt != "" {
			prompt = fmt.Sprintf("%q", s.LastPrompt)
		}
		status := s.Status
		if s.Error != "" {
			status += " (" + line.Preview(s.Error, lastPromptRunes) + ")"
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
