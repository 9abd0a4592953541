package devserver

import (
	"cmp"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"sync"
	"syscall"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	"go.temporal.io/server/common/config"
	"go.temporal.io/server/common/primitives"
	"go.temporal.io/server/temporal"
)

// Defaults of Options.IP and Options.Namespace.
const (
	DefaultIP        = "127.0.0.1"
	DefaultNamespace = "default"

	// NoUI as Options.UIPort disables the Web UI.
	NoUI = -1
)

// startTimeout bounds how long Start waits for the frontend and the UI to
// answer once the services are up (a cold start on 2 cores takes seconds).
const startTimeout = 60 * time.Second

// bindAttempts bounds how often Start builds the server with new ports
// after a port it picked was taken before the server bound it.
const bindAttempts = 3

// testHookPlanned, set only by tests, sees every listen plan before the
// server binds it.
var testHookPlanned func(listenPlan)

// uiStopWait bounds how long Stop waits for the UI goroutine to return.
const uiStopWait = 10 * time.Second

// Options configures an embedded dev server.
type Options struct {
	// DataDir holds the SQLite file <DataDir>/temporal.db and a lock file.
	// Required. Created with mode 0700 if missing.
	DataDir string
	// IP is the address the frontend and the UI listen on. Empty means
	// DefaultIP (127.0.0.1): the dev server has no authentication, so it
	// stays on loopback unless told otherwise.
	IP string
	// Port is the frontend gRPC port, normally 7233 (dev.port).
	// 0 picks a free port (tests).
	Port int
	// UIPort is the Web UI port, normally 8233 (dev.uiPort).
	// 0 picks a free port; NoUI (-1) runs no UI.
	UIPort int
	// Namespace is created on first start if missing. Empty means
	// DefaultNamespace. New namespaces keep closed workflows for 7 days.
	Namespace string
	// Logger receives the server's logs at Warn and above. Nil writes them
	// to the file <DataDir>/server.log (Server.LogFile), or, with
	// LogToStderr, to stderr.
	Logger      *slog.Logger
	LogToStderr bool

	// tlsServer and tlsClient, set only by tests (tls_test.go), make the
	// frontend serve TLS so that clients' TLS settings can be tested
	// against a real frontend: tlsServer edits the server configuration,
	// tlsClient is the TLS of the server's own readiness client.
	tlsServer func(*config.Config)
	tlsClient *tls.Config
}

// Server is a running embedded dev server. Its methods are safe for
// concurrent use.
type Server struct {
	frontendAddr string
	uiAddr       string

	temporal temporal.Server
	ui       *uiserver.Server
	uiDone   <-chan error
	dir      *dataDir
	logGate  *logGate
	// logFile is the file of the default logger (nil with a caller's
	// logger or LogToStderr).
	logFile *os.File

	stopOnce sync.Once
	stopErr  error
}

// FrontendAddress is the host:port that SDK clients dial, e.g.
// "127.0.0.1:7233".
func (s *Server) FrontendAddress() string { return s.frontendAddr }

// UIAddress is the Web UI's base URL, e.g. "http://127.0.0.1:8233", or ""
// when the UI is disabled.
func (s *Server) UIAddress() string { return s.uiAddr }

// LogFile is the file the server logs to ("" when it logs to the
// caller's Logger or to stderr).
func (s *Server) LogFile() string {
	if s.logFile == nil {
		return ""
	}
	return s.logFile.Name()
}

