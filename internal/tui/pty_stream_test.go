package tui

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
)

// childTemporal (the childEnv value) makes the test binary run the chat
// UI against a Temporal server, configured by the file that configEnv
// names (a childConfig).
const (
	childTemporal = "temporal"
	configEnv     = "TUI_TEST_CONFIG"
)

// childConfig is what the Temporal child needs: its session and the
// environment its settings are loaded from (set over the inherited one).
type childConfig struct {
	Session string            `json:"session"`
	Env     map[string]string `json:"env"`
}

func runTemporalChild() int {
	fail := func(err error) int {
		fmt.Fprintln(os.Stderr, "tui child:", err)
		return 1
	}
	b, err := os.ReadFile(os.Getenv(configEnv))
	if err != nil {
		return fail(err)
	}
	var cfg childConfig
	if err := json.Unmarshal(b, &cfg); err != nil {
		return fail(err)
	}
	for k, v := range cfg.Env {
		os.Setenv(k, v) // this process is the child: its environment is the test's
	}
	s, err := settings.Load(settings.LoadOptions{})
	if err != nil {
		return fail(err)
	}
	ctx := context.Background()
	cl, err := client.Dial(ctx, s, nil)
	if err != nil {
		return fail(err)
	}
	defer cl.Close()
	k, err := client.NewController(cl, s)
	if err != nil {
		return fail(err)
	}
	backend, err := client.Open(k, s, cfg.Session)
	if err != nil {
		return fail(err)
	}
	if err := Run(ctx, backend, os.Stdin, os.Stdout); err != nil {
		return fail(err)
	}
	return 0
}

// streamedReply is the scripted model's answer: it streams word by word,
// streamDelayMs apart.
const (
	streamedReply = "Streaming reply: alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike november oscar papa."
	streamDelayMs = 150
)

