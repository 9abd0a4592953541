package tools

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"time"
)

var bashTool = toolDef{
	description: fmt.Sprintf("Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last %d lines or %dKB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.", MaxLines, MaxBytes/1024),
	schema: `{"type":"object","properties":{` +
		`"command":{"type":"string","description":"Bash command to execute"},` +
		`"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}},` +
		`"required":["command"]}`,
	spec: Spec{Attempts: 1, Timeout: DefaultBashTimeout, TimeoutArg: true, Command: true},
	run:  decoded(Bash, runBash),
}

type bashArgs struct {
	Command *string `json:"command"`
	Timeout optNum  `json:"timeout"`
}

// updateInterval throttles Options.OnUpdate.
const updateInterval = 100 * time.Millisecond

// MaxBashTimeout is the longest timeout a bash call may ask for (its
// timeout argument) and the upper limit of tools.bashTimeoutMs: 24 hours.
// The prompt's activity for a call lasts the call's timeout plus a margin,
// so an unbounded value would overflow the activity's Temporal timeout and
// fail the workflow task that schedules it (issue 20 item 1).
const MaxBashTimeout = 24 * time.Hour

// BashTimeout validates a bash call's timeout argument, in seconds: a
// finite number from 0 (no timeout) to MaxBashTimeout. Its error names the
// value and the limit in one line; the tool gives it to the model as the
// call's error result (BashTimeoutResult), so that it can call again.
func BashTimeout(sec float64) (time.Duration, error) {
	limit := MaxBashTimeout.Seconds()
	v := strconv.FormatFloat(sec, 'f', -1, 64)
	if math.Abs(sec) >= 1e21 {
		v = strconv.FormatFloat(sec, 'g', -1, 64)
	}
	switch {
	case math.IsNaN(sec) || math.IsInf(sec, 0):
		return 0, fmt.Errorf("timeout %s is not a finite number of seconds", v)
	case sec < 0:
		return 0, fmt.Errorf("timeout %s s is negative", v)
	case sec > limit:
		return 0, fmt.Errorf("timeout %s s is above the maximum of %v s (24 hours)", v, limit)
	}
	return time.Duration(sec * float64(time.Second)), nil
}

// BashTimeoutArg reads the timeout argument of a bash call's arguments as
// the tool does (a number, a numeric string or null). ok is false when
// the call names no valid timeout: none, or one the tool refuses.
func BashTimeoutArg(args json.RawMessage) (d time.Duration, ok bool) {
	var a struct {
		Timeout optNum `json:"timeout"`
	}
	if json.Unmarshal(args, &a) != nil || !a.Timeout.set {
		return 0, false
	}
	d, err := BashTimeout(a.Timeout.v)
	return d, err == nil
}

func runBash(ctx context.Context, a *bashArgs, opts *Options) Result {
	if strings.TrimSpace(*a.Command) == "" {
		return missing(Bash, "command")
	}
	timeout := min(opts.DefaultTimeout, MaxBashTimeout)
	if a.Timeout.set {
		d, err := BashTimeout(a.Timeout.v)
		if err != nil {
			return errorf("bash: %v; call bash again with a timeout from 0 (none) to %v seconds", err, MaxBashTimeout.Seconds())
		}
		timeout = d
	}
	ws := opts.workspace()
	if fi, err := opts.fs().Stat(ws); err != nil || !fi.IsDir() {
		return errorf("Working directory does not exist: %s\nCannot execute bash commands.", ws)
	}
	env := opts.Env
	if len(env) == 0 {
		env = ScrubEnv(os.Environ(), nil)
	}
	acc := &outputAcc{root: ws, dir: opts.OutputDir}
	if acc.dir == "" {
		acc.root, acc.dir = os.TempDir(), "durable-agent-bash"
	}
	output := newMaskWriter(acc, opts.Secrets)
	proc, err := opts.runner().Start(Command{Script: *a.Command, Dir: ws, Env: env, Output: output})
	if err != nil {
		return errorf("Cannot run the command: %v", err)
	}
	stopUpdates := make(chan struct{})
	updatesDone := make(chan struct{})
	go func() {
		defer close(updatesDone)
		if opts.OnUpdate == nil {
			return
		}
		for {
			// A timer made after each call keeps calls at least
			// updateInterval apart even when this goroutine runs late.
			select {
			case <-stopUpdates:
				return
			case <-time.After(updateInterval):
				if s, ok := acc.snapshot(); ok {
					notify(opts.OnUpdate, s)
				}
			}
		}
	}()

	// The call's end (ctx) or its timeout kills the command.
	runCtx := ctx
	if timeout > 0 {
		var cancel context.CancelFunc
		runCtx, cancel = context.WithTimeoutCause(ctx, timeout, errTimedOut)
		defer cancel()
	}
	stopKill := context.AfterFunc(runCtx, proc.Kill)
	exit, waitErr := proc.Wait()
	killed := !stopKill()
	aborted := killed && context.Cause(runCtx) != errTimedOut
	timedOut := killed && !aborted
	close(stopUpdates)
	<-updatesDone
	if m, ok := output.(*maskWriter); ok {
		m.Flush()
	}

	out := acc.finish()
	details := map[string]any{}
	if out.truncated {
		details["truncated"] = true
		if out.path != "" {
			details["fullOutputPath"] = out.path
		}
	}
	withStatus := func(status string) Result {
		text := out.text
		if text != "" {
			text += "\n\n"
		}
		return Result{Content: text + status, IsError: true, Details: details}
	}
	switch {
	case aborted:
		details["aborted"] = true
		return withStatus("Command aborted")
	case timedOut:
		details["timedOut"] = true
		return withStatus(fmt.Sprintf("Command timed out after %s seconds", strconv.FormatFloat(timeout.Seconds(), 'f', -1, 64)))
	}
	if waitErr != nil {
		return withStatus(fmt.Sprintf("Command failed: %v", waitErr))
	}
	details["exitCode"] = exit.Code
	switch {
	case exit.Limit != "":
		details["limit"] = exit.Limit
		return withStatus(fmt.Sprintf("Command was stopped by the sandbox's %s", exit.Limit))
	case exit.Signal != 0:
		return withStatus(fmt.Sprintf("Command was killed by signal %d (%v)", int(exit.Signal), exit.Signal))
	case exit.Code != 0:
		status := fmt.Sprintf("Command exited with code %d", exit.Code)
		if exit.MaybeLimit != "" {
			details["maybeLimit"] = exit.MaybeLimit
			status += "; it may have hit the sandbox's " + exit.MaybeLimit
		}
		return withStatus(status)
	case exit.Hit != "":
		// Not an error: the command did what it did, but the model must
		// learn that a process of it was ended (its output may not say).
		details["limitHit"] = exit.Hit
		r := withStatus("Command exited with code 0, but it hit the sandbox's " + exit.Hit)
		r.IsError = false
		return r
	}
	return Result{Content: cmp.Or(out.text, "(no output)"), Details: details}
}

// errTimedOut is the cause of a bash call's end at its timeout.
var errTimedOut = errors.New("timed out")

// notify calls the caller's progress callback; a panic in it must not take
// the worker down (it runs on a goroutine Run's recover does not cover).
func notify(f func(string), s string) {
	defer func() { _ = recover() }()
	f(s)
}
