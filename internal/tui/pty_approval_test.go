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
	tm.run("send-keys", "-t", "chat", "-l", "make a file")
	tm.run("send-keys", "-t", "chat", "Enter")
	asked := tm.waitFor("the approval question", func(screen string) string {
		if strings.Contains(screen, "y: approve · n: deny") {
			return screen
		}
		return ""
	})
	for _, want := range []string{"Approve bash call_", "$ sleep 2", "  echo approved > ran.txt", "(waiting for approval)", "Working… (esc to abort)"} {
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
