package tui

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 12 end to end, in a real pseudo-terminal (tmux) against the
// embedded Temporal server and a worker, with tools.requireApproval=bash:
// the bash call waits and the chat asks about it with its command; y runs
// it; a follow-up typed with Alt+Enter while it runs shows as queued and
// is delivered when the prompt would otherwise end.
func TestChat_PseudoTerminalApprovesToolCallAndQueuesFollowUp(t *testing.T) {
	// No ';' in the command: the fault list is ';'-separated.
	command := `{"command":"sleep 2\necho approved > ran.txt\necho ran-it"}`
	tm, workspace := temporalChat(t, "approve1", nil, map[string]string{
		"DURABLE_AGENT_SCRIPTED_FAULTS":       "tool:bash " + command + ";text:first answer",
		"DURABLE_AGENT_TOOLS_REQUIREAPPROVAL": "bash",
	})
	ran := filepath.Join(workspace, "ran.txt")

	tm.waitText("Session approve1.")
	tm.submitFirst("make a file")
	asked := tm.waitFor("the approval question", func(screen string) string {
		if strings.Contains(screen, "y: approve · n: deny") {
			return screen
		}
		return ""
	})
	for _, want := range []string{"Approve bash call_", "$ sleep 2", "  echo approved > ran.txt", "(waiting for approval)", "Waiting for your approval… (esc to abort)"} {
		if !strings.Contains(asked, want) {
			t.Errorf("the question lacks %q:\n%s", want, asked)
		}
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("ran.txt exists before the approval")
	}

	tm.run("send-keys", "-t", "chat", "y")
	tm.waitText("Approved bash call_")
	tm.run("send-keys", "-t", "chat", "-l", "and one more thing")
	tm.run("send-keys", "-t", "chat", "M-Enter")
	tm.waitText("Follow-up: and one more thing")
	final := tm.waitFor("the follow-up delivered and the prompt's end", func(screen string) string {
		if strings.Contains(screen, "› and one more thing") && strings.Contains(screen, "enter: send ·") {
			return screen
		}
		return ""
	})
	for _, want := range []string{"✓ bash sleep 2 …", "  ran-it", "first answer"} {
		if !strings.Contains(final, want) {
			t.Errorf("the final screen lacks %q:\n%s", want, final)
		}
	}
	if strings.Contains(final, "Follow-up:") || strings.Contains(final, "y: approve") {
		t.Errorf("the queue or the question is still shown:\n%s", final)
	}
	if b, err := os.ReadFile(ran); err != nil || strings.TrimSpace(string(b)) != "approved" {
		t.Errorf("ran.txt = %q, %v; want the approved call's output", b, err)
	}
	tm.run("send-keys", "-t", "chat", "-l", "/quit")
	tm.run("send-keys", "-t", "chat", "Enter")
	tm.waitText("chat-exited-0")
}

// Issue 12 end to end: a chat reopened on a session shows its earlier
// messages, read from the session store, then attaches to the prompt
// left waiting for an approval when the first chat quit: each message
// once, the call asked about again, y runs it.
func TestChat_PseudoTerminalReopenShowsHistoryAndAsksAgain(t *testing.T) {
	command := `{"command":"echo approved >> ran.txt\necho ran-it"}`
	tm, workspace := temporalChat(t, "reopen1", nil, map[string]string{
		"DURABLE_AGENT_SCRIPTED_FAULTS":       "tool:bash " + command + ";text:done with it",
		"DURABLE_AGENT_TOOLS_REQUIREAPPROVAL": "bash",
	})
	send := func(keys ...string) { tm.run(append([]string{"send-keys", "-t", "chat"}, keys...)...) }

	tm.waitText("Session reopen1.")
	tm.submitFirst("make a file")
	tm.waitText("y: approve · n: deny")
	send("y")
	tm.waitText("done with it")
	tm.waitText("enter: send ·")
	send("-l", "once more")
	send("Enter")
	tm.waitText("y: approve · n: deny")
	send("C-c") // leave: the call keeps waiting in Temporal
	tm.waitText("chat-exited-0")

	tm.restart()
	screen := tm.waitFor("the history and the question again", func(screen string) string {
		if strings.Contains(screen, "Earlier in this session:") && strings.Contains(screen, "y: approve · n: deny") {
			return screen
		}
		return ""
	})
	for _, want := range []string{"› make a file", "✓ bash echo approved >> ran.txt …", "done with it",
		"Attached to the prompt already running", "› once more", "▶ bash echo approved >> ran.txt … (waiting for approval)"} {
		if n := strings.Count(screen, want); n != 1 {
			t.Errorf("the reopened chat shows %q %d times, want once:\n%s", want, n, screen)
		}
	}
	if strings.Index(screen, "done with it") > strings.Index(screen, "› once more") {
		t.Errorf("the earlier prompt is not above the running one:\n%s", screen)
	}
	send("y")
	final := tm.waitFor("the second prompt's end", func(screen string) string {
		if strings.Count(screen, "done with it") == 2 && strings.Contains(screen, "enter: send ·") {
			return screen
		}
		return ""
	})
	if n := strings.Count(final, "✓ bash echo approved >> ran.txt …"); n != 2 {
		t.Errorf("%d finished calls on screen, want 2:\n%s", n, final)
	}
	if b, err := os.ReadFile(filepath.Join(workspace, "ran.txt")); err != nil || string(b) != "approved\napproved\n" {
		t.Errorf("ran.txt = %q, %v; want both approved calls' output", b, err)
	}
	send("-l", "/quit")
	send("Enter")
	tm.waitText("chat-exited-0")
}
