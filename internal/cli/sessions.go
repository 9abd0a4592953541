package cli

import (
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

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

const sessionsUsage = "starter sessions [--store S] [--json]"

// lastPromptRunes bounds the last prompt's text in a sessions line.
const lastPromptRunes = 60

var sessionsCmd = Command{
	Name:    "sessions",
	Summary: "list sessions, newest first: status, workspace and branch, last prompt, last activity and usage",
	Run:     runSessions,
}

// sessionSummary is one line of `starter sessions`.
type sessionSummary struct {
	ID string `json:"id"`
	// Status is "running" (a workflow of the session runs), "idle", or
	// "unknown" when Temporal could not be asked.
	Status    string `json:"status"`
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
	for i := range sums {
		sums[i].Status = status(ctx, sums[i].ID)
	}
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

// statusLookup dials Temporal and returns a function that says whether a
// session's workflow runs. When Temporal cannot be reached every status
// is "unknown" and the error says why.
func statusLookup(ctx context.Context, env Env, s settings.Settings) (func(context.Context, string) string, func(), error) {
	unknown := func(context.Context, string) string { return "unknown" }
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	cl, err := client.DialEnv(dctx, s, nil, env.temporalEnv())
	if err != nil {
		return unknown, func() {}, fmt.Errorf("temporal at %s: %w", s.Temporal.Address, err)
	}
	k := &client.Controller{Client: cl, TaskQueue: s.Temporal.TaskQueue}
	return func(ctx context.Context, id string) string {
		status, _, err := k.RunStatus(ctx, id, "")
		switch {
		case err == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
			return "running"
		case err == nil || errors.As(err, new(*serviceerror.NotFound)): // no workflow (never ran one, or its history is gone)
			return "idle"
		}
		return "unknown"
	}, cl.Close, nil
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
