package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
)

// Issue 23: an open chat follows its session, not only the prompts it
// started. A prompt started in the same session from another terminal
// (here a second client, as `starter prompt --session S` is) shows in
// the idle chat: its user message, its answer, and the chat is idle
// again afterwards; it is shown once.
func TestChat_PseudoTerminalFollowsAPromptStartedElsewhere(t *testing.T) {
	const (
		asked  = "asked from another terminal"
		answer = "Answer for the other terminal."
	)
	tm, _ := temporalChat(t, "watch1", func(s *settings.Settings) { s.Scripted.Reply = answer }, nil)
	tm.waitText("Session watch1.")
	tm.waitText("enter: send")

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cl, err := client.Dial(ctx, tm.server, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	k, err := client.NewController(cl, tm.server)
	if err != nil {
		t.Fatal(err)
	}
	other, err := client.Open(k, tm.server, "watch1")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.StartPrompt(ctx, asked); err != nil {
		t.Fatalf("start the other terminal's prompt: %v", err)
	}

	final := tm.waitFor("the other terminal's prompt and its answer", func(screen string) string {
		if strings.Contains(screen, "› "+asked) && strings.Contains(screen, answer) && strings.Contains(screen, "enter: send") {
			return screen
		}
		return ""
	})
	if !strings.Contains(final, "from another terminal; following it") {
		t.Errorf("the chat does not say it follows a prompt started elsewhere:\n%s", final)
	}
	// A few more looks (2 s apart) must not follow the ended run again.
	time.Sleep(2*watchInterval + 500*time.Millisecond)
	if screen := tm.screen(); strings.Count(screen, answer) != 1 || strings.Count(screen, "› "+asked) != 1 {
		t.Errorf("the prompt shows more than once:\n%s", screen)
	}
	tm.run("send-keys", "-t", "chat", "-l", "/quit")
	tm.run("send-keys", "-t", "chat", "Enter")
	tm.waitText("chat-exited-0")
}
