// Package pirpc tests `starter rpc` with the terminal agent's own client:
// the RpcClient of the npm package @mariozechner/pi-coding-agent 0.73.1
// (package.json, package-lock.json), started through cli.mjs, a one-line
// cliPath shim that execs `starter rpc` with the client's arguments.
// driver.mjs calls every RpcClient method and asserts the answers; the Go
// test starts the embedded Temporal server and a worker and runs it under
// Node. It is skipped when node is not installed, and in -short mode.
package pirpc
