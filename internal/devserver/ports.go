package devserver

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// ListenError reports that the dev server cannot listen on an address:
// the port is in use (errors.Is(err, syscall.EADDRINUSE)), or another
// reason, most often an IP that is not an address of this machine
// (EADDRNOTAVAIL, "cannot assign requested address"). Its message is one
// line that names the port or the address and the setting to change;
// Unwrap gives the listen error.
type ListenError struct {
	// Port is the port that could not be bound (0: any free port).
	Port int
	// IP is the address the bind was attempted on.
	IP string
	// Role says which listener it was: "frontend" or "ui" for the ports
	// a user can set, else the server's service whose port Start picked
	// ("frontend HTTP", "history", "matching", "worker").
	Role string
	// Err is the error returned by the listen attempt.
	Err error
}

// Error returns the one-line explanation shown to users.
func (e *ListenError) Error() string {
	if errors.Is(e.Err, syscall.EADDRINUSE) {
		switch e.Role {
		case roleUI:
			return fmt.Sprintf("devserver: UI port %d on %s is in use (another Temporal UI running? set dev.uiPort, or dev.ui to false)", e.Port, e.IP)
		case roleFrontend:
			return fmt.Sprintf("devserver: port %d on %s is in use (another Temporal server running? set dev.port)", e.Port, e.IP)
		}
		return fmt.Sprintf("devserver: port %d on %s, picked for the %s service, was taken by another program before the server bound it", e.Port, e.IP, e.Role)
	}
	addr := hostPort(e.IP, e.Port)
	if e.Port == 0 {
		addr = e.IP + " (any free port)"
	}
	reason := e.Err.Error()
	var errno syscall.Errno
	if errors.As(e.Err, &errno) {
		reason = errno.Error() // the OS's words; the address is named already
	}
	if errors.Is(e.Err, syscall.EADDRNOTAVAIL) {
		return fmt.Sprintf("devserver: cannot listen on %s: %s (%s is not an address of this machine; set dev.ip, e.g. to 127.0.0.1)",
			addr, reason, e.IP)
	}
	return fmt.Sprintf("devserver: cannot listen on %s: %s", addr, reason)
}

// Unwrap returns the listen error.
func (e *ListenError) Unwrap() error { return e.Err }

const (
	roleFrontend     = "frontend"
	roleUI           = "ui"
	roleFrontendHTTP = "frontend HTTP"
	roleHistory      = "history"
	roleMatching     = "matching"
	roleWorker       = "worker"
)

// Ports that Start picks come from outside the kernel's ephemeral range,
// which the kernel hands to any program asking for a free port in the
// seconds before the server binds them (the package doc's contract).
const (
	// pickLow is the lowest port picked: below it are the fixed ports of
	// well-known services (7233, 8233, 5432, 9090, ...).
	pickLow = 10000
	// pickMinSpan is the fewest ports a range beside the ephemeral one
	// must offer to be picked from (see pickRange).
	pickMinSpan = 1000
	// pickTries bounds the random draws of one pick.
	pickTries = 100
	// ephemeralRangeFile holds Linux's ephemeral range, "32768\t60999".
	ephemeralRangeFile = "/proc/sys/net/ipv4/ip_local_port_range"
)

// ephemeralRange is the range the kernel hands ports out from. Off Linux
// (or when it cannot be read) it is taken as 32768-65535, which covers
// Linux's default and the BSDs', macOS's and Windows' 49152-65535.
func ephemeralRange() (lo, hi int) {
	if b, err := os.ReadFile(ephemeralRangeFile); err == nil {
		if lo, hi, ok := parsePortRange(string(b)); ok {
			return lo, hi
		}
	}
	return 32768, 65535
}

// parsePortRange reads "low high" (any white space between).
func parsePortRange(s string) (lo, hi int, ok bool) {
	f := strings.Fields(s)
	if len(f) != 2 {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(f[0])
	hi, err2 := strconv.Atoi(f[1])
	if err1 != nil || err2 != nil || lo < 1 || hi > 65535 || lo > hi {
		return 0, 0, false
	}
	return lo, hi, true
}

// pickRange is where pickPort draws from, given the ephemeral range
// ephLo-ephHi: the ports from pickLow up to ephLo, else those above ephHi.
// When neither offers pickMinSpan ports (a range configured to cover
// nearly everything) it is every port from pickLow: no port is then safe
// from the kernel, and Start's retry with new ports covers a lost race.
func pickRange(ephLo, ephHi int) (lo, hi int) {
	if ephLo-pickLow >= pickMinSpan {
		return pickLow, ephLo - 1
	}
	if 65535-ephHi >= pickMinSpan {
		return max(ephHi+1, pickLow), 65535
	}
	return pickLow, 65535
}

// pickPort returns a port on ip from pickRange that is free now and not
// in avoid (the plan's other ports).
func pickPort(ip string, avoid map[int]bool) (int, error) {
	lo, hi := pickRange(ephemeralRange())
	for range pickTries {
		p := lo + rand.IntN(hi-lo+1)
		if avoid[p] {
			continue
		}
		l, err := net.Listen("tcp", hostPort(ip, p))
		if errors.Is(err, syscall.EADDRINUSE) {
			continue
		}
		if err != nil {
			return 0, fmt.Errorf("pick a free port on %s: %w", ip, err)
		}
		// No connection was made, so the port is free again at once.
		_ = l.Close()
		return p, nil
	}
	// Not wrapped: this is no single port in use.
	return 0, fmt.Errorf("pick a free port on %s: %d random ports in %d-%d were all in use", ip, pickTries, lo, hi)
}

// takenPort returns the address of a listen that failed because the
// port was in use, from anywhere in err's chain.
func takenPort(err error) (*net.TCPAddr, bool) {
	var op *net.OpError
	if !errors.As(err, &op) || op.Op != "listen" || !errors.Is(err, syscall.EADDRINUSE) {
		return nil, false
	}
	addr, ok := op.Addr.(*net.TCPAddr)
	return addr, ok
}

// resolvePort returns the port to use for a listener configured as port:
// 0 picks a free port not in avoid, anything else must be free right now.
// It binds a set port and releases it at once: a successful bind is the
// only portable way to know that the server's own bind will not fail
// later, deep inside the server (or, for the UI, in a goroutine that would
// exit the process on error).
func resolvePort(ip string, port int, role string, avoid map[int]bool) (int, error) {
	if port == 0 {
		p, err := pickPort(ip, avoid)
		if err != nil {
			return 0, &ListenError{IP: ip, Role: role, Err: err}
		}
		return p, nil
	}
	l, err := net.Listen("tcp", hostPort(ip, port))
	if err != nil {
		return 0, &ListenError{Port: port, IP: ip, Role: role, Err: err}
	}
	return port, l.Close()
}
