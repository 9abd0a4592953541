package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/schedule"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/workflows"
)

const scheduleUsage = `starter schedule create --id ID (--cron "0 3 * * *" | --every 6h) [--session-prefix P | --session S]
                         [--overlap skip|buffer-one|allow-all] [--catchup 1h] [--workspace DIR] [--host HOST] [--worktree] [--json] PROMPT
       starter schedule update --id ID [--cron "0 4 * * *" | --every 12h] [--session-prefix P | --session S]
                         [--overlap skip|buffer-one|allow-all] [--catchup 2h] [--worktree[=false]] [--json] [PROMPT]
       starter schedule list [--json]
       starter schedule describe ID [--json]
       starter schedule pause ID [--note TEXT]
       starter schedule unpause ID [--note TEXT]
       starter schedule trigger ID
       starter schedule delete ID`

// runSchedule manages scheduled jobs: Temporal Schedules whose runs start
// a prompt (internal/schedule).
func runSchedule(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		fmt.Fprintf(env.Stderr, "starter schedule: want a subcommand: create, update, list, describe, pause, unpause, trigger or delete\nusage: %s\n", scheduleUsage)
		return ExitUsage
	}
	sub, args := args[0], args[1:]
	name := "schedule " + sub
	c := newFlags(name, env)
	var (
		id, cron, prefix, overlap, note, workspace, host string
		every, catchup                                   time.Duration
		useWorktree                                      bool
	)
	// The arguments besides the flags (parseArgs): create and update take a
	// PROMPT, list none, the others the schedule's id.
	n, want := 1, "one argument: the schedule id (usage: starter "+name+" ID)"
	switch sub {
	case "create":
		n = -1
		c.fs.StringVar(&id, "id", "", "the schedule's id (letters, digits, '.', '_', '-')")
		c.fs.StringVar(&cron, "cron", "", `when it fires, a cron expression ("0 3 * * *": 03:00 UTC daily)`)
		c.fs.DurationVar(&every, "every", 0, "when it fires: at this interval (e.g. 6h)")
		c.fs.StringVar(&prefix, "session-prefix", "", "run each prompt in a fresh session PREFIX-<scheduled time> (default: the schedule's id)")
		c.fs.StringVar(&overlap, "overlap", schedule.DefaultOverlap, "when a run is due while the last still runs: skip, buffer-one or allow-all")
		c.fs.DurationVar(&catchup, "catchup", schedule.DefaultCatchupWindow, "runs missed (server down) are still started within this window")
		c.fs.StringVar(&workspace, "workspace", "", "the directory a new session's tools work in (default: the current directory)")
		c.fs.StringVar(&host, "host", "", "the tool host (a worker's tools.host) the runs' new sessions are created on, chosen and checked now: refused when it lacks the workspace (default: session.host, else a host that has it)")
		c.fs.BoolVar(&useWorktree, "worktree", false, "give each run's session a git worktree of the workspace's repository on a branch agent/<session> (with --session: that session must have one or be new)")
	case "update":
		n = -1
		c.fs.StringVar(&id, "id", "", "the id of the schedule to change")
		c.fs.StringVar(&cron, "cron", "", `fire on this cron expression instead ("0 4 * * *": 04:00 UTC daily)`)
		c.fs.DurationVar(&every, "every", 0, "fire at this interval instead (e.g. 12h)")
		c.fs.StringVar(&prefix, "session-prefix", "", "run each prompt in a fresh session PREFIX-<scheduled time> from now on")
		c.fs.StringVar(&overlap, "overlap", "", "the new overlap policy: skip, buffer-one or allow-all")
		c.fs.DurationVar(&catchup, "catchup", 0, "the new catch-up window (runs missed while the server was down are still started within it)")
		c.fs.BoolVar(&useWorktree, "worktree", false, "turn each run's git worktree on (--worktree) or off (--worktree=false)")
	case "pause", "unpause":
		c.fs.StringVar(&note, "note", "", "why (shown by describe and in the Temporal UI)")
	case "list":
		n, want = 0, ""
	case "describe", "trigger", "delete":
	default:
		fmt.Fprintf(env.Stderr, "starter schedule: unknown subcommand %q (want create, update, list, describe, pause, unpause, trigger or delete)\n", sub)
		return ExitUsage
	}
	if !c.parseArgs(env, args, n, want) {
		return ExitUsage
	}
	if sub == "create" {
		return scheduleCreate(ctx, env, c, schedule.Spec{ID: id, Cron: cron, Every: every, SessionPrefix: prefix,
			Overlap: overlap, CatchupWindow: catchup}, workspace, host, useWorktree)
	}
	if sub == "update" {
		ch := schedule.Change{ID: id, Cron: cron, Every: every, SessionPrefix: prefix, Overlap: overlap, CatchupWindow: catchup}
		if c.fs.Changed("worktree") {
			ch.Worktree = &useWorktree
		}
		return scheduleUpdate(ctx, env, c, ch)
	}
	if c.fs.Changed("session") {
		return fail(env, name, errors.New("--session is a flag of schedule create"))
	}
	id = c.fs.Arg(0)
	if err := schedule.ValidateID(id); err != nil && sub != "list" {
		return fail(env, name, err)
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		m := scheduleManager(k)
		var err error
		switch sub {
		case "list":
			list, err := m.List(ctx)
			if err != nil {
				return fail(env, name, err)
			}
			if c.json {
				printEach(env.Stdout, list)
			} else {
				printSchedules(env.Stdout, list)
			}
			return ExitOK
		case "describe":
			info, err := m.Describe(ctx, id)
			if err != nil {
				return fail(env, name, err)
			}
			printOut(env.Stdout, c.json, info, func(w io.Writer) { printScheduleInfo(w, info) })
			return ExitOK
		case "pause":
			err = m.Pause(ctx, id, cmp.Or(note, "paused with starter schedule pause"))
		case "unpause":
			err = m.Unpause(ctx, id, note)
		case "trigger":
			err = m.Trigger(ctx, id)
		case "delete":
			err = m.Delete(ctx, id)
		}
		if err != nil {
			return fail(env, name, err)
		}
		done := map[string]string{"pause": "paused", "unpause": "unpaused", "trigger": "triggered", "delete": "deleted"}[sub]
		printResult(env, c.json, map[string]any{"success": true, "command": "schedule_" + sub, "id": id}, "schedule "+id+" "+done)
		return ExitOK
	})
}

