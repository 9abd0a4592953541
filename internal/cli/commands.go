package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/activities"
	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/llm/scripted"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/toolview"
	"github.com/durableagent/durableagent/workflows"
)

const promptUsage = "starter prompt [--session ID | -c] [--workspace DIR] [--host HOST] [--worktree] [--fault TEXT]... [--detach] [--full] [--json] MESSAGE"

func runPrompt(ctx context.Context, env Env, args []string) int {
	c := newFlags("prompt", env)
	faults := c.fs.StringArray("fault", nil, "scripted model: inject this error before answering (repeatable; e.g. \"503 Service Unavailable\", \"overflow\", \"hang:30s\")")
	detach := c.fs.Bool("detach", false, "start the prompt and return at once (it keeps running in Temporal)")
	full := c.fs.Bool("full", false, "print each tool result whole, read through the workers (with --json: in the event), as events --full does")
	useWorktree := c.fs.Bool("worktree", false, "give the new session a git worktree of the workspace's repository on a branch agent/<session> (session.worktree; an existing session without one is an error)")
	ws := c.addWorkspaceFlags()
	if !c.parse(env, args) {
		return ExitUsage
	}
	msg := strings.TrimSpace(strings.Join(c.fs.Args(), " "))
	if msg == "" {
		return fail(env, "prompt", errors.New("missing MESSAGE (usage: "+promptUsage+")"))
	}
	if err := scripted.ValidateScript(*faults); err != nil {
		return fail(env, "prompt", err)
	}
	if s, ok := c.settings(env); !ok {
		return ExitUsage
	} else if err := ws.resolve(c, s); err != nil {
		return fail(env, "prompt", err)
	} else if *useWorktree {
		if err := c.checkWorktree(s, c.session, ws.workspace); err != nil {
			return fail(env, "prompt", err)
		}
	}
	return c.dialed(ctx, func(k *client.Controller, s settings.Settings) int {
		ctx, span := c.span(ctx, env, "prompt "+c.session)
		defer span.End() // before closeFn, which flushes it
		in := client.PromptInput(s, c.session, msg)
		in.Workspace = ws.workspace
		if *useWorktree {
			in.Worktree = activities.WorktreeRequired
		}
		if len(*faults) > 0 {
			in.Model.Faults = *faults
		}
		id := c.session
		if ws.fresh {
			id = ""
		}
		if err := c.place(ctx, k, s, id, ws.host, &in); err != nil {
			return fail(env, "prompt", err)
		}
		run, err := k.StartPrompt(ctx, in)
		if err != nil {
			return fail(env, "prompt", err)
		}
		if !c.json {
			if ws.fresh {
				fmt.Fprintf(env.Stderr, "new session %s in %s (continue it here: starter prompt -c MESSAGE)\n", c.session, ws.workspace)
			}
			fmt.Fprintf(env.Stderr, "prompt started: workflow %s run %s\n", run.GetID(), run.GetRunID())
		}
		if *detach {
			if c.json {
				_ = json.NewEncoder(env.Stdout).Encode(map[string]string{"workflowId": run.GetID(), "runId": run.GetRunID(), "sessionId": c.session})
			}
			return ExitOK
		}
		p := newPrinter(env.Stdout, c.json, c.session)
		p.body, p.skipFirstUser, p.full = storeBodies(k, c.session), true, *full
		return follow(ctx, env, "prompt", k, p, run.GetRunID(), 0)
	})
}

// FollowPrompt prints the events of a prompt until it ends (then the
// answer) and returns the exit code of its outcome.
func FollowPrompt(ctx context.Context, env Env, k *client.Controller, sessionID, runID string, asJSON bool) int {
	p := newPrinter(env.Stdout, asJSON, sessionID)
	p.skipFirstUser = true
	return follow(ctx, env, "prompt", k, p, runID, 0)
}