// Start runs the server and returns once the frontend serves the namespace
// and the UI (if enabled) answers HTTP. ctx bounds only the start; the
// server runs until Stop. On error nothing is left running and the data dir
// is released.
func Start(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	dir, err := openDataDir(opts.DataDir)
	if err != nil {
		return nil, err
	}
	s := &Server{dir: dir, logGate: new(logGate)}
	started := false
	defer func() {
		if !started {
			_ = s.Stop()
		}
	}()
	if opts.Logger == nil {
		if opts.Logger, s.logFile, err = defaultLogger(dir.path, opts.LogToStderr); err != nil {
			return nil, err
		}
	}

	plan, uiPort, err := planListeners(opts)
	if err != nil {
		return nil, err
	}

	sql := sqlConfig(dir.dbPath())
	if err := prepareDatabase(sql, dir.dbPath(), opts.Namespace); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return nil, fmt.Errorf("devserver: start cancelled: %w", err)
		}
		s.frontendAddr = plan.frontendAddr()
		s.temporal, err = buildServer(plan, sql, opts, s.logGate)
		if err == nil {
			break
		}
		// A port Start picked was taken in the moment between the pick
		// and the server's bind: new ports will do. A port the user set
		// is the user's to change.
		var inUse *ListenError
		if !errors.As(err, &inUse) || !errors.Is(err, syscall.EADDRINUSE) || (inUse.Role == roleFrontend && opts.Port != 0) {
			return nil, err
		}
		if attempt == bindAttempts {
			return nil, fmt.Errorf("%w (%d attempts, each with new ports)", err, attempt)
		}
		if plan, uiPort, err = planListeners(opts); err != nil {
			return nil, err
		}
	}
	if err := s.temporal.Start(); err != nil {
		return nil, fmt.Errorf("devserver: start server on %s: %w", s.frontendAddr, err)
	}

	if uiPort != NoUI {
		s.ui = newUI(plan.ip, uiPort, s.frontendAddr, opts.Namespace)
		s.uiDone = runUI(s.ui)
		s.uiAddr = "http://" + hostPort(plan.reachIP, uiPort)
	}

	waitCtx, cancel := context.WithTimeoutCause(ctx, startTimeout,
		fmt.Errorf("not ready after %s", startTimeout))
	defer cancel()
	if err := awaitFrontend(waitCtx, s.frontendAddr, opts.Namespace, opts.tlsClient); err != nil {
		return nil, err
	}
	if s.ui != nil {
		if err := waitHTTP(waitCtx, s.uiAddr, s.uiDone); err != nil {
			return nil, err
		}
	}
	started = true
	return s, nil
}

// Stop shuts down the UI, then every server service (each finishes its
// in-flight persistence writes, so the SQLite file stays consistent), and
// releases the data dir. Calling it again returns the first call's result.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.shutdown() })
	return s.stopErr
}

func (s *Server) shutdown() error {
	s.logGate.quiet()
	var errs []error
	if s.ui != nil {
		s.ui.Stop()
		select {
		case <-s.uiDone:
		case <-time.After(uiStopWait):
			errs = append(errs, fmt.Errorf("devserver: UI %s did not stop within %s", s.uiAddr, uiStopWait))
		}
	}
	if s.temporal != nil {
		if err := s.temporal.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("devserver: stop server %s: %w", s.frontendAddr, err))
		}
	}
	if err := s.dir.release(); err != nil {
		errs = append(errs, err)
	}
	if s.logFile != nil {
		_ = s.logFile.Close()
	}
	return errors.Join(errs...)
}

// normalize applies defaults and rejects values that cannot work.
func (o *Options) normalize() error {
	if o.DataDir == "" {
		return errors.New("devserver: data dir is required")
	}
	o.IP = cmp.Or(o.IP, DefaultIP)
	if net.ParseIP(o.IP) == nil { // the server binds and advertises addresses, not names
		return fmt.Errorf("devserver: IP %q is not an IP address", o.IP)
	}
	if o.Port < 0 || o.Port > 65535 {
		return fmt.Errorf("devserver: port %d is out of range 0-65535", o.Port)
	}
	if o.UIPort < NoUI || o.UIPort > 65535 {
		return fmt.Errorf("devserver: UI port %d is out of range 0-65535 (or -1 for no UI)", o.UIPort)
	}
	o.Namespace = cmp.Or(o.Namespace, DefaultNamespace)
	if o.Namespace == primitives.SystemLocalNamespace {
		return fmt.Errorf("devserver: namespace %q is reserved by the server", o.Namespace)
	}
	return nil
}

