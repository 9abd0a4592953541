package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
)

// pidsRoot is the pids cgroup (v1 controller or v2 unified hierarchy)
// the worker is in, when the worker may make cgroups below it: the
// directory, or "" and why not. Each sandbox with MaxProcesses gets a
// cgroup of its own there whose pids.max bounds the sandbox's
// processes, whatever user runs them (RLIMIT_NPROC counts the user's
// processes and never binds root).
func pidsRoot() (string, string) {
	b, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return "", "cannot read /proc/self/cgroup"
	}
	var dir string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(l, ":", 3)
		if len(parts) != 3 {
			continue
		}
		switch {
		case slices.Contains(strings.Split(parts[1], ","), "pids"):
			dir = filepath.Join("/sys/fs/cgroup/pids", parts[2])
		case parts[0] == "0" && parts[1] == "" && dir == "":
			if c, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && slices.Contains(strings.Fields(string(c)), "pids") {
				dir = filepath.Join("/sys/fs/cgroup", parts[2])
			}
		}
	}
	if dir == "" {
		return "", "no pids cgroup controller"
	}
	probe, err := os.MkdirTemp(dir, "durable-agent-probe-")
	if err != nil {
		return "", fmt.Sprintf("cannot make a cgroup in %s", dir)
	}
	_, err = os.Stat(filepath.Join(probe, "pids.max"))
	_ = os.Remove(probe)
	if err != nil {
		return "", fmt.Sprintf("%s has no pids.max", dir)
	}
	return dir, ""
}

var pidsSeq atomic.Int64

// pidsGroup is one sandbox's pids cgroup.
type pidsGroup struct{ dir string }

// newPidsGroup makes a cgroup under root whose pids.max is max.
func newPidsGroup(root string, max int64) (*pidsGroup, error) {
	dir := filepath.Join(root, fmt.Sprintf("durable-agent-%d-%d", os.Getpid(), pidsSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox pids cgroup: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pids.max"), []byte(strconv.FormatInt(max, 10)), 0o644); err != nil {
		_ = os.Remove(dir)
		return nil, fmt.Errorf("sandbox pids cgroup: %w", err)
	}
	return &pidsGroup{dir: dir}, nil
}

// procs is the file a process writes its pid to in order to join.
func (g *pidsGroup) procs() string { return filepath.Join(g.dir, "cgroup.procs") }

// refused is how many forks pids.max refused ("max N" of pids.events).
func (g *pidsGroup) refused() int64 {
	return cgroupCount(filepath.Join(g.dir, "pids.events"), "max")
}

// remove removes the cgroup (empty once the sandbox is gone).
func (g *pidsGroup) remove() {
	if g != nil {
		removeCgroup(g.dir)
	}
}

// joinScript is the shell that starts bwrap in a sandbox's cgroups: it
// writes its pid to each cgroup.procs file it is given, up to "--", then
// becomes bwrap (the rest of its arguments).
const joinScript = `while [ "$1" != -- ]; do echo $$ >"$1" || exit 125; shift; done; shift; exec "$@"`

// bwrapProcesses are bwrap's own processes in a sandbox's cgroup (bwrap
// and the PID namespace's init), added to MaxProcesses in pids.max.
const bwrapProcesses = 2

// bridgeTasks is the room left in pids.max for the egress bridge of
// network allowlist (the worker binary: a Go program, several threads,
// and pids.max counts threads).
const bridgeTasks = 16
