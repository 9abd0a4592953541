package toolview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
)

// WriteState writes a session's state for a person, as `starter state`
// and the terminal UI's /state show it: the status line, the retry flags,
// then what the prompt waits for (a retry's wake-up, queued messages,
// tool calls running, waiting for their host or for approval, each with
// the command that decides it).
func WriteState(w io.Writer, st agent.State, now time.Time) {
	fmt.Fprintf(w, "session %s  status %s  model %s/%s  messages %d\n", st.SessionID, st.Status, st.Provider, st.Model, st.MessageCount)
	fmt.Fprintf(w, "autoRetryEnabled %t  isRetrying %t  retryAttempt %d  isStreaming %t  isCompacting %t  autoCompactionEnabled %t\n",
		st.AutoRetryEnabled, st.IsRetrying, st.RetryAttempt, st.IsStreaming, st.IsCompacting, st.AutoCompactionEnabled)
	if p := st.PendingRetry; p != nil {
		left := max(p.WakeAt.Sub(now), 0).Round(time.Second)
		fmt.Fprintf(w, "pending retry %d/%d: wakes at %s (in %s)\n", p.Attempt, p.MaxAttempts, p.WakeAt.Local().Format("15:04:05.000"), left)
	}
	fmt.Fprintf(w, "pendingMessageCount %d", st.PendingMessageCount)
	if st.SteeringMode != "" || st.FollowUpMode != "" {
		fmt.Fprintf(w, "  steeringMode %s  followUpMode %s", st.SteeringMode, st.FollowUpMode)
	}
	fmt.Fprintln(w)
	if len(st.RunningTools) > 0 {
		fmt.Fprintf(w, "running tools: %s\n", strings.Join(st.RunningTools, ", "))
	}
	if st.WaitingForHost != "" {
		fmt.Fprintf(w, "waiting for host %s: no worker of it has picked up the tool call\n", st.WaitingForHost)
	}
	for _, p := range st.PendingApprovals {
		fmt.Fprintf(w, "waiting for approval: %s (%s)", ApprovalLine(p.ToolName, p.Args), p.ToolCallID)
		if p.ExpiresAt != nil {
			fmt.Fprintf(w, " (denied at %s unless decided)", p.ExpiresAt.Local().Format("15:04:05"))
		}
		if p.Why != "" {
			fmt.Fprintf(w, " (asked by %s)", p.Why)
		}
		if p.SessionScope != "" {
			fmt.Fprintf(w, "\n  --for-session allows %s", p.SessionScope)
		}
		fmt.Fprintf(w, "\n  starter approve --session %s %s [--deny --reason TEXT] [--for-session]\n", st.SessionID, p.ToolCallID)
	}
	for _, d := range st.ToolDecisions {
		fmt.Fprintf(w, "policy: %s %s %s by %s\n", d.Policy, d.ToolName, d.ToolCallID, d.Why)
	}
	for _, warn := range st.Warnings {
		fmt.Fprintf(w, "session file warning: %s\n", warn)
	}
}

// ApprovalLine shows a call waiting for approval: the tool and its main
// argument as written (a command whole, up to 2000 runes), else its
// arguments' JSON on one line of at most 120 runes, without the HTML
// escapes of the preview's encoding ("\u003e" is ">").
func ApprovalLine(name string, args json.RawMessage) string {
	if v := MainArg(args); v != "" {
		return name + " " + line.Cut(v, 2000)
	}
	var b bytes.Buffer
	var v any
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if json.Unmarshal(args, &v) != nil || enc.Encode(v) != nil {
		b.Reset()
		b.Write(args)
	}
	return name + " " + line.Cut(strings.TrimSpace(b.String()), 120)
}
