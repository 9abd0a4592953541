package app

import (
	"fmt"
	"log/slog"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/egress"
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
// the worker says at start when bash runs unsandboxed, or sandboxed with
// maxProcesses as an rlimit or with memoryMB (a cgroup or an rlimit:
// sandbox.Runner.StartNote; "" when none of these). Network allowlist needs tools.sandbox.allowHosts; its
// proxies log to slog.Default() and its bridge is this binary, whose
// main must call egress.MaybeRunBridge.
func ToolRunner(s settings.Settings, dev bool) (r tools.Runner, note string, err error) {
	sb := s.Tools.Sandbox
	if sb.Mode == settings.SandboxOff {
		return tools.Local, "bash runs unsandboxed, as the worker's user (tools.sandbox.mode off)", nil
	}
	cfg := sandbox.Config{
		Binary:       bwrapBinary,
		Network:      sb.Network,
		MemoryMB:     sb.MemoryMB,
		MaxProcesses: sb.MaxProcesses,
		CPUSeconds:   sb.CPUSeconds,
		// A workspace holding the data dir (a session in the home
		// directory) must not show the credentials, settings, sessions
		// and Temporal's files in it.
		Hide: []string{s.DataDir},
		// The worker's worktrees, whose git directories it recorded.
		Worktrees: worktreeDir(s),
	}
	if sb.Network == settings.SandboxNetworkAllowlist {
		// An allow-list that allows nothing is a mistake, not a choice:
		// network off says that.
		if len(sb.AllowHosts) == 0 {
			return nil, "", fmt.Errorf("tools.sandbox.network allowlist needs tools.sandbox.allowHosts (the hosts bash may reach); list some, or use network off")
		}
		allow, err := egress.ParseAllowList(sb.AllowHosts)
		if err != nil {
			return nil, "", fmt.Errorf("tools.sandbox.allowHosts: %w", err)
		}
		// Each sandbox gets its own proxy; its request lines go to the
		// worker's log. The bridge is this (the worker's) binary.
		cfg.Egress = egress.Options{Allow: allow, Logger: slog.Default().With("component", "egress")}
	}
	br, err := sandbox.New(cfg)
	if err == nil {
		err = br.Probe()
	}
	switch {
	case err == nil:
		return br, br.StartNote(), nil // "" but for memoryMB and rlimits a cgroup would do better
	case sb.Mode == settings.SandboxBubblewrap:
		return nil, "", fmt.Errorf("tools.sandbox.mode bubblewrap: %w", err)
	case dev:
		return tools.Local, fmt.Sprintf("bash runs unsandboxed, as the worker's user: %v (dev only; see docs/security.md)", err), nil
	}
	return nil, "", fmt.Errorf("refusing to run tools unsandboxed: %v; install bubblewrap or set tools.sandbox.mode off on purpose (docs/security.md)", err)
}

// worktreeDir is where the worker makes sessions' git worktrees.
func worktreeDir(s settings.Settings) string { return filepath.Join(s.DataDir, "worktrees") }