// follow prints the events of p's session's prompt with p until it ends
// and returns the exit code of its outcome.
func follow(ctx context.Context, env Env, cmd string, k *client.Controller, p *printer, runID string, after int64) int {
	sessionID := p.session
	defer p.stopCountdown()
	end, err := k.Follow(ctx, sessionID, runID, after, p.print)
	if err != nil {
		if ctx.Err() != nil {
			fmt.Fprintf(env.Stderr, "starter: stopped following; %s\n", stillRuns(k, sessionID))
			return ExitFailed
		}
		if errors.Is(err, client.ErrPromptClosed) { // terminated, timed out, ...: the prompt ended unfinished
			fmt.Fprintf(env.Stderr, "starter %s: %s\n", cmd, line.First(err.Error()))
			return ExitFailed
		}
		return fail(env, cmd, err)
	}
	p.stopCountdown()
	p.ended(env, end)
	if wt := end.Worktree; wt != nil && !p.json {
		// Where a --worktree job's branch stands (its prompt_end, which
		// --json prints whole).
		fmt.Fprintln(env.Stdout, wt.Text)
	}
	if end.Status != agent.StatusCompleted {
		return ExitFailed
	}
	return ExitOK
}

// ended prints, after a prompt_end, the answer when it did not stream
// and the messages the prompt did not deliver.
func (p *printer) ended(env Env, end agent.Event) {
	printUndelivered(env.Stderr, end)
	if end.Status == agent.StatusCompleted && !p.json && p.lastText != "" && !p.lastStreamed {
		fmt.Fprintln(env.Stdout, p.lastText)
	}
}

// printUndelivered writes one line per message the ended prompt accepted
// and did not deliver (a steer or follow_up queued when it failed, was
// aborted or its retry was cancelled), with its kind and the reason, so
// the user can send it again; line breaks in a message show as ⏎ (the
// prompt_end of --json output has the exact texts).
func printUndelivered(w io.Writer, end agent.Event) {
	for _, m := range end.UndeliveredMessages {
		kind := "steer"
		if m.Kind == agent.SignalFollowUp {
			kind = "follow-up"
		}
		text := strings.ReplaceAll(strings.ReplaceAll(m.Text, "\r\n", "\n"), "\n", " ⏎ ")
		fmt.Fprintf(w, "not delivered (%s, %s): %s\n", kind, m.Reason, text)
	}
}

// stillRuns says, after the user stopped following, whether the prompt
// keeps running in Temporal (asked afresh: it may have been terminated).
func stillRuns(k *client.Controller, sessionID string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	status, run, err := k.RunStatus(ctx, sessionID, "") // the latest run: a continued prompt goes on in it
	switch {
	case err == nil && status == enumspb.WORKFLOW_EXECUTION_STATUS_COMPLETED:
		return fmt.Sprintf("the prompt has ended (starter events --session %s)", sessionID)
	case err == nil && status != enumspb.WORKFLOW_EXECUTION_STATUS_RUNNING:
		return (&client.PromptClosedError{SessionID: sessionID, WorkflowID: workflows.WorkflowID(sessionID), RunID: run, Status: status}).Error()
	}
	return fmt.Sprintf("the prompt keeps running in Temporal (starter events --session %s --follow)", sessionID)
}

func runAbortRetry(ctx context.Context, env Env, args []string) int {
	c := newFlags("abort-retry", env)
	if !c.parseArgs(env, args, 0, "") {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		if err := k.AbortRetry(ctx, c.session); err != nil {
			return fail(env, "abort-retry", err)
		}
		printResult(env, c.json, map[string]any{"success": true, "command": "abort-retry", "sessionId": c.session}, "sent abort_retry to session "+c.session)
		return ExitOK
	})
}

