package activities

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/tools"
)

// UserBashName is the registered name of UserBash.
const UserBashName = "UserBash"

// UserBashInput is the input of UserBash: a command the user runs in the
// session's workspace (RPC bash), and where its entry goes.
type UserBashInput struct {
	SessionID string `json:"sessionId"`
	// EntryID is the id of the bashExecution entry (chosen by the
	// workflow); ParentID the entry it follows.
	EntryID  string `json:"entryId"`
	ParentID string `json:"parentId,omitempty"`
	Command  string `json:"command"`
	// Workspace is the session's workspace (from its header).
	Workspace string `json:"workspace"`
	// TimeoutMs bounds the command (0: tools.bashTimeoutMs, else none).
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// ExcludeFromContext marks the entry as kept from the model
	// (agent.Message.ExcludeFromContext).
	ExcludeFromContext bool `json:"excludeFromContext,omitempty"`
}

// UserBashResult describes the command's outcome; the output itself is in
// the session entry (history carries its preview only).
type UserBashResult struct {
	EntryID   string `json:"entryId"`
	ExitCode  *int   `json:"exitCode,omitempty"`
	Cancelled bool   `json:"cancelled,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	// Preview is the output's start (PreviewChars).
	Preview string `json:"preview,omitempty"`
}

// UserBash runs a command the user typed (RPC bash) in the session's
// workspace with the bash tool: the worker's secrets are scrubbed from
// its environment as for the model's bash calls, its output is cut like
// theirs (the full output kept in the workspace), and it is written to
// the session as the terminal agent's bashExecution message, which the
// model sees as a user message on the next prompt. A re-run returns the
// entry already written instead of running the command again. Cancelled
// (abort_bash), it stops the command's process group and records the
// output so far as cancelled.
func (a *Activities) UserBash(ctx context.Context, in UserBashInput) (UserBashResult, error) {
	if strings.TrimSpace(in.Command) == "" || in.EntryID == "" {
		return UserBashResult{}, badInput(errors.New("user bash: empty command or entry id"))
	}
	sess, err := a.load(in.SessionID)
	if err != nil && !errors.Is(err, session.ErrNotFound) {
		return UserBashResult{}, err
	}
	if err == nil {
		if e, ok := sess.Get(in.EntryID); ok && e.Message != nil {
			return userBashResult(in.EntryID, *e.Message), nil
		}
	}
	if err := a.checkWorkspace(in.Workspace); err != nil {
		return UserBashResult{}, err
	}
	// As a bash tool call: abort_bash reaches it at a heartbeat, its
	// output tail is live output (RPC bash_execution_update).
	args, _ := json.Marshal(map[string]string{"command": in.Command})
	res := a.runTool(ctx, live.NewTool(in.EntryID, "", tools.Bash), tools.Bash, args,
		a.toolOptions(in.Workspace, in.SessionID, true, in.TimeoutMs))
	if cancelledWithoutAbort(ctx) {
		// Not an abort (the command was killed all the same): write
		// nothing; the workflow reports the command's fate unknown.
		return UserBashResult{}, cutError(ctx, "bash")
	}
	msg := BashExecutionMessage(in.Command, res, ctx.Err() != nil)
	msg.ExcludeFromContext = in.ExcludeFromContext
	msg.Timestamp = time.Now().UnixMilli()
	entry := session.Entry{Type: session.TypeMessage, ID: in.EntryID, ParentID: in.ParentID,
		Timestamp: time.Now().UTC(), Message: &msg}
	if _, err := a.Sessions.Append(in.SessionID, entry); err != nil {
		return UserBashResult{}, storeError("write bash execution", err)
	}
	// Also when cancelled: the result is the partial output, as the
	// terminal agent reports an aborted command.
	return userBashResult(in.EntryID, msg), nil
}

// BashExecutionMessage turns the bash tool's result into the terminal
// agent's bashExecution message: the output without the tool's status
// line, the exit code (none when cancelled or killed before exiting), and
// the truncation details.
func BashExecutionMessage(command string, res tools.Result, cancelled bool) agent.Message {
	m := agent.Message{Role: agent.RoleBashExecution, Command: command, Output: res.Content,
		Cancelled: cancelled || res.Details["aborted"] == true, Truncated: res.Details["truncated"] == true}
	if res.IsError {
		// The tool appends its status ("Command exited with code 2") after
		// a blank line; the message keeps the output only.
		m.Output = m.Output[:max(strings.LastIndex(m.Output, "\n\n"), 0)]
	} else if m.Output == "(no output)" {
		m.Output = ""
	}
	if code, ok := res.Details["exitCode"].(int); ok && !cancelled {
		m.ExitCode = &code
	}
	// Set with truncated only.
	m.FullOutputPath, _ = res.Details["fullOutputPath"].(string)
	return m
}

func userBashResult(id string, m agent.Message) UserBashResult {
	return UserBashResult{EntryID: id, ExitCode: m.ExitCode, Cancelled: m.Cancelled, Truncated: m.Truncated,
		Preview: line.Cut(m.Output, PreviewChars)}
}
