// Package rpcserver is the server side of RPC mode (`starter rpc`): Serve
// reads newline-delimited JSON commands, answers each with one response
// line, and streams the events of the prompts it starts, in the protocol
// of package rpc (docs/rpc.md).
//
// Contract:
//   - One JSON object per output line; writes are serialised, so a response
//     and an event never interleave.
//   - Bad input never ends the loop: a line that cannot be served gets an
//     error response and the next line is served.
//   - A prompt is acknowledged once its workflow has started. Its events
//     follow in seq order, each exactly once, up to prompt_end (through
//     client.Session.Follow, which waits out a failing event query),
//     completed from the session (completer) and framed as pi 1.6 frames
//     message_update (framer). A prompt whose stream cannot be followed
//     gets an error response with its id after its last event.
//   - End of input (or ctx) detaches a running prompt, which keeps running
//     durably in Temporal.
//
// The server is the protocol only: it parses commands, dispatches them to
// a client.Session (which the terminal UI drives too) and converts the
// product's types to package rpc's.
package rpcserver
