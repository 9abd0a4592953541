package tools

import (
	"crypto/rand"
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strings"
	"syscall"
	"time"
)

// CallMarkerEnv names the variable that marks every process of one bash
// call: the command's shell gets it with a value of its own, and every
// process it starts inherits it. When the call ends (the command exits,
// times out or is aborted), the processes still carrying the call's value
// are killed (see endCallProcesses).
const CallMarkerEnv = "DURABLE_AGENT_CALL"

// DrainGrace is how long a command's output is still read after its
// shell exits, while background processes may hold the pipe open.
const DrainGrace = 200 * time.Millisecond

// FinishRead waits for done, the end of a read of r, at most DrainGrace;
// then it cuts the read short (a writer left behind holds the pipe open)
// and waits for it. It closes r.
func FinishRead(r *os.File, done <-chan struct{}) {
	select {
	case <-done:
	case <-time.After(DrainGrace):
		_ = r.SetReadDeadline(time.Now())
		<-done
	}
	r.Close()
}

// localProcess is a command of Local: a child of the worker in its own
// process group, its processes marked with token.
type localProcess struct {
	cmd      *exec.Cmd
	token    string
	out      *os.File      // the read end of the output pipe
	readDone chan struct{} // the output is copied to its end
	waited   chan struct{} // the shell is reaped; waitErr is set
	waitErr  error
}

func (localRunner) Start(c Command) (Process, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	shell := findShell()
	cmd := exec.Command(shell, "-c", c.Script)
	cmd.Dir = c.Dir
	token := rand.Text() // a value no other call has
	cmd.Env = withCallMarker(c.Env, token)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, w, w // merged; nil stdin is /dev/null
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		r.Close()
		w.Close()
		return nil, fmt.Errorf("start %s: %w", shell, err)
	}
	w.Close()
	p := &localProcess{cmd: cmd, token: token, out: r, readDone: make(chan struct{}), waited: make(chan struct{})}
	go func() {
		defer close(p.readDone)
		_, _ = io.Copy(c.Output, r)
	}()
	go func() {
		p.waitErr = cmd.Wait()
		close(p.waited)
	}()
	return p, nil
}

func (p *localProcess) Wait() (Exit, error) {
	<-p.waited
	select {
	case <-p.readDone:
	case <-time.After(DrainGrace):
	}
	// Whatever the command left running (`cmd &`, setsid, nohup) ends
	// with the call, after its output had drainGrace to arrive. (The
	// shell is reaped: its group is no longer addressed by its number.)
	// Its writers dead, the pipe's last bytes are read to its end.
	endCallProcesses(p.token, p.cmd.Process.Pid)
	FinishRead(p.out, p.readDone)
	return ExitOf(p.waitErr)
}

// Kill stops the shell so that it forks no more, kills every other
// process of the call (see endCallProcesses), then the shell's process
// group, shell included. Until the shell is reaped its group number names
// its group (a shell that exits at this very moment frees the number,
// which the kernel's sequential pids make safe to signal for the instant
// it takes); once it is reaped, Wait ends what is left.
func (p *localProcess) Kill() {
	select {
	case <-p.waited:
		return
	default:
	}
	shell := p.cmd.Process.Pid
	_ = p.cmd.Process.Signal(syscall.SIGSTOP) // by pidfd: never another process
	endCallProcesses(p.token, shell)
	_ = syscall.Kill(-shell, syscall.SIGKILL)
}

// ShellQuote quotes each of words as one word of a POSIX shell, joined
// by spaces.
func ShellQuote(words ...string) string {
	q := make([]string, len(words))
	for i, w := range words {
		q[i] = "'" + strings.ReplaceAll(w, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}

// findShell returns bash, or sh when there is no bash.
func findShell() string {
	for _, s := range []string{"bash", "/bin/bash", "/usr/bin/bash"} {
		if p, err := exec.LookPath(s); err == nil {
			return p
		}
	}
	return "/bin/sh"
}

// withCallMarker returns env with CallMarkerEnv set to token (replacing a
// value inherited from a caller: a worker run inside another's command
// marks its own calls).
func withCallMarker(env []string, token string) []string {
	out := slices.DeleteFunc(slices.Clone(env), func(kv string) bool { return strings.HasPrefix(kv, CallMarkerEnv+"=") })
	return append(out, CallMarkerEnv+"="+token)
}
