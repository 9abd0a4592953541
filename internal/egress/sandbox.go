package egress

// SandboxDir is where SandboxArgs put the bridge program and the proxy's
// socket inside a sandbox.
const SandboxDir = "/run/egress"

// Paths inside the sandbox of the bridge program and the proxy's socket.
const (
	SandboxBridge = SandboxDir + "/bridge"
	SandboxSocket = SandboxDir + "/proxy.sock"
)

// SandboxArgs are the bubblewrap arguments that make SandboxDir and bind
// into it the program exe (the worker binary, whose main calls
// MaybeRunBridge), read-only, and the proxy's socket, alone: the sandbox
// sees neither the socket's directory nor anything else of the worker's.
// They must come after an argument that makes /run writable in the
// sandbox (--tmpfs /run) and with --unshare-net, whose loopback the
// bridge listens on.
func SandboxArgs(exe, socket string) []string {
	return []string{
		"--dir", SandboxDir,
		"--ro-bind", exe, SandboxBridge,
		"--bind", socket, SandboxSocket,
	}
}

// BridgeArgv is the command line, inside a sandbox set up with
// SandboxArgs, that runs cmd behind the bridge (listening on
// DefaultBridgeAddr, cmd's environment given ProxyEnv) and exits with
// cmd's status.
func BridgeArgv(cmd ...string) []string {
	return append([]string{SandboxBridge, BridgeCommand, "--socket", SandboxSocket, "--listen", DefaultBridgeAddr, "--"}, cmd...)
}
