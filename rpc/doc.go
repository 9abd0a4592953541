// Package rpc is the wire protocol of the durable agent's RPC mode,
// `starter rpc [--session ID]`: its commands, responses, the events it
// adds, the data of each response, and DecodeLine for a line it writes.
// The server is package rpcserver; the client is the terminal agent's
// own RpcClient (test/pirpc), or any program that writes and reads these
// lines (rpc/e2e does).
//
// The protocol is the terminal agent's (@mariozechner/pi-coding-agent
// 0.73.1, whose own RpcClient drives `starter rpc` unchanged through a
// one-line cliPath shim), plus what a durable backend adds; docs/rpc.md has
// every command and event and each difference. In short:
//
//   - Newline-delimited JSON both ways, one object per line, no envelope.
//   - Commands go to the process's stdin: {"id"?: string, "type": "...",
//     ...fields}. The id is optional and echoed in the response.
//   - Responses come on stdout: {"id"?, "type": "response", "command",
//     "success": true, "data"?} or {..., "success": false, "error"}.
//   - Events come on stdout as they happen, in the terminal agent's shapes
//     plus "seq" and "time": every event of a prompt once, in seq order,
//     ending with prompt_end (ours).
//   - A prompt is acknowledged as soon as its workflow has started; its
//     progress and completion come as events (a failure too: agent_end's
//     stopReason and prompt_end's status). Only when its event stream
//     cannot be followed to the end does an error response with the
//     prompt's id follow.
//   - Bad input never ends the process: it gets an error response (command
//     = the command type, or "parse") and the next line is served. Closing
//     stdin ends the process with exit status 0; a running prompt keeps
//     running durably in Temporal.
//
// Events are agent.Event values; this package does not redefine them.
package rpc
