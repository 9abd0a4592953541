package tui

import (
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
)

// childEnv makes the test binary run the chat UI on its terminal, for the
// pseudo-terminal tests: its value childTemporal runs it against a
// Temporal server (see pty_stream_test.go).
const childEnv = "TUI_TEST_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == childTemporal {
		os.Exit(runTemporalChild())
	}
	code := testserver.Main(m)
	closeWorker()
	os.Exit(code)
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
	// server is the settings of the Temporal server and worker the chat
	// talks to (temporalChat), for the test's own clients.
	server settings.Settings
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

// submitFirst types the chat's first message and presses Enter until
// it leaves the input: the chat reads the session's history through a
// worker when it opens, and Enter waits for that ("Busy: wait for the
// session to load", the text staying in the input).
func (s *tmuxSession) submitFirst(text string) {
	s.t.Helper()
	s.run("send-keys", "-t", "chat", "-l", text)
	for deadline := time.Now().Add(s.timeout); ; {
		s.run("send-keys", "-t", "chat", "Enter")
		time.Sleep(300 * time.Millisecond)
		if !strings.Contains(s.screen(), "> "+text) || time.Now().After(deadline) {
			return
		}
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

// SPEC 10 end to end in a real pseudo-terminal (tmux), against the
// embedded Temporal server and a worker: the countdown ticks on screen,
// Esc cancels the retry, the failure line shows, and /quit leaves with
// status 0.
func TestChat_PseudoTerminalCountdownAndEscCancelsRetry(t *testing.T) {
	s, _ := temporalChat(t, "retry1", nil, map[string]string{
		"DURABLE_AGENT_SCRIPTED_FAULTS":   "503 Service Unavailable",
		"DURABLE_AGENT_RETRY_BASEDELAYMS": "30000",
	})

	s.waitText("Session retry1.")
	s.submitFirst("hello")
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
