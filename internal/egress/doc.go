// Package egress is the network path out of a sandbox whose
// tools.sandbox.network is allowlist: an HTTP proxy the worker serves on a
// unix socket, and a bridge that runs inside the sandbox's own network
// namespace and carries 127.0.0.1:PORT connections to that socket.
//
// Contract of the Proxy (Listen):
//   - It speaks HTTP/1.1 proxy requests: CONNECT host:port (HTTPS and any
//     other TCP protocol, tunnelled byte for byte) and absolute-URI http://
//     requests (forwarded without proxy headers). Any other request gets
//     400.
//   - A request is allowed only when its host matches the allow-list
//     (AllowList, the setting tools.sandbox.allowHosts): an exact name, a
//     "*.example.com" pattern (any name below example.com, not
//     example.com itself) or an IP address literal; each with an optional
//     ":port" (without one, every port of that host is allowed).
//   - The proxy resolves names itself and dials only the addresses it
//     checked. A loopback, private, link-local, unspecified, multicast or
//     shared (100.64.0.0/10) address, or one in IPv4-mapped or NAT64
//     form, is never dialled unless that address is itself listed as an
//     IP literal; so a listed name that resolves to
//     127.0.0.1 (a DNS trick aimed at the Temporal frontend or the
//     worker's ports) is refused. An IP literal request is allowed only
//     when listed.
//   - A denied request gets 403 with one line naming the host and
//     tools.sandbox.allowHosts; every request is logged in one slog line
//     (host, port, allowed, and the reason when denied).
//   - Bounded: request headers must arrive within HeaderTimeout and fit in
//     64 KiB, dials give up after 15 s, a tunnel idle in both
//     directions for IdleTimeout is closed, at most MaxConns client
//     connections are served at once, and bytes are copied through fixed
//     32 KiB buffers (nothing is buffered without bound).
//   - Close stops accepting, ends every in-flight request and tunnel and
//     removes the socket file.
//
// Contract of the bridge (Bridge, MaybeRunBridge): it listens on a
// loopback TCP address inside the sandbox and copies each connection to
// and from a new connection to the proxy's socket; it knows nothing of
// HTTP. A runner (bubblewrap with --unshare-net) uses it so:
//
//  1. Listen on a socket in a directory only the worker's user can
//     enter, with the AllowList of tools.sandbox.allowHosts: one Proxy
//     per sandbox, closed when the tool call ends.
//
//  2. Add, after --tmpfs /run, SandboxArgs(worker binary, socket): the
//     worker binary and the socket (alone) bound under /run/egress.
//
//  3. Run BridgeArgv(command...) in the sandbox:
//
//     /run/egress/bridge __egress-bridge --socket /run/egress/proxy.sock --listen 127.0.0.1:3128 -- bash -c CMD
//
//     The bridge listens first, then runs CMD with ProxyEnv's variables
//     (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY in both cases, NO_PROXY for the
//     sandbox's own loopback) so CMD cannot race the listener, passes
//     signals on and exits with CMD's status. Without "--" it serves
//     until SIGTERM, for a runner that starts it in the background and
//     sets ProxyEnv itself.
//
// Programs that ignore the proxy variables get no network at all: the
// sandbox's namespace has only its own loopback.
package egress