// temporalChat runs the chat of session in tmux against the embedded
// Temporal server and a worker started here with s (tweak adjusts it);
// env adds to the chat's environment (the settings of its prompts). It
// skips under -short and without tmux.
func temporalChat(t *testing.T, session string, tweak func(*settings.Settings), env map[string]string) (*tmuxSession, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	bin, err := exec.LookPath("tmux")
	if err != nil {
		t.Skip("tmux is not installed (apt-get install tmux)")
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	home, workspace := t.TempDir(), t.TempDir()
	vars := map[string]string{settings.EnvHome: home, "HOME": home}
	s := settings.Defaults() // the built-in settings, whatever the user's
	s.DataDir = home
	s.Dev.Port, s.Dev.UI = 0, false
	s.Temporal.TaskQueue = fmt.Sprintf("tui-%s-%d", session, os.Getpid())
	if tweak != nil {
		tweak(&s)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	st, err := stack.Start(ctx, s, stack.Options{Dev: true, CodecServer: stack.CodecServerOff, Logger: quiet})
	if err != nil {
		t.Fatalf("start server and worker: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	vars["DURABLE_AGENT_TEMPORAL_ADDRESS"] = st.Settings.Temporal.Address
	vars["DURABLE_AGENT_TEMPORAL_NAMESPACE"] = st.Settings.Temporal.Namespace
	vars["DURABLE_AGENT_TEMPORAL_TASKQUEUE"] = st.Settings.Temporal.TaskQueue
	for k, v := range env {
		vars[k] = v
	}
	cfg, err := json.Marshal(childConfig{Session: session, Env: vars})
	if err != nil {
		t.Fatal(err)
	}
	cfgPath := filepath.Join(home, "child.json")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	tm := &tmuxSession{t: t, bin: bin, sock: fmt.Sprintf("tui-%s-%d", session, os.Getpid()), timeout: time.Minute}
	t.Cleanup(func() { _ = exec.Command(bin, "-L", tm.sock, "kill-server").Run() })
	shell := fmt.Sprintf("%s=%s %s=%s %s -test.run='^$'; echo chat-exited-$?; sleep 600",
		childEnv, childTemporal, configEnv, shellQuote(cfgPath), shellQuote(exe))
	tm.shell, tm.server = shell, st.Settings
	tm.run("new-session", "-d", "-s", "chat", "-x", "100", "-y", "40", "-c", workspace, shell)
	return tm, workspace
}

// Issue 11 end to end, in a real pseudo-terminal (tmux) against the
// embedded Temporal server and a worker: the bash call shows its command
// and its output while it runs, and the answer's text is on screen word by
// word before its message_end; then the whole answer and the finished
// call stay.
func TestChat_PseudoTerminalShowsLiveOutput(t *testing.T) {
	// The first model call runs bash (a second of output at a time, no ';'
	// since the fault list is ';'-separated); the next one answers.
	command := `{"command":"for i in 1 2 3 4 5\ndo echo tick$i\nsleep 1\ndone"}`
	s2, _ := temporalChat(t, "live1", func(s *settings.Settings) {
		s.Scripted.Reply, s.Scripted.StreamDelayMs = streamedReply, streamDelayMs
	}, map[string]string{"DURABLE_AGENT_SCRIPTED_FAULTS": "tool:bash " + command})

	s2.waitText("Session live1.")
	s2.submitFirst("run the loop")

	// The call's output shows while it runs: before its ✓.
	s2.waitFor("live bash output", func(screen string) string {
		if strings.Contains(screen, "✓ bash") {
			t.Fatalf("the bash call ended before any of its output showed:\n%s", screen)
		}
		if strings.Contains(screen, "▶ bash for i in 1 2 3 4 5 …") && strings.Contains(screen, "  tick") {
			return "output"
		}
		return ""
	})
	// Issue 23: the status line says what the prompt waits for: the
	// tool while it runs, with the stats line (model of the answer that
	// asked for it, elapsed time, turn, tokens) under it.
	s2.waitFor("the status line naming the running tool", func(screen string) string {
		if strings.Contains(screen, "✓ bash") {
			t.Fatalf("the bash call ended before the status line named it:\n%s", screen)
		}
		if strings.Contains(screen, "Running bash… (esc to abort)") && statsLine.MatchString(screen) {
			return "running"
		}
		return ""
	})
	s2.waitText("✓ bash for i in 1 2 3 4 5 …")

	// The answer shows word by word: some of it before all of it.
	partial := s2.waitFor("partial answer text", func(screen string) string {
		if strings.Contains(screen, "papa.") {
			t.Fatalf("the answer appeared whole, not as it streamed:\n%s", screen)
		}
		if strings.Contains(screen, "Streaming reply: alpha") {
			return screen
		}
		return ""
	})
	if !strings.Contains(partial, "Calling scripted/scripted-1… (esc to abort)") || strings.Contains(partial, "Running bash… (esc") {
		t.Errorf("while the answer streams the status line does not say the model is called:\n%s", partial)
	}
	if m := statsLine.FindStringSubmatch(partial); m == nil || m[1] != "2" {
		t.Errorf("while the second answer streams the stats line is not at turn 2:\n%s", partial)
	}
	final := s2.waitFor("the whole answer and the idle line", func(screen string) string {
		if strings.Contains(screen, "oscar papa.") && strings.Contains(screen, "enter: send") {
			return screen
		}
		return ""
	})
	for _, want := range []string{"› run the loop", "✓ bash for i in 1 2 3 4 5 …", "  tick5"} {
		if !strings.Contains(final, want) {
			t.Errorf("the final screen lacks %q:\n%s", want, final)
		}
	}
	if n := strings.Count(final, "Streaming reply: alpha"); n != 1 {
		t.Errorf("the answer shows %d times, want once:\n%s", n, final)
	}
	s2.run("send-keys", "-t", "chat", "-l", "/quit")
	s2.run("send-keys", "-t", "chat", "Enter")
	s2.waitText("chat-exited-0")
}

// statsLine is the TUI's stats line of a scripted prompt: model,
// elapsed time, turn (the submatch), tokens.
var statsLine = regexp.MustCompile(`scripted/scripted-1 · (?:\d+m)?\d+s · turn (\d+) · [\d.]+k? tokens`)

// shellQuote quotes s for sh.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }
