// Package pirpc tests `starter rpc` with the terminal agent's own clients:
// the RpcClient of the npm package @mariozechner/pi-coding-agent 0.73.1
// (package.json, package-lock.json; driver.mjs calls every method and
// asserts the answers) and that of @earendil-works/pi-coding-agent 1.6.0
// (pi16/: run under the Node 22 of the npm package node@22, which npm
// installs from the registry; pi16/driver.mjs asserts what pi 1.6 changed).
// Both are started through cli.mjs, a one-line cliPath shim that execs
// `starter rpc` with the client's arguments. The Go tests start the
// embedded Temporal server and a worker and run a driver under Node. The
// 0.73.1 run is skipped when node is not installed, the 1.6.0 run when npm
// is not; both in -short mode. usage_test.go reads `starter rpc`'s lines
// without Node (streaming usage), so that runs wherever the server does.
package pirpc
