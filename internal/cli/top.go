package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

const topUsage = "starter top [--once] [--interval 2s] [--json]"

func runTop(ctx context.Context, env Env, args []string) int {
	c := newFlags("top", env)
	once := c.fs.Bool("once", false, "print the list once and exit (--json implies it)")
	interval := c.fs.Duration("interval", 2*time.Second, "time between two refreshes")
	_ = c.fs.MarkHidden("session")
	if !c.parseArgs(env, args, 0, topUsage) {
		return ExitUsage
	}
	if *interval < 200*time.Millisecond {
		return fail(env, "top", fmt.Errorf("--interval %s is too short: at least 200ms", *interval))
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		clear := isTerminal(env.Stdout) && !*once && !c.json
		for {
			jobs, more, err := k.Jobs(ctx)
			if err != nil {
				if ctx.Err() != nil {
					return ExitOK
				}
				return fail(env, "top", err)
			}
			if c.json {
				if jobs == nil {
					jobs = []client.Job{}
				}
				_ = json.NewEncoder(env.Stdout).Encode(jobs)
				return ExitOK
			}
			if clear {
				fmt.Fprint(env.Stdout, "\x1b[H\x1b[2J")
			}
			writeTop(env.Stdout, k.TaskQueue, jobs, more, time.Now())
			if *once {
				return ExitOK
			}
			select {
			case <-ctx.Done():
				return ExitOK
			case <-time.After(*interval):
			}
			if !clear {
				fmt.Fprintln(env.Stdout)
			}
		}
	})
}

// writeTop prints one refresh of the running prompts.
func writeTop(w io.Writer, queue string, jobs []client.Job, more bool, now time.Time) {
	if len(jobs) == 0 {
		fmt.Fprintf(w, "no running prompts on task queue %s · %s\n", queue, now.Format(time.TimeOnly))
		return
	}
	n := fmt.Sprint(len(jobs))
	if more {
		n = "the first " + n
	}
	rows := topTree(jobs)
	subs, k := "", 0
	for _, j := range jobs {
		if j.ParentSession != "" {
			k++
		}
	}
	if k > 0 {
		subs = fmt.Sprintf(" (%d sub-agents)", k)
		if k == 1 {
			subs = " (1 sub-agent)"
		}
	}
	fmt.Fprintf(w, "%s running prompts%s on task queue %s · %s\n", n, subs, queue, now.Format(time.TimeOnly))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tTURN\tTOOLS\tTOKENS\tCOST\tELAPSED\tMODEL")
	for _, r := range rows {
		j := r.job
		status, turn, tools, tokens, cost := "starting", "-", "-", "-", "-"
		if js := j.Job; js != nil {
			status = jobStatusText(*js, now)
			turn, tools, tokens = fmt.Sprint(js.Turn), fmt.Sprint(js.ToolCalls), fmt.Sprint(js.Tokens)
			cost = fmt.Sprintf("$%.4f", js.CostUsd)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.session(), status, turn, tools, tokens, cost,
			elapsed(now.Sub(j.StartedAt)), cmp.Or(j.Model, "-"))
	}
	_ = tw.Flush()
}

// jobStatusText is a job's status for people: what it does and for how
// long, a backoff with when it fires.
func jobStatusText(js agent.JobStatus, now time.Time) string {
	switch {
	case js.Status == agent.JobBackoff && js.Until != nil:
		return js.Status + " until " + js.Until.Local().Format(time.TimeOnly)
	case !js.Since.IsZero():
		return js.Status + " " + elapsed(now.Sub(js.Since))
	}
	return js.Status
}

// elapsed is d to the second ("1h2m3s"); a clock skew between this
// machine and the server shows as 0s, not a negative time.
func elapsed(d time.Duration) string {
	return max(d, 0).Round(time.Second).String()
}

// topRow is a job in top's list: a sub-agent's prompt is under its
// parent's, depth levels deep.
type topRow struct {
	job   client.Job
	depth int
	// orphan: a sub-agent whose parent's prompt is not in the list.
	orphan bool
}

// session is the row's SESSION column: a sub-agent indented under its
// parent, or naming its parent when that is not listed.
func (r topRow) session() string {
	switch {
	case r.orphan:
		return r.job.SessionID + " (sub-agent of " + r.job.ParentSession + ")"
	case r.depth > 0:
		return strings.Repeat("  ", r.depth-1) + "└ " + r.job.SessionID
	}
	return r.job.SessionID
}

// topTree orders jobs (oldest first) as a tree: each prompt a user
// started, then its sub-agents' prompts under it, theirs under them.
// Parents that are each other's (never made by the product) are listed
// still, each naming its parent.
func topTree(jobs []client.Job) []topRow {
	listed := map[string]bool{}
	for _, j := range jobs {
		listed[j.SessionID] = true
	}
	under := func(j client.Job) bool { return listed[j.ParentSession] && j.ParentSession != j.SessionID }
	children := map[string][]client.Job{}
	for _, j := range jobs {
		if under(j) {
			children[j.ParentSession] = append(children[j.ParentSession], j)
		}
	}
	var out []topRow
	shown := map[string]bool{}
	var add func(r topRow)
	add = func(r topRow) {
		if shown[r.job.SessionID] {
			return
		}
		shown[r.job.SessionID] = true
		out = append(out, r)
		for _, c := range children[r.job.SessionID] {
			add(topRow{job: c, depth: r.depth + 1})
		}
	}
	for _, j := range jobs {
		if !under(j) {
			add(topRow{job: j, orphan: j.ParentSession != ""})
		}
	}
	for _, j := range jobs {
		add(topRow{job: j, orphan: true})
	}
	return out
}