func runSetAutoRetry(ctx context.Context, env Env, args []string) int {
	c := newFlags("set-auto-retry", env)
	if !c.parseArgs(env, args, 1, "one argument: on or off") {
		return ExitUsage
	}
	enabled, known := map[string]bool{"on": true, "true": true, "yes": true, "1": true,
		"off": false, "false": false, "no": false, "0": false}[strings.ToLower(c.fs.Arg(0))]
	if !known {
		return fail(env, "set-auto-retry", fmt.Errorf("argument %q is not on or off", c.fs.Arg(0)))
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	if err := settings.SetBool(s.File(), "retry.enabled", enabled); err != nil {
		return fail(env, "set-auto-retry", err)
	}
	running := "no running prompt to tell"
	defer c.closeReader()
	k, err := c.reader(ctx, s)
	if wd, werr := os.Getwd(); err == nil && c.session == "" && werr == nil {
		c.session, _ = c.latestSessionIn(s, wd) // the setting is global; tell this directory's session
	}
	switch {
	case err != nil:
		running = "Temporal not reachable; " + running
	case c.session != "":
		switch err := k.SetAutoRetry(ctx, c.session, enabled); {
		case err == nil:
			running = "running prompt told"
		case !errors.Is(err, client.ErrNoRunningPrompt):
			return fail(env, "set-auto-retry", err)
		}
	}
	printResult(env, c.json, map[string]any{"success": true, "command": "set_auto_retry", "enabled": enabled, "settingsFile": s.File()},
		fmt.Sprintf("retry.enabled=%t written to %s (%s)", enabled, s.File(), running))
	return ExitOK
}

func runState(ctx context.Context, env Env, args []string) int {
	c := newFlags("state", env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		st, err := k.State(ctx, c.session)
		if err != nil {
			return fail(env, "state", err)
		}
		printOut(env.Stdout, c.json, st, func(w io.Writer) { toolview.WriteState(w, st, time.Now()) })
		return ExitOK
	})
}

func runEvents(ctx context.Context, env Env, args []string) int {
	c := newFlags("events", env)
	after := c.fs.Int64("after", 0, "only events with seq greater than this")
	followFlag := c.fs.Bool("follow", false, "keep printing until the prompt ends")
	full := c.fs.Bool("full", false, "print each tool result whole, read from the session store (with --json: in the event)")
	if !c.parse(env, args) {
		return ExitUsage
	}
	return c.dialed(ctx, func(k *client.Controller, _ settings.Settings) int {
		p := newPrinter(env.Stdout, c.json, c.session)
		p.body, p.full = storeBodies(k, c.session), *full
		if *followFlag {
			// The answer too: a short answer that no live snapshot caught
			// arrives only with its message_end, which prints nothing.
			return follow(ctx, env, "events", k, p, "", *after)
		}
		evs, err := k.Events(ctx, c.session, "", *after)
		if err != nil {
			return fail(env, "events", err)
		}
		p.noCountdown = true
		for _, e := range evs {
			p.print(e)
		}
		if n := len(evs); n > 0 && !c.json && evs[n-1].Type == agent.EventPromptEnd {
			p.ended(env, evs[n-1])
		}
		return ExitOK
	})
}

const settingsUsage = "starter settings [init] [--json]"

func runSettings(ctx context.Context, env Env, args []string) int {
	c := newFlags("settings", env)
	if !c.parse(env, args) {
		return ExitUsage
	}
	switch {
	case c.fs.NArg() == 0 || c.fs.NArg() == 1 && c.fs.Arg(0) == "init":
	case c.fs.Arg(0) != "init":
		return fail(env, "settings", fmt.Errorf("unknown settings subcommand %q (usage: %s)", c.fs.Arg(0), settingsUsage))
	default:
		return fail(env, "settings", fmt.Errorf("unexpected argument %q after init (usage: %s)", c.fs.Arg(1), settingsUsage))
	}
	s, vals, err := settings.Explain(settings.LoadOptions{Flags: c.fs})
	if err != nil {
		return fail(env, "settings", err)
	}
	if c.fs.Arg(0) == "init" {
		if err := writeNewFile(s.File(), settings.ExampleYAML()); err != nil {
			return fail(env, "settings", err)
		}
		fmt.Fprintf(env.Stdout, "wrote %s\n", s.File())
		return ExitOK
	}
	origins := make(map[string]settings.Origin, len(vals))
	for _, v := range vals {
		origins[v.Key] = v.Origin
	}
	printOut(env.Stdout, c.json, settingsJSON{Settings: s, File: s.File(), Origins: origins}, func(w io.Writer) { printSettings(w, s, vals) })
	return ExitOK
}

