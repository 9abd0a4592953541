// Package egress is the network path out of a sandbox whose
// tools.sandbox.network is allowlist: an HTTP proxy the worker serves on a
// unix socket, and a bridge that runs inside the sandbox's own network
// namespace and carries 127.0.0.1:PORT connections to that socket.
// docs/security.md says what a sandbox reaches through it.
//
// Contract of the Proxy (Listen):
//   - It serves CONNECT host:port (tunnelled byte for byte) and
//     absolute-URI http:// requests (forwarded without proxy headers); any
//     other request gets 400.
//   - A request is allowed only when its host matches the AllowList
//     (ParsePattern). The proxy resolves names itself and dials only the
//     addresses it checked: an Internal address is never dialled unless it
//     is itself listed, so a listed name that resolves to 127.0.0.1 is
//     refused.
//   - A denied request gets 403 with one line naming the host and
//     tools.sandbox.allowHosts; every request is logged in one slog line.
//   - It is bounded: Options' timeouts and MaxConns, headers of at most
//     64 KiB, dials of at most 15 s, copies through fixed 32 KiB buffers.
//     Close ends every request and tunnel and removes the socket's
//     directory.
//
// The bridge (MaybeRunBridge, run by BridgeArgv in a sandbox set up with
// SandboxArgs) listens on a loopback TCP address inside the sandbox, copies
// each connection to a new connection to the proxy's socket, knows nothing
// of HTTP, and runs the command with ProxyEnv's variables. Programs that
// ignore them get no network at all: the namespace has only its loopback.
package egress
