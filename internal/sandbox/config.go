package sandbox

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"

	"github.com/durableagent/durableagent/internal/egress"
)

// Networks of a sandbox (tools.sandbox.network).
const (
	// NetworkOff gives the command a network namespace of its own with
	// nothing in it: no address, the host's loopback included, is
	// reachable.
	NetworkOff = "off"
	// NetworkHost keeps the worker's network namespace: every address
	// the worker reaches, its loopback services included.
	NetworkHost = "host"
	// NetworkAllowlist gives the command a network namespace of its own
	// whose only way out is an egress proxy (internal/egress) the runner
	// starts for that one command, allowing the hosts of Config.Egress.
	NetworkAllowlist = "allowlist"
)

// DefaultBinary is where bubblewrap is looked for first.
const DefaultBinary = "/usr/bin/bwrap"

// Config is what a sandbox allows. The zero value is network off and no
// rlimits but the namespaces.
type Config struct {
	// Binary is the bwrap program ("": DefaultBinary, else bwrap on PATH).
	Binary string
	// Network is NetworkOff ("" too), NetworkHost or NetworkAllowlist.
	Network string
	// Egress configures the proxy of NetworkAllowlist: Allow (which must
	// not be empty), Logger (its request lines) and the rest as
	// egress.Options documents.
	Egress egress.Options
	// MemoryMB bounds the sandbox's memory, in MiB: with a memory
	// cgroup of its own where the worker may make one (New finds out;
	// all of its processes together, swap included, the kernel's OOM
	// killer ending one at the limit), else each process's address space
	// (RLIMIT_AS); 0: no limit.
	MemoryMB int64
	// MaxProcesses bounds the sandbox's processes: with a pids cgroup
	// of its own where the worker may make one (New finds out), else
	// RLIMIT_NPROC, which counts every process of the worker's user and
	// which the kernel does not apply to root; 0: no limit.
	MaxProcesses int64
	// CPUSeconds bounds each process's CPU time (RLIMIT_CPU: SIGXCPU at
	// the limit, SIGKILL a second later); 0: no limit.
	CPUSeconds int64
	// Hide lists directories the command must not see even when they are
	// inside its workspace (the worker's data dir): each is covered by an
	// empty tmpfs.
	Hide []string
	// Worktrees is the directory the worker makes sessions' git worktrees
	// in (<dataDir>/worktrees): a workspace in one of them gets the git
	// directory the worker recorded when it made it (worktreeGitDir).
	Worktrees string

	// pidsCgroup: MaxProcesses is a cgroup's pids.max, not an rlimit.
	pidsCgroup bool
	// memCgroup: MemoryMB is a memory cgroup's limit, not RLIMIT_AS.
	memCgroup bool
}

// check validates c: one-line errors naming the field.
func (c Config) check() error {
	switch c.Network {
	case "", NetworkOff, NetworkHost:
	case NetworkAllowlist:
		if c.Egress.Allow.Empty() {
			return errors.New("sandbox network allowlist has no allowed hosts; list some or use network off")
		}
	default:
		return fmt.Errorf("sandbox network %q is not one of off, host, allowlist", c.Network)
	}
	for name, v := range map[string]int64{"memoryMB": c.MemoryMB, "maxProcesses": c.MaxProcesses, "cpuSeconds": c.CPUSeconds} {
		if v < 0 {
			return fmt.Errorf("sandbox %s %d is negative", name, v)
		}
	}
	for _, h := range c.Hide {
		if !filepath.IsAbs(h) {
			return fmt.Errorf("sandbox hidden directory %q is not an absolute path", h)
		}
	}
	return nil
}

// binary finds the bwrap program of c.
func (c Config) binary() (string, error) {
	if c.Binary != "" {
		return c.Binary, nil
	}
	if _, err := os.Stat(DefaultBinary); err == nil {
		return DefaultBinary, nil
	}
	p, err := exec.LookPath("bwrap")
	if err != nil {
		return "", errors.New("bubblewrap (bwrap) is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
	}
	return p, nil
}
