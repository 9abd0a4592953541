// Package rpcserver is the server side of RPC mode (`starter rpc`): Serve
// reads newline-delimited JSON commands, answers each with one response
// line, and streams the events of the prompts it starts, in the protocol
// of package rpc (docs/rpc.md).
//
// Contract:
//   - One JSON object per output line; writes are serialised, so a response
//     and an event never interleave.
//   - Bad input never ends the loop: a line that is not JSON, is not valid
//     UTF-8, is longer than the maximum, names an unknown type, or has a
//     missing, unknown or wrongly typed field gets an error response and the
//     next line is served.
//   - A prompt is acknowledged once its workflow has started. Its events
//     follow in seq order, each exactly once, up to prompt_end, also when
//     the event query fails for a while (the follower waits it out and
//     goes on after the last seq it wrote, and the live text of a running
//     call where the client has it: client.Session.Follow), completed from the session (whole messages, agent_end's
//     messages) and message_update framed as pi 1.6 frames it (framer; with
//     Protocol ProtocolPi073 also the answer so far). A prompt whose stream
//     cannot be followed gets an error response with its id after its last
//     event; a prompt that fails or is aborted says so in its events only.
//   - End of input (or ctx) detaches a running prompt: Serve stops following
//     it and returns, and the prompt keeps running durably in Temporal.
//
// The server is the protocol only: it parses commands, dispatches them to
// a client.Session (which the terminal UI drives
// too) and converts the product's types to package rpc's.
package rpcserver
