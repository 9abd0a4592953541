package llm

import (
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// A bash execution reaches the model as the terminal agent's user
// message; the other messages stay as they are, and the input is not
// modified.
func TestSendableMessages_BashAsUser(t *testing.T) {
	one, zero := 1, 0
	for _, tc := range []struct {
		name string
		m    agent.Message
		want string
	}{
		{"output", agent.Message{Role: agent.RoleBashExecution, Command: "ls", Output: "a\nb", ExitCode: &zero}, "Ran `ls`\n```\na\nb\n```"},
		{"no output, failed", agent.Message{Role: agent.RoleBashExecution, Command: "false", ExitCode: &one}, "Ran `false`\n(no output)\n\nCommand exited with code 1"},
		{"cancelled", agent.Message{Role: agent.RoleBashExecution, Command: "sleep 9", Cancelled: true}, "Ran `sleep 9`\n(no output)\n\n(command cancelled)"},
		{"truncated", agent.Message{Role: agent.RoleBashExecution, Command: "seq 1e6", Output: "…", Truncated: true, FullOutputPath: "/tmp/o.log"},
			"Ran `seq 1e6`\n```\n…\n```\n\n[Output truncated. Full output: /tmp/o.log]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := []agent.Message{agent.TextMessage(agent.RoleUser, "hi"), tc.m}
			out := SendableMessages(in)
			if len(out) != 2 || out[0].Text() != "hi" || out[1].Role != agent.RoleUser || out[1].Text() != tc.want {
				t.Fatalf("got %+v, want user %q", out, tc.want)
			}
			if in[1].Role != agent.RoleBashExecution {
				t.Fatal("input modified")
			}
		})
	}
}

// Issue 24: a bash execution run with excludeFromContext stays out of what
// the model is sent; the others around it are sent as before.
func TestSendableMessages_LeavesOutExcludedBash(t *testing.T) {
	in := []agent.Message{
		agent.TextMessage(agent.RoleUser, "hi"),
		{Role: agent.RoleBashExecution, Command: "cat secret-notes", Output: "private", ExcludeFromContext: true},
		{Role: agent.RoleBashExecution, Command: "ls", Output: "a"},
	}
	out := SendableMessages(in)
	if len(out) != 2 || out[0].Text() != "hi" || out[1].Text() != "Ran `ls`\n```\na\n```" {
		t.Fatalf("got %+v, want hi and the ls execution only", out)
	}
	if len(in) != 3 || in[1].Role != agent.RoleBashExecution {
		t.Fatal("input modified")
	}
}
