package app

import (
	"fmt"

	"github.com/durableagent/durableagent/internal/sandbox"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/tools"
)

// bwrapBinary is the bubblewrap program ToolRunner uses ("": the
// sandbox package's default); tests point it at a missing one.
var bwrapBinary = ""

// ToolRunner is the runner of the worker's tool calls under
// tools.sandbox.*: a bubblewrap sandbox (its probe passed), or tools.Local
// for tools.sandbox.mode off. Under mode auto, where bubblewrap is missing
// or fails its probe, dev (worker --dev, the demo) gets tools.Local and
// any other worker an error that says how to choose. note is the one line
// the worker says at start when bash runs unsandboxed ("" when it runs in
// the sandbox).
func ToolRunner(s settings.Settings, dev bool) (r tools.Runner, note string, err error) {
	sb := s.Tools.Sandbox
	if sb.Mode == settings.SandboxOff {
		return tools.Local, "bash runs unsandboxed, as the worker's user (tools.sandbox.mode off)", nil
	}
	br, err := sandbox.New(sandbox.Config{
		Binary:       bwrapBinary,
		Network:      sb.Network,
		MemoryMB:     sb.MemoryMB,
		MaxProcesses: sb.MaxProcesses,
		CPUSeconds:   sb.CPUSeconds,
		// A workspace holding the data dir (a session in the home
		// directory) must not show the credentials, settings, sessions
		// and Temporal's files in it.
		Hide: []string{s.DataDir},
	})
	if sb.Network == settings.SandboxNetworkAllowlist {
		// Another engineer's egress proxy (internal/egress) plugs in at
		// sandbox.Config.ProxySocket; until then it is refused.
		return nil, "", fmt.Errorf("tools.sandbox.network allowlist is not available yet (it needs the egress proxy); use off or host")
	}
	if err == nil {
		err = br.Probe()
	}
	switch {
	case err == nil:
		return br, "", nil
	case sb.Mode == settings.SandboxBubblewrap:
		return nil, "", fmt.Errorf("tools.sandbox.mode bubblewrap: %w", err)
	case dev:
		return tools.Local, fmt.Sprintf("bash runs unsandboxed, as the worker's user: %v (dev only; see docs/security.md)", err), nil
	}
	return nil, "", fmt.Errorf("refusing to run tools unsandboxed: %v; install bubblewrap or set tools.sandbox.mode off on purpose (docs/security.md)", err)
}
