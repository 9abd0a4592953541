package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// memoryCgroup looks for a cgroup v2 memory controller delegated to the
// worker: the worker's cgroup of the v2 (unified) hierarchy, read from
// cgroupFile (/proc/self/cgroup) and mountinfoFile
// (/proc/self/mountinfo), lists memory among its controllers and the
// worker may make cgroups below it. It returns that cgroup's directory,
// or "" and why not in a few words.
//
// The sandbox does not use it: tools.sandbox.memoryMB is RLIMIT_AS
// everywhere. A cgroup memory limit could not be tested where this was
// built (a cgroup v1 hybrid whose v1 hierarchy holds the memory
// controller), so it is not built; the worker says at start which it
// found (Runner.MemoryLimitNote).
func memoryCgroup(cgroupFile, mountinfoFile string) (dir, why string) {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return "", "cannot read " + cgroupFile
	}
	path, ok := "", false
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if p, found := strings.CutPrefix(l, "0::"); found {
			path, ok = p, true
		}
	}
	if !ok {
		return "", "the worker is in no cgroup v2 hierarchy"
	}
	mi, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return "", "cannot read " + mountinfoFile
	}
	mount := ""
	for _, l := range strings.Split(string(mi), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, found := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if found && len(f) >= 5 && len(g) >= 1 && g[0] == "cgroup2" {
			mount = f[4]
			break
		}
	}
	if mount == "" {
		return "", "no cgroup v2 hierarchy is mounted"
	}
	dir = filepath.Join(mount, path)
	c, err := os.ReadFile(filepath.Join(dir, "cgroup.controllers"))
	if err != nil {
		return "", fmt.Sprintf("cannot read %s", filepath.Join(dir, "cgroup.controllers"))
	}
	if !slices.Contains(strings.Fields(string(c)), "memory") {
		return "", fmt.Sprintf("the cgroup v2 hierarchy at %s has no memory controller for %s", mount, dir)
	}
	probe, err := os.MkdirTemp(dir, "durable-agent-probe-")
	if err != nil {
		return "", fmt.Sprintf("cannot make a cgroup in %s", dir)
	}
	_ = os.Remove(probe)
	return dir, ""
}

// MemoryLimitNote is the one line the worker says at start when
// tools.sandbox.memoryMB is set: that it is RLIMIT_AS, per process, and
// not a cgroup's memory limit, and why ("" when memoryMB is 0).
func (r *Runner) MemoryLimitNote() string {
	if r.cfg.MemoryMB <= 0 {
		return ""
	}
	head := fmt.Sprintf("sandbox: tools.sandbox.memoryMB %d is RLIMIT_AS, the address space of each process, not a limit on the command's memory as a whole", r.cfg.MemoryMB)
	dir, why := memoryCgroup("/proc/self/cgroup", "/proc/self/mountinfo")
	if dir == "" {
		return head + ": no delegated cgroup v2 memory controller was found (" + why + ")"
	}
	return head + ": the delegated cgroup v2 memory controller at " + dir + " is not used (docs/security.md)"
}

// StartNote is what the worker says at start about the runner's limits
// in one line: MemoryLimitNote and ProcessLimitNote ("" when neither
// has anything to say).
func (r *Runner) StartNote() string {
	var notes []string
	for _, n := range []string{r.ProcessLimitNote(), r.MemoryLimitNote()} {
		if n != "" {
			notes = append(notes, n)
		}
	}
	return strings.Join(notes, "; ")
}
