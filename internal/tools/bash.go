package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

var bashTool = toolDef{
	description: fmt.Sprintf("Execute a bash command in the current working directory. Returns stdout and stderr. Output is truncated to last %d lines or %dKB (whichever is hit first). If truncated, full output is saved to a temp file. Optionally provide a timeout in seconds.", MaxLines, MaxBytes/1024),
	schema: `{"type":"object","properties":{` +
		`"command":{"type":"string","description":"Bash command to execute"},` +
		`"timeout":{"type":"number","description":"Timeout in seconds (optional, no default timeout)"}},` +
		`"required":["command"]}`,
	runsOnce: true,
	run:      runBash,
}

type bashArgs struct {
	Command *string `json:"command"`
	Timeout optNum  `json:"timeout"`
}

const (
	// updateInterval throttles Options.OnUpdate.
	updateInterval = 100 * time.Millisecond
	// drainGrace is how long output is still read after the shell exits,
	// while background processes may hold the pipe open.
	drainGrace = 200 * time.Millisecond
)

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

func runBash(ctx context.Context, raw json.RawMessage, opts *Options) Result {
	var a bashArgs
	if r := decodeArgs(Bash, raw, &a); r != nil {
		return *r
	}
	if a.Command == nil || strings.TrimSpace(*a.Command) == "" {
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
	if fi, err := os.Stat(ws); err != nil || !fi.IsDir() {
		return errorf("Working directory does not exist: %s\nCannot execute bash commands.", ws)
	}
	env := opts.Env
	if len(env) == 0 {
		env = ScrubEnv(os.Environ(), nil)
	}
	tempDir := opts.TempDir
	if tempDir == "" {
		tempDir = filepath.Join(os.TempDir(), "durable-agent-bash")
	}

	r, w, err := os.Pipe()
	if err != nil {
		return errorf("Cannot run the command: %v", err)
	}
	shell := findShell()
	cmd := exec.Command(shell, "-c", *a.Command)
	cmd.Dir = ws
	token := newCallToken()
	cmd.Env = withCallMarker(env, token)
	cmd.Stdout, cmd.Stderr = w, w // merged; stdin stays /dev/null
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return errorf("Cannot start %s: %v", shell, err)
	}
	w.Close()
	pgid := cmd.Process.Pid

	acc := &outputAcc{dir: tempDir}
	readDone := make(chan struct{})
	go func() {
		defer close(readDone)
		buf := make([]byte, 32*1024)
		for {
			n, err := r.Read(buf)
			if n > 0 {
				acc.write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	}()
	waitDone := make(chan error, 1)
	go func() { waitDone <- cmd.Wait() }()

	stopUpdates := make(chan struct{})
	updatesDone := make(chan struct{})
	go func() {
		defer close(updatesDone)
		if opts.OnUpdate == nil {
			return
		}
		// A timer re-armed after each call keeps calls at least
		// updateInterval apart even when this goroutine runs late.
		tick := time.NewTimer(updateInterval)
		defer tick.Stop()
		for {
			select {
			case <-stopUpdates:
				return
			case <-tick.C:
				if s, ok := acc.snapshot(); ok {
					notify(opts.OnUpdate, s)
				}
				tick.Reset(updateInterval)
			}
		}
	}()

	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	var waitErr error
	aborted, timedOut := false, false
	select {
	case waitErr = <-waitDone:
	case <-ctx.Done():
		aborted = true
		killCall(cmd, token)
		waitErr = <-waitDone
	case <-timer:
		timedOut = true
		killCall(cmd, token)
		waitErr = <-waitDone
	}
	select {
	case <-readDone:
	case <-time.After(drainGrace):
	}
	// Whatever the command left running (`cmd &`, setsid, nohup) ends
	// with the call, after its output had drainGrace to arrive. (The
	// shell is reaped: its group is no longer addressed by its number.)
	// Its writers dead, the pipe's last bytes are read to its end.
	endCallProcesses(token, pgid)
	select {
	case <-readDone:
	case <-time.After(drainGrace):
		// A process that escaped endCallProcesses holds the pipe open.
		_ = r.SetReadDeadline(time.Now())
		<-readDone
	}
	r.Close()
	close(stopUpdates)
	<-updatesDone

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
	code := 0
	if waitErr != nil {
		var ee *exec.ExitError
		if !errors.As(waitErr, &ee) {
			return withStatus(fmt.Sprintf("Command failed: %v", waitErr))
		}
		st, _ := ee.Sys().(syscall.WaitStatus)
		if st.Signaled() {
			code = 128 + int(st.Signal())
			details["exitCode"] = code
			return withStatus(fmt.Sprintf("Command was killed by signal %d (%v)", int(st.Signal()), st.Signal()))
		}
		code = ee.ExitCode()
	}
	details["exitCode"] = code
	if code != 0 {
		return withStatus(fmt.Sprintf("Command exited with code %d", code))
	}
	text := out.text
	if text == "" {
		text = "(no output)"
	}
	return Result{Content: text, Details: details}
}

// findShell returns bash, or sh when there is no bash.
func findShell() string {
	for _, s := range []string{"bash", "sh"} {
		if p, err := exec.LookPath(s); err == nil {
			return p
		}
	}
	for _, p := range []string{"/bin/bash", "/usr/bin/bash", "/bin/sh"} {
		if _, err := os.Stat(p); err == nil {
			return p
		}
	}
	return "/bin/sh"
}

// killCall kills a running command: the shell is stopped so that it
// forks no more, every other process of the call is killed (see
// endCallProcesses), then the shell's process group, shell included. It
// is called before the shell's Wait has returned: its group number names
// its group (a shell that exits at this very moment frees the number,
// which the kernel's sequential pids make safe to signal for the instant
// it takes).
func killCall(cmd *exec.Cmd, token string) {
	shell := cmd.Process.Pid
	if shell <= 0 {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGSTOP) // by pidfd: never another process
	endCallProcesses(token, shell)
	_ = syscall.Kill(-shell, syscall.SIGKILL)
}

// notify calls the caller's progress callback; a panic in it must not take
// the worker down (it runs on a goroutine Run's recover does not cover).
func notify(f func(string), s string) {
	defer func() { _ = recover() }()
	f(s)
}
