package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/rpcserver/rpcfake"
)

// childEnv makes the test binary run the chat UI on its terminal, for the
// pseudo-terminal tests: against the fake backend ("1"), or against a
// Temporal server (childTemporal, see pty_stream_test.go).
const childEnv = "TUI_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		os.Exit(m.Run())
	case childTemporal:
		os.Exit(runTemporalChild())
	default:
		os.Exit(runChild())
	}
}

func runChild() int {
	fake := rpcfake.New("s1")
	fake.Script = rpcfake.RetryChain(rpcfake.Chain{Errors: []string{"503 Service Unavailable"}, BaseDelay: 30 * time.Second})
	if err := Run(context.Background(), fake, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	return 0
}

// tmuxSession runs a command in a detached tmux session on a private
// server and reads its screen.
type tmuxSession struct {
	t    *testing.T
	bin  string
	sock string
	// timeout bounds each wait for the screen (0: 20 seconds).
	timeout time.Duration
	// shell is the command the pane runs (restart runs it again).
	shell string
}

// restart runs the pane's command again in place of the one that ended
// (the chat reopened on the same session).
func (s *tmuxSession) restart() {
	s.t.Helper()
	s.run("respawn-pane", "-k", "-t", "chat", s.shell)
}

func (s *tmuxSession) run(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(s.bin, append([]string{"-u", "-L", s.sock, "-f", "/dev/null"}, args...)...)
	cmd.Env = append(os.Environ(), "LANG=C.UTF-8", "LC_ALL=C.UTF-8")
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("tmux %v: %v: %s", args, err, out)
	}
	return string(out)
}

func (s *tmuxSession) screen() string { return s.run("capture-pane", "-p", "-t", "chat") }

// waitFor polls the screen until match finds something, and returns it.
func (s *tmuxSession) waitFor(what string, match func(screen string) string) string {
	s.t.Helper()
	wait := s.timeout
	if wait == 0 {
		wait = 20 * time.Second
	}
	deadline := time.Now().Add(wait)
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		screen := s.screen()
		if got := match(screen); got != "" {
			return got
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; screen:\n%s", what, screen)
		}
		<-tick.C
	}
}

func (s *tmuxSession) waitText(text string) {
	s.t.Helper()
	s.waitFor(strconv.Quote(text), func(screen string) string {
		if strings.Contains(screen, text) {
			return text
		}
		return ""
	})
}

var retryLine = regexp.MustCompile(`Retrying \(1/3\) in (\d+)s… \(esc to cancel\)`)

// SPEC 10 end to end in a real pseudo-terminal (tmux): the countdown
// ticks on screen, Esc cancels the retry, the failure line shows, and
// /quit leaves with status 0.
func TestChat_PseudoTerminalCountdownAndEscCancelsRetry(t *testing.T) {
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	s := &tmuxSession{t: t, bin: bin, sock: fmt.Sprintf("tui-test-%d", os.Getpid())}
	t.Cleanup(func() { _ = exec.Command(bin, "-L", s.sock, "kill-server").Run() })
	shell := fmt.Sprintf("%s=1 '%s' -test.run='^$'; echo chat-exited-$?; sleep 600", childEnv, strings.ReplaceAll(exe, "'", `'\''`))
	s.run("new-session", "-d", "-s", "chat", "-x", "100", "-y", "30", shell)

	s.waitText("Session s1.")
	s.run("send-keys", "-t", "chat", "-l", "hello")
	s.run("send-keys", "-t", "chat", "Enter")
	first := s.waitFor("the retry loader", func(screen string) string {
		if m := retryLine.FindStringSubmatch(screen); m != nil {
			return m[1]
		}
		return ""
	})
	n, _ := strconv.Atoi(first)
	if n < 28 || n > 30 {
		t.Errorf("countdown starts at %ds, want about 30s", n)
	}
	// The countdown moves on by itself, once a second.
	s.waitFor("the countdown to tick", func(screen string) string {
		if m := retryLine.FindStringSubmatch(screen); m != nil && m[1] != first {
			return m[1]
		}
		return ""
	})
	s.run("send-keys", "-t", "chat", "Escape")
	s.waitText("Retry failed after 1 attempt: Retry cancelled")
	s.waitFor("the loader to go", func(screen string) string {
		if !strings.Contains(screen, "Retrying (") && strings.Contains(screen, "enter: send") {
			return "idle"
		}
		return ""
	})
	s.run("send-keys", "-t", "chat", "-l", "/quit")
	s.run("send-keys", "-t", "chat", "Enter")
	s.waitText("chat-exited-0")
}
