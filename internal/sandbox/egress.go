package sandbox

import (
	"cmp"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/egress"
)

// egressPath is one allowlist sandbox's way out: its own proxy, on a
// socket in a directory only the worker's user can enter.
type egressPath struct {
	dir   string
	exe   string
	proxy *egress.Proxy
	log   *slog.Logger // nil: slog.Default()
}

// startEgress starts the proxy of one sandbox of c.
func startEgress(c Config) (*egressPath, error) {
	// The bridge is this program: its main calls egress.MaybeRunBridge.
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("sandbox egress bridge: %w", err)
	}
	// MkdirTemp makes the directory 0700.
	dir, err := os.MkdirTemp("", "egress-")
	if err != nil {
		return nil, fmt.Errorf("sandbox egress proxy: %w", err)
	}
	p, err := egress.Listen(filepath.Join(dir, "proxy.sock"), c.Egress)
	if err != nil {
		os.RemoveAll(dir)
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	return &egressPath{dir: dir, exe: exe, proxy: p, log: c.Egress.Logger}, nil
}

// close stops the proxy and removes its directory; nil does nothing.
func (e *egressPath) close() {
	if e == nil {
		return
	}
	if err := e.proxy.Close(); err != nil {
		cmp.Or(e.log, slog.Default()).Warn("sandbox egress proxy close", "error", err)
	}
	_ = os.RemoveAll(e.dir)
}