// writeNewFile writes content to path (mode 0600), refusing to overwrite.
func writeNewFile(path, content string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("create %s: %w", filepath.Dir(path), err)
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if os.IsExist(err) {
			return fmt.Errorf("%s already exists; not overwriting it", path)
		}
		return fmt.Errorf("write %s: %w", path, err)
	}
	if _, err := f.WriteString(content); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}

// settingsJSON is `starter settings --json`: the effective settings, the
// settings file and, per key, where its value came from.
type settingsJSON struct {
	settings.Settings
	File    string                     `json:"settingsFile"`
	Origins map[string]settings.Origin `json:"origins"`
}

// printSettings shows each key's effective value and where it came from
// (flag, env, file:line or default), then its description, variable and
// default.
func printSettings(w io.Writer, s settings.Settings, vals []settings.Value) {
	state := "not present: defaults, environment and flags only"
	if _, err := os.Stat(s.File()); err == nil {
		state = "read"
	}
	fmt.Fprintf(w, "settings file: %s (%s)\n\n", s.File(), state)
	info := map[string]settings.KeyInfo{}
	for _, k := range settings.Keys() {
		info[k.Key] = k
	}
	effective := map[string]string{"tools.sandbox.mode": sandboxEffective(s.Tools.Sandbox.Mode, ""),
		"tools.sandbox.memoryMB": sandboxMemoryEffective(s.Tools.Sandbox.MemoryMB)}
	for _, v := range vals {
		k := info[v.Key]
		fmt.Fprintf(w, "%-28s %-24s %s\n    %s (%s, default %s)\n", v.Key, cmp.Or(v.Value, `""`), v.Origin, k.Description, k.Env, cmp.Or(k.Default, `""`))
		if e := effective[v.Key]; e != "" {
			fmt.Fprintf(w, "    effective on this machine: %s\n", e)
		}
	}
	if lines := settings.Unread(vals, "the worker", settings.WorkerReads); len(lines) > 0 {
		// A worker says this once per settings (app.WorkerMain): here it is on demand.
		fmt.Fprintf(w, "\nset here, and not read by a worker given the same:\n")
		for _, l := range lines {
			fmt.Fprintf(w, "  %s\n", l)
		}
	}
	for _, v := range vals {
		if v.Key == "retry.enabled" && v.Value == "false" && v.Kind == settings.OriginFile {
			fmt.Fprintf(w, "\nretry is off for every prompt: retry.enabled is false in %s (set-auto-retry off writes it; 'starter set-auto-retry on' switches it back)\n", v.From)
		}
	}
}

// printOut writes v as one JSON line with --json, else what text writes
// for people.
func printOut(w io.Writer, asJSON bool, v any, text func(io.Writer)) {
	if asJSON {
		_ = json.NewEncoder(w).Encode(v)
		return
	}
	text(w)
}

// printResult is printOut of a one-line text.
func printResult(env Env, asJSON bool, v map[string]any, text string) {
	printOut(env.Stdout, asJSON, v, func(w io.Writer) { fmt.Fprintln(w, text) })
}

// printEach writes vs as JSON lines, one per element.
func printEach[T any](w io.Writer, vs []T) {
	enc := json.NewEncoder(w)
	for _, v := range vs {
		_ = enc.Encode(v)
	}
}