// planListeners resolves every port before anything starts, so a taken port
// is reported plainly instead of as a bind failure inside one service.
func planListeners(o Options) (listenPlan, int, error) {
	plan := listenPlan{ip: o.IP, reachIP: o.IP}
	if ip := net.ParseIP(o.IP); ip.IsUnspecified() {
		// Listening on all interfaces; dial through loopback.
		plan.reachIP = "127.0.0.1"
		if ip.To4() == nil {
			plan.reachIP = "::1"
		}
	}
	// The fixed ports are never picked for another listener.
	avoid := map[int]bool{o.Port: true, o.UIPort: true}
	var err error
	if plan.frontend, err = resolvePort(o.IP, o.Port, roleFrontend, avoid); err != nil {
		return plan, 0, err
	}
	avoid[plan.frontend] = true
	uiPort := NoUI
	if o.UIPort != NoUI {
		if uiPort, err = resolvePort(o.IP, o.UIPort, roleUI, avoid); err != nil {
			return plan, 0, err
		}
		avoid[uiPort] = true
	}
	internal := []struct {
		ip   string
		port *int
	}{
		{o.IP, &plan.http},
		{internalIP, &plan.history},
		{internalIP, &plan.matching},
		{internalIP, &plan.worker},
	}
	for _, l := range internal {
		if *l.port, err = pickPort(l.ip, avoid); err != nil {
			return plan, 0, fmt.Errorf("devserver: %w", err)
		}
		avoid[*l.port] = true
	}
	if testHookPlanned != nil {
		testHookPlanned(plan)
	}
	return plan, uiPort, nil
}

// buildServer builds (does not start) the server's services for plan.
//
// The server binds every gRPC listener while it is built, and a listener
// that cannot bind makes it log Fatal and carry on with a nil listener
// (go.temporal.io/server v1.32.0, common/rpc.createGRPCListener). Our
// logger does not exit on Fatal, so that would panic later: at once for
// the frontend (its HTTP API reads the listener's address), or, for
// history, matching and the worker, on Start, in a goroutine that serves
// the nil listener, where nothing can recover it. So a Fatal logged while
// building fails the build, with that panic recovered, and the server is
// never started. A port found in use is a *ListenError naming the
// listener's role in plan.
//
// What a failed build opened (the listeners it did bind, database
// handles, goroutines) the server offers no call to close without
// starting it, so it stays until the process ends: about 45 goroutines
// and 5 open files per failed build, measured on top of the 100 or so
// goroutines a started and stopped server leaves anyway. Start builds at
// most bindAttempts times, and only after a lost port race.
func buildServer(plan listenPlan, sql *config.SQL, opts Options, gate *logGate) (srv temporal.Server, err error) {
	cfg := serverConfig(plan, sql)
	if opts.tlsServer != nil {
		opts.tlsServer(cfg)
	}
	fatal := new(fatalLog)
	defer func() {
		f := fatal.err()
		if f == nil {
			return // a panic without a Fatal before it is a bug: let it through
		}
		_ = recover() // the server going on past its Fatal
		srv, err = nil, plan.inUse(f)
	}()
	srv, err = temporal.NewServer(
		temporal.ForServices(temporal.DefaultServices),
		temporal.WithConfig(cfg),
		temporal.WithStaticHosts(staticHosts(plan)),
		temporal.WithDynamicConfigClient(dynamicConfig()),
		temporal.WithLogger(serverLogger{log: opts.Logger.With("component", "temporal-server"), gate: gate, fatal: fatal}),
	)
	if err != nil {
		// The frontend's HTTP API listener fails with an error, not a Fatal.
		return nil, plan.inUse(fmt.Errorf("devserver: build server: %w", err))
	}
	return srv, nil
}
