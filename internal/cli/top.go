package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/control"
)

const topUsage = "starter top [--once] [--interval 2s] [--json]"

var topCmd = Command{
	Name:    "top",
	Usage:   topUsage,
	Summary: "the running prompts of this task queue: what each does now (model call, tools, backoff until T, approval), turn, tool calls, usage, elapsed; refreshing",
	Run:     runTop,
}

func runTop(ctx context.Context, env Env, args []string) int {
	c := newFlags("top", env)
	once := c.fs.Bool("once", false, "print the list once and exit (--json implies it)")
	interval := c.fs.Duration("interval", 2*time.Second, "time between two refreshes")
	_ = c.fs.MarkHidden("session")
	if !c.parse(env, args) {
		return ExitUsage
	}
	if c.fs.NArg() > 0 {
		return fail(env, "top", fmt.Errorf("unexpected argument %q (usage: %s)", c.fs.Arg(0), topUsage))
	}
	if *interval < 200*time.Millisecond {
		return fail(env, "top", fmt.Errorf("--interval %s is too short: at least 200ms", *interval))
	}
	k, _, closeFn, ok := c.controller(ctx, env)
	if !ok {
		return ExitUsage
	}
	defer closeFn()
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
				jobs = []control.Job{}
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
}

// writeTop prints one refresh of the running prompts.
func writeTop(w io.Writer, queue string, jobs []control.Job, more bool, now time.Time) {
	if len(jobs) == 0 {
		fmt.Fprintf(w, "no running prompts on task queue %s · %s\n", queue, now.Format(time.TimeOnly))
		return
	}
	n := fmt.Sprint(len(jobs))
	if more {
		n = "the first " + n
	}
	fmt.Fprintf(w, "%s running prompts on task queue %s · %s\n", n, queue, now.Format(time.TimeOnly))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SESSION\tSTATUS\tTURN\tTOOLS\tTOKENS\tCOST\tELAPSED\tMODEL")
	for _, j := range jobs {
		status, turn, tools, tokens, cost := "starting", "-", "-", "-", "-"
		if js := j.Job; js != nil {
			status = jobStatusText(*js, now)
			turn, tools, tokens = fmt.Sprint(js.Turn), fmt.Sprint(js.ToolCalls), fmt.Sprint(js.Tokens)
			cost = fmt.Sprintf("$%.4f", js.CostUsd)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", j.SessionID, status, turn, tools, tokens, cost,
			elapsed(now.Sub(j.StartedAt)), j.Model)
	}
	_ = tw.Flush()
}

// jobStatusText is a job's status for people: what it does and for how
// long, a backoff with when it fires.
func jobStatusText(js agent.JobStatus, now time.Time) string {
	var b strings.Builder
	b.WriteString(js.Status)
	if js.Status == agent.JobBackoff && js.Until != nil {
		fmt.Fprintf(&b, " until %s", js.Until.Local().Format(time.TimeOnly))
	} else if !js.Since.IsZero() {
		fmt.Fprintf(&b, " %s", elapsed(now.Sub(js.Since)))
	}
	return b.String()
}

// elapsed is d to the second ("1h2m3s"); a clock skew between this
// machine and the server shows as 0s, not a negative time.
func elapsed(d time.Duration) string {
	return max(d, 0).Round(time.Second).String()
}