// scheduleManager manages the schedules through k's connection.
func scheduleManager(k *client.Controller) *schedule.Manager {
	return &schedule.Manager{Client: k.Client, TaskQueue: k.TaskQueue, DataConverter: k.DataConverter}
}

// scheduleCreate builds the prompt as `starter prompt` does (the same
// settings, client.PromptInput, the same placement on a tool host, made
// once, now: docs/cluster.md) and creates the schedule. Bad input is
// refused before Temporal is dialled, but a cron expression: the server
// checks it.
func scheduleCreate(ctx context.Context, env Env, c *common, spec schedule.Spec, workspace, host string, useWorktree bool) int {
	const name = "schedule create"
	msg := strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if msg == "" {
		return fail(env, name, errors.New("missing PROMPT (usage: "+strings.SplitN(scheduleUsage, "\n       ", 2)[0]+")"))
	}
	if err := checkScheduleFlags(c, spec.CatchupWindow, spec.Every); err != nil {
		return fail(env, name, err)
	}
	if c.fs.Changed("session") {
		spec.SessionID = c.session
	} else if spec.SessionPrefix == "" {
		spec.SessionPrefix = spec.ID
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	in := client.PromptInput(s, "", msg)
	if workspace != "" {
		abs, err := filepath.Abs(workspace)
		if err != nil {
			return fail(env, name, fmt.Errorf("--workspace %s: %w", workspace, err))
		}
		in.Workspace = abs
	}
	if spec.SessionID != "" {
		if err := c.checkWorkspace(s, spec.SessionID, in.Workspace); err != nil {
			return fail(env, name, err)
		}
	}
	if useWorktree {
		if err := c.checkWorktree(s, spec.SessionID, in.Workspace); err != nil {
			return fail(env, name, err)
		}
		in.Worktree = activities.WorktreeRequired
	}
	spec.Prompt = in
	if err := spec.Validate(); err != nil {
		return fail(env, name, err)
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		m := scheduleManager(k)
		if err := c.place(ctx, k, s, spec.SessionID, host, &spec.Prompt); err != nil {
			return fail(env, name, err)
		}
		if err := m.Create(ctx, spec); err != nil {
			return fail(env, name, err)
		}
		where := "a fresh session per run: " + spec.SessionPrefix + "-<scheduled time, UTC>"
		if spec.SessionID != "" {
			where = "session " + spec.SessionID
		}
		if spec.Prompt.Host != "" {
			where += ", on tool host " + spec.Prompt.Host
		}
		if useWorktree {
			where += ", in a worktree on branch agent/<session>"
		}
		printResult(env, c.json, map[string]any{"success": true, "command": "schedule_create", "id": spec.ID},
			fmt.Sprintf("schedule %s created: %s, %s (overlap %s, catch-up window %s)", spec.ID, schedule.WhenOf(spec.Cron, spec.Every), where, spec.Overlap, spec.CatchupWindow))
		return ExitOK
	})
}

