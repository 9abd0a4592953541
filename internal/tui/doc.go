// Package tui is the terminal UI of `starter chat --session ID`, built on
// bubbletea, bubbles and lipgloss: a message list where the answer and
// tool output stream as they come, an input box, and a status line with a
// spinner that says what the running prompt waits for and what Esc sends
// (abort; abort_retry during a retry's backoff).
//
// docs/tui.md is the contract: the status and stats lines, live output
// (the stored message_end and tool_execution_end win over what streamed),
// tool approval, steer and follow-up, reopening a session (each message
// once), the slash commands and keys. Quitting detaches a running prompt,
// which keeps running in Temporal.
//
// The model talks to a client.Session (which RPC mode serves too). Tests
// run it without a terminal: events given as plain values to a Model on a
// session whose Temporal cannot be reached, and the chat's calls against
// the embedded server (server_test.go).
package tui
