// Package rpc is the wire protocol of the durable agent's RPC mode,
// `starter rpc [--session ID]`: its commands, responses, the events it
// adds, the data of each response, and DecodeLine for a line it writes.
// The server is package rpcserver; the client is the terminal agent's
// own RpcClient (test/pirpc), or any program that writes and reads these
// lines (rpc/e2e does).
//
// The protocol is the terminal agent's (@mariozechner/pi-coding-agent
// 0.73.1, and pi 1.6's additions) plus what a durable backend adds:
// newline-delimited JSON commands on stdin, one response line per command
// and the prompt's events on stdout. docs/rpc.md has every command and
// event and each difference. Events are agent.Event values; this package
// does not redefine them.
package rpc
