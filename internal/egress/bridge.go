package egress

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"sync"
	"syscall"
	"time"
)

// BridgeCommand is the first argument that makes a program that calls
// MaybeRunBridge run the bridge instead of itself.
const BridgeCommand = "__egress-bridge"

// DefaultBridgeAddr is where the bridge listens inside the sandbox, whose
// loopback is its own (--unshare-net).
const DefaultBridgeAddr = "127.0.0.1:3128"

// ProxyEnv is the environment that sends a command's HTTP(S) traffic to
// a bridge listening on addr: HTTP_PROXY, HTTPS_PROXY, ALL_PROXY in both
// cases, and NO_PROXY for the sandbox's own loopback.
func ProxyEnv(addr string) []string {
	u := "http://" + addr
	return []string{
		"HTTP_PROXY=" + u, "HTTPS_PROXY=" + u, "ALL_PROXY=" + u,
		"http_proxy=" + u, "https_proxy=" + u, "all_proxy=" + u,
		"NO_PROXY=localhost,127.0.0.1,::1", "no_proxy=localhost,127.0.0.1,::1",
	}
}

// Bridge accepts connections on ln and copies each, both ways, to a new
// connection to the proxy's unix socket, until ctx is done; then it
// closes ln and every connection and returns. A connection the socket
// refuses is closed at once.
func Bridge(ctx context.Context, ln net.Listener, socket string) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer ln.Close()
	for {
		c, err := ln.Accept()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				time.Sleep(10 * time.Millisecond)
				continue
			}
			return fmt.Errorf("egress bridge: accept on %s: %w", ln.Addr(), err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			var d net.Dialer
			up, err := d.DialContext(ctx, "unix", socket)
			if err != nil {
				c.Close()
				return
			}
			splice(ctx, c, up, 0)
		}()
	}
}

// MaybeRunBridge runs the bridge and exits when args (a main's
// os.Args[1:]) start with BridgeCommand; otherwise it returns at once.
// A main calls it first thing.
func MaybeRunBridge(args []string) {
	if len(args) == 0 || args[0] != BridgeCommand {
		return
	}
	os.Exit(RunBridge(args[1:], os.Stderr))
}

// RunBridge is the bridge command: --socket PATH (the proxy's socket as
// the sandbox sees it) and --listen ADDR (default DefaultBridgeAddr),
// then "--" and a command. It listens, runs the command with ProxyEnv
// added to the environment and signals passed on, and returns its exit
// status when it ends. Problems go to stderr on one line; the status is
// 2 for bad arguments and 127 for a command that cannot start.
func RunBridge(args []string, stderr io.Writer) int {
	fs := flag.NewFlagSet(BridgeCommand, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	socket := fs.String("socket", "", "the egress proxy's unix socket")
	listen := fs.String("listen", DefaultBridgeAddr, "loopback address to listen on")
	fail := func(code int, format string, a ...any) int {
		fmt.Fprintf(stderr, "egress bridge: "+format+"\n", a...)
		return code
	}
	if err := fs.Parse(args); err != nil {
		return fail(2, "%v", err)
	}
	if *socket == "" {
		return fail(2, "--socket is required")
	}
	if host, _, err := net.SplitHostPort(*listen); err != nil || !LoopbackHost(host) {
		return fail(2, "--listen %q must be a loopback host:port", *listen)
	}
	if fs.NArg() == 0 {
		return fail(2, "a command is required after --")
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail(2, "listen on %s: %v", *listen, err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan error, 1)
	go func() { served <- Bridge(ctx, ln, *socket) }()
	defer func() { cancel(); <-served }()

	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP)
	defer signal.Stop(sigs)
	cmd := exec.Command(fs.Arg(0), fs.Args()[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), ProxyEnv(ln.Addr().String())...)
	if err := cmd.Start(); err != nil {
		return fail(127, "start %s: %v", fs.Arg(0), err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	for {
		select {
		case s := <-sigs:
			cmd.Process.Signal(s)
		case <-waited:
			return exitStatus(cmd)
		}
	}
}

// exitStatus is a shell's status for the ended command: its code, or
// 128 plus the signal that killed it. tools.ExitOf is the same rule; egress
// does not import internal/tools, which would add a floor to the tree.
func exitStatus(cmd *exec.Cmd) int {
	if cmd.ProcessState == nil {
		return 1 // Wait failed before the command ended
	}
	if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return cmd.ProcessState.ExitCode()
}

// LoopbackHost says whether host is "localhost" or a loopback IP address.
func LoopbackHost(h string) bool {
	ip := net.ParseIP(h)
	return h == "localhost" || ip != nil && ip.IsLoopback()
}
