// Package tui is the terminal UI of `starter chat --session ID`, built on
// bubbletea, bubbles and lipgloss: a message list, an input box, and a
// status line with a spinner while the model works.
//
// Contract (SPEC 10 and issue 6):
//   - While a prompt runs the status line reads "Working… (esc to abort)"
//     and Esc sends abort.
//   - On auto_retry_start Esc is bound to abort_retry and the status line
//     reads "Retrying (attempt/maxAttempts) in Ns… (esc to cancel)",
//     counting down every second. When the wait is over (the retried call's
//     agent_start) or the chain ends (auto_retry_end) the previous binding
//     and line are back. A chain that fails shows "Retry failed after N
//     attempts: <finalError>" in the message list.
//   - During a compaction the line reads "Auto-compacting… (esc to
//     cancel)", prefixed "Context overflow detected, " for an overflow; Esc
//     sends abort.
//   - Slash commands: /retry on|off, /compact [instructions], /state,
//     /help, /quit. Ctrl+C quits too. Quitting detaches a running prompt,
//     which keeps running in Temporal.
//
// The model talks to an rpcserver.Backend, the same interface RPC mode
// serves, so tests drive it with the fake backend (package rpcfake)
// without a terminal or a Temporal server.
package tui
