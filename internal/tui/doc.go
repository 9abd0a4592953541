// Package tui is the terminal UI of `starter chat --session ID`, built on
// bubbletea, bubbles and lipgloss: a message list, an input box, and a
// status line with a spinner while the model works.
//
// Contract (SPEC 10 and issue 6):
//   - While a prompt runs the status line says what it waits for, and Esc
//     sends abort: "Calling provider/model… (esc to abort)" while a model
//     call runs, "Running bash… (esc to abort)" while tools run, "Waiting
//     for your approval… (esc to abort)" while a call waits for approval,
//     "Working… (esc to abort)" in between. A stats line below it shows the
//     prompt's model, elapsed time, turn, tokens and cost, and its budget
//     from usage_update (issue 23). A retry chain that succeeds shows
//     "Retry succeeded on attempt N".
//   - On auto_retry_start Esc is bound to abort_retry and the status line
//     reads "Retrying (attempt/maxAttempts) in Ns… (esc to cancel)",
//     counting down every second, and the stats line says "retry at
//     15:04:05". When the wait is over (the retried call's
//     agent_start) or the chain ends (auto_retry_end) the previous binding
//     and line are back. A chain that fails shows "Retry failed after N
//     attempts: <finalError>" in the message list.
//   - During a compaction the line reads "Auto-compacting… (esc to
//     cancel)", prefixed "Context overflow detected, " for an overflow; Esc
//     sends abort.
//   - Live output (issue 11): the assistant's text shows as its
//     message_update deltas arrive (thinking dimmed, tool-call arguments as
//     they are written); its message_end replaces it (the stored message
//     wins). Deltas of a later attempt, and an error message_end, drop a
//     failed attempt's partial text; stale deltas (an earlier attempt, an
//     ended message) are ignored. Tool calls show their arguments, the
//     latest lines of their output from tool_execution_update (each
//     replaces the last) and, from tool_execution_end, ✓ or ✗ and the
//     result as terminal agents show it (issue 23, package toolview): an
//     edit's diff with added lines green and removed lines red, a
//     command's last lines and exit code, an error's text. A result
//     longer than the event's preview is read whole from the backend's
//     Messages. Ctrl+O shows every result whole and back; PgUp/PgDown
//     scroll the message list.
//   - Tool approval (issue 12): a tool_approval_request shows the call's
//     arguments (read whole from the session; the event's are a preview)
//     in place of the input box, one call at a time in request order: y
//     approves, n asks for an optional reason and Enter denies
//     (approve_tool). A call decided elsewhere (its tool_execution_start
//     or _end, a state read that no longer lists it, the prompt's end)
//     leaves the screen. Esc keeps its bindings.
//   - Steer and follow-up (issue 12), bound as in the terminal agent:
//     while a prompt runs Enter sends steer and Alt+Enter follow_up
//     (also /steer TEXT, /followup TEXT). Queued messages show above the
//     status line until their user message_end; those the prompt ends
//     without delivering go back into the input, and Alt+Up takes the
//     newest back from the prompt's queue (issue 40) to edit or drop.
//   - Reopening a session shows its earlier messages (the backend's
//     Messages) before following a running prompt from its first event;
//     the running prompt's own messages show once, from its events.
//   - Slash commands: /retry on|off, /compact [instructions], /state,
//     /steer, /followup, /help, /quit. Ctrl+C quits too. Quitting detaches
//     a running prompt, which keeps running in Temporal.
//
// The model talks to a client.Session (which RPC mode
// serves too). Tests run it without a terminal: events given as plain
// values to a Model on a session whose Temporal cannot be reached, and
// the chat's calls against the embedded server (server_test.go).
package tui
