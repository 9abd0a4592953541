package devserver

import (
	"errors"
	"fmt"
	"net"
	"strconv"
	"syscall"
)

// PortInUseError reports that a port the dev server must listen on is taken.
// Its message is one line that names the port, the address and the setting
// to change; Unwrap gives the underlying listen error.
type PortInUseError struct {
	// Port is the port that could not be bound.
	Port int
	// IP is the address the bind was attempted on.
	IP string
	// Role says which listener it was: "frontend" or "ui".
	Role string
	// Err is the error returned by the listen attempt.
	Err error
}

// Error returns the one-line explanation shown to users.
func (e *PortInUseError) Error() string {
	if e.Role == roleUI {
		return fmt.Sprintf("devserver: UI port %d on %s is in use (another Temporal UI running? set dev.uiPort, or dev.ui to false)", e.Port, e.IP)
	}
	return fmt.Sprintf("devserver: port %d on %s is in use (another Temporal server running? set dev.port)", e.Port, e.IP)
}

// Unwrap returns the listen error.
func (e *PortInUseError) Unwrap() error { return e.Err }

// ListenError reports that the dev server cannot listen on an address
// for a reason other than the port being in use: most often an IP that is
// not an address of this machine (EADDRNOTAVAIL, "cannot assign requested
// address"). Its message is one line that names the address and gives the
// operating system's reason; Unwrap gives the listen error.
type ListenError struct {
	// Port is the port that could not be bound (0: any free port).
	Port int
	// IP is the address the bind was attempted on.
	IP string
	// Role says which listener it was: "frontend", "ui" or "" for the
	// server's internal listeners.
	Role string
	// Err is the error returned by the listen attempt.
	Err error
}

// Error returns the one-line explanation shown to users.
func (e *ListenError) Error() string {
	addr := net.JoinHostPort(e.IP, strconv.Itoa(e.Port))
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

// listenError says why listening on ip:port failed: *PortInUseError only
// when the port is taken.
func listenError(ip string, port int, role string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return &PortInUseError{Port: port, IP: ip, Role: role, Err: err}
	}
	return &ListenError{Port: port, IP: ip, Role: role, Err: err}
}

const (
	roleFrontend = "frontend"
	roleUI       = "ui"
)

// checkPortFree binds ip:port and releases it at once. A successful bind is
// the only portable way to know that the server's own bind will not fail
// later, deep inside the server (or, for the UI, in a goroutine that would
// exit the process on error).
func checkPortFree(ip string, port int, role string) error {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, strconv.Itoa(port)))
	if err != nil {
		return listenError(ip, port, role, err)
	}
	return l.Close()
}

// freePort asks the kernel for an unused port on ip.
//
// On Linux a port handed out for bind(:0) can be handed out again right after
// it is released, so another process could race us to it before the server
// binds. To make that unlikely the port is left in TIME_WAIT: a connection is
// made to it and closed from the accepting side first. The kernel then does
// not give the port to other bind(:0) callers for a while, while the server,
// which binds it explicitly with SO_REUSEADDR, still can.
func freePort(ip string) (int, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip, "0"))
	if err != nil {
		return 0, fmt.Errorf("pick a free port on %s: %w", ip, err)
	}
	defer l.Close()
	addr := l.Addr().(*net.TCPAddr)

	client, err := net.DialTCP("tcp", nil, addr)
	if err != nil {
		// Without the TIME_WAIT trick the port is still free, just less reserved.
		return addr.Port, nil
	}
	defer client.Close()
	accepted, err := l.Accept()
	if err != nil {
		return addr.Port, nil
	}
	// Closing the accepted side first puts that side, which owns the port,
	// into TIME_WAIT.
	_ = accepted.Close()
	return addr.Port, nil
}

// resolvePort returns the port to use for a listener configured as port:
// 0 picks a free port, anything else must be free right now.
func resolvePort(ip string, port int, role string) (int, error) {
	if port == 0 {
		p, err := freePort(ip)
		if err != nil {
			return 0, listenError(ip, 0, role, err)
		}
		return p, nil
	}
	if err := checkPortFree(ip, port, role); err != nil {
		return 0, err
	}
	return port, nil
}
