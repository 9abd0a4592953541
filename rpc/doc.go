// Package rpc is the RPC mode of the durable agent: the wire protocol of
// `starter rpc --session ID` and Client, a Go client that spawns that
// process and speaks the protocol.
//
// Protocol (docs/rpc.md has the full reference and a real transcript):
//
//   - Newline-delimited JSON both ways, one object per line, no envelope.
//   - Commands go to the process's stdin: {"id"?: string, "type": "...",
//     ...fields}. The id is optional and echoed in the response.
//   - Responses come on stdout: {"id"?, "type": "response", "command",
//     "success": true, "data"?} or {..., "success": false, "error"}.
//   - Events come on stdout as they happen, one JSON object per line, in
//     exactly the shape of the workflow's events (agent.Event): every event
//     of a prompt once, in seq order, ending with prompt_end.
//   - A prompt is acknowledged as soon as its workflow has started; its
//     progress and completion come as events. When the prompt then fails or
//     is aborted, or its event stream cannot be followed to the end, an
//     error response with the prompt's id follows.
//   - Bad input never ends the process: it gets an error response (command
//     = the command type, or "parse") and the next line is served. Closing
//     stdin ends the process with exit status 0; a running prompt keeps
//     running durably in Temporal.
//
// Events are agent.Event values; this package does not redefine them.
package rpc