// checkScheduleFlags refuses what create and update both refuse before
// their own checks: --session with --session-prefix, and a --catchup or
// --every given as zero or less.
func checkScheduleFlags(c *common, catchup, every time.Duration) error {
	switch {
	case c.fs.Changed("session") && c.fs.Changed("session-prefix"):
		return errors.New("give --session or --session-prefix, not both")
	case c.fs.Changed("catchup") && catchup <= 0:
		return fmt.Errorf("invalid --catchup %s: at least %s", catchup, schedule.MinCatchupWindow)
	case c.fs.Changed("every") && every <= 0:
		return fmt.Errorf("invalid --every %s: at least %s", every, schedule.MinEvery)
	}
	return nil
}

// scheduleUpdate changes a schedule (schedule.Manager.Update). Bad input
// is refused before Temporal is dialled; turning the worktree on checks
// the repository as create does.
func scheduleUpdate(ctx context.Context, env Env, c *common, ch schedule.Change) int {
	const name = "schedule update"
	ch.Message = strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if c.fs.Changed("session") {
		ch.SessionID = c.session
	}
	err := checkScheduleFlags(c, ch.CatchupWindow, ch.Every)
	if err == nil && c.fs.Changed("session-prefix") && ch.SessionPrefix == "" {
		err = errors.New("invalid --session-prefix: empty")
	}
	if err == nil {
		err = ch.Validate()
	}
	if err != nil {
		return fail(env, name, err)
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	ch.Check = func(in workflows.ScheduledPromptInput) error {
		if in.Prompt.Worktree == "" {
			return nil
		}
		return c.checkWorktree(s, in.SessionID, in.Prompt.Workspace)
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		m := scheduleManager(k)
		changed, err := m.Update(ctx, ch)
		if err != nil {
			return fail(env, name, err)
		}
		text := "schedule " + ch.ID + " updated: " + strings.Join(changed, "; ")
		if len(changed) == 0 {
			text, changed = "schedule "+ch.ID+" unchanged: it already is so", []string{}
		}
		printResult(env, c.json, map[string]any{"success": true, "command": "schedule_update", "id": ch.ID, "changed": changed}, text)
		return ExitOK
	})
}

// printSchedules is the human form of schedule list, one line each.
func printSchedules(w io.Writer, list []schedule.ListEntry) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no schedules (starter schedule create makes one)")
		return
	}
	for _, e := range list {
		state := "active"
		if e.Paused {
			state = "paused"
		}
		next := "-"
		if e.Next != nil {
			next = e.Next.UTC().Format(time.RFC3339)
		}
		fmt.Fprintf(w, "%-20s %-6s next %-20s %s", e.ID, state, next, e.When)
		if e.Paused && e.Note != "" {
			fmt.Fprintf(w, "  (%s)", e.Note)
		}
		fmt.Fprintln(w)
	}
}

// printScheduleInfo is the human form of schedule describe.
func printScheduleInfo(w io.Writer, info schedule.Info) {
	state := "active"
	if info.Paused {
		state = "paused"
		if info.Note != "" {
			state += ": " + info.Note
		}
	}
	fmt.Fprintf(w, "schedule %s (%s)\n", info.ID, state)
	fmt.Fprintf(w, "when: %s  overlap: %s  catch-up window: %s\n", info.When, info.Overlap, info.CatchupWindow)
	switch {
	case info.SessionID != "":
		fmt.Fprintf(w, "session: %s (every run)\n", info.SessionID)
	case info.SessionPrefix != "":
		fmt.Fprintf(w, "session: a fresh one per run, %s-<scheduled time, UTC>\n", info.SessionPrefix)
	}
	if info.Worktree {
		fmt.Fprintln(w, "worktree: each session works in a git worktree on branch agent/<session>")
	}
	if info.Prompt != "" {
		fmt.Fprintf(w, "prompt: %s\n", line.Preview(info.Prompt, 120))
	}
	fmt.Fprintf(w, "runs: %d started, %d skipped (a run was still going), %d missed (older than the catch-up window)\n",
		info.Actions, info.SkippedOverlap, info.MissedCatchup)
	for _, r := range info.Running {
		fmt.Fprintf(w, "running: %s\n", r)
	}
	for _, r := range info.Recent {
		fmt.Fprintf(w, "recent: %s  %-9s %s", r.ScheduledAt.UTC().Format(time.RFC3339), cmp.Or(r.Status, "-"), r.WorkflowID)
		if r.SessionID != "" {
			fmt.Fprintf(w, "  session %s", r.SessionID)
		}
		fmt.Fprintln(w)
	}
	var next []string
	for _, t := range info.Next[:min(len(info.Next), 3)] {
		next = append(next, t.UTC().Format(time.RFC3339))
	}
	if len(next) > 0 {
		fmt.Fprintf(w, "next: %s\n", strings.Join(next, ", "))
	}
}
