package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"time"
)

// cgroupRoot finds the cgroup below which each sandbox gets a cgroup of
// controller ("pids" for MaxProcesses, "memory" for MemoryMB) of its
// own, whose limit binds the sandbox's processes together, whatever user
// runs them (RLIMIT_NPROC counts the user's processes and never binds
// root; RLIMIT_AS binds each process apart): the worker's cgroup (read
// from cgroupFile, /proc/self/cgroup, and mountinfoFile,
// /proc/self/mountinfo) in the cgroup v2 hierarchy when controller is in
// its cgroup.controllers and cgroup.subtree_control (so its children
// have the controller's files), else in the controller's cgroup v1
// hierarchy when v1File, the limit's file, is in that cgroup or in one
// made below it (a v1 root cgroup has no pids.max); either only when the
// worker may make a cgroup there. It returns that directory and whether
// it is v2, or "" and why neither, in a few words.
func cgroupRoot(controller, v1File, cgroupFile, mountinfoFile string) (dir string, v2 bool, why string) {
	b, err := os.ReadFile(cgroupFile)
	if err != nil {
		return "", false, "cannot read " + cgroupFile
	}
	var v1Path, v2Path string
	var inV1, inV2 bool
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		parts := strings.SplitN(l, ":", 3)
		switch {
		case len(parts) != 3:
		case parts[0] == "0" && parts[1] == "":
			v2Path, inV2 = parts[2], true
		case slices.Contains(strings.Split(parts[1], ","), controller):
			v1Path, inV1 = parts[2], true
		}
	}
	mi, err := os.ReadFile(mountinfoFile)
	if err != nil {
		return "", false, "cannot read " + mountinfoFile
	}
	var v1Mount, v1Root, v2Mount, v2Root string
	for _, l := range strings.Split(string(mi), "\n") {
		// ID PARENT MAJ:MIN ROOT MOUNTPOINT OPTIONS [OPTIONAL...] - FSTYPE SOURCE SUPER
		pre, post, found := strings.Cut(l, " - ")
		f, g := strings.Fields(pre), strings.Fields(post)
		if !found || len(f) < 5 || len(g) < 1 {
			continue
		}
		switch {
		case g[0] == "cgroup2" && v2Mount == "":
			v2Mount, v2Root = f[4], f[3]
		case g[0] == "cgroup" && len(g) >= 3 && slices.Contains(strings.Split(g[2], ","), controller) && v1Mount == "":
			v1Mount, v1Root = f[4], f[3]
		}
	}
	var whyV2, whyV1 string
	switch {
	case !inV2:
		whyV2 = "the worker is in no cgroup v2 hierarchy"
	case v2Mount == "":
		whyV2 = "no cgroup v2 hierarchy is mounted"
	default:
		d := filepath.Join(v2Mount, below(v2Root, v2Path))
		c, _ := os.ReadFile(filepath.Join(d, "cgroup.controllers"))
		s, _ := os.ReadFile(filepath.Join(d, "cgroup.subtree_control"))
		switch {
		case !slices.Contains(strings.Fields(string(c)), controller):
			whyV2 = fmt.Sprintf("the cgroup v2 hierarchy has no %s controller for %s", controller, d)
		case !slices.Contains(strings.Fields(string(s)), controller):
			whyV2 = fmt.Sprintf("%s is not in %s", controller, filepath.Join(d, "cgroup.subtree_control"))
		case !canMake(d):
			whyV2 = fmt.Sprintf("cannot make a cgroup in %s", d)
		default:
			return d, true, ""
		}
	}
	switch {
	case !inV1 || v1Mount == "":
		whyV1 = fmt.Sprintf("no cgroup v1 %s hierarchy", controller)
	default:
		d := filepath.Join(v1Mount, below(v1Root, v1Path))
		switch {
		case !exists(filepath.Join(d, v1File)) && !canMake(d, v1File):
			whyV1 = fmt.Sprintf("%s has no %s", d, v1File)
		case !canMake(d):
			whyV1 = fmt.Sprintf("cannot make a cgroup in %s", d)
		default:
			return d, false, ""
		}
	}
	return "", false, whyV2 + "; " + whyV1
}

// below is the directory of cgroup path p in a hierarchy mounted from
// its directory root (a mount of part of the hierarchy, as in a
// container, shows p relative to root).
func below(root, p string) string {
	if root != "/" {
		if rel, ok := strings.CutPrefix(p, root); ok {
			return rel
		}
	}
	return p
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// canMake tells whether the worker may make a cgroup in dir that has
// the files named (it makes one and removes it).
func canMake(dir string, files ...string) bool {
	probe, err := os.MkdirTemp(dir, "durable-agent-probe-")
	if err != nil {
		return false
	}
	defer os.Remove(probe)
	for _, f := range files {
		if !exists(filepath.Join(probe, f)) {
			return false
		}
	}
	return true
}

// cgroup is one sandbox's pids cgroup or memory cgroup (v1 or v2), or
// both in one (v2, where a process is in one cgroup only).
type cgroup struct {
	dir    string
	v2     bool
	shared bool // a memory limit set in the sandbox's pids cgroup (newMemGroup)
}

// cgroupSeq numbers the cgroups of this process.
var cgroupSeq atomic.Int64

// newCgroup makes the cgroup durable-agent-<kind><pid>-<n> under root
// (the names sweepCgroups knows); what names its limit in errors.
func newCgroup(root, kind, what string, v2 bool) (*cgroup, error) {
	dir := filepath.Join(root, fmt.Sprintf("durable-agent-%s%d-%d", kind, os.Getpid(), cgroupSeq.Add(1)))
	if err := os.Mkdir(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sandbox %s cgroup: %w", what, err)
	}
	return &cgroup{dir: dir, v2: v2}, nil
}

// newPidsGroup makes a cgroup under root whose pids.max is max.
func newPidsGroup(root string, max int64) (*cgroup, error) {
	g, err := newCgroup(root, "", "pids", false)
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(filepath.Join(g.dir, "pids.max"), []byte(strconv.FormatInt(max, 10)), 0o644); err != nil {
		g.remove()
		return nil, fmt.Errorf("sandbox pids cgroup: %w", err)
	}
	return g, nil
}

// newMemGroup makes a cgroup under root whose memory limit is mb MiB,
// swap included (v2 memory.max and memory.swap.max 0; v1
// memory.limit_in_bytes and memory.memsw.limit_in_bytes, where the
// kernel accounts swap). With shared (v2, where a process is in one
// cgroup only, and the sandbox's pids cgroup is in the same directory
// as root), it sets the limit in that cgroup instead, which its pids
// group removes.
func newMemGroup(root string, v2 bool, mb int64, shared *cgroup) (*cgroup, error) {
	if shared != nil {
		g := &cgroup{dir: shared.dir, v2: true, shared: true}
		return g, g.limit(mb)
	}
	g, err := newCgroup(root, "mem-", "memory", v2)
	if err != nil {
		return nil, err
	}
	if err := g.limit(mb); err != nil {
		g.remove()
		return nil, err
	}
	return g, nil
}

// limit sets the cgroup's memory limit (newMemGroup).
func (g *cgroup) limit(mb int64) error {
	dir, v2 := g.dir, g.v2
	limit := strconv.FormatInt(mb<<20, 10)
	file, swap, swapValue := "memory.limit_in_bytes", "memory.memsw.limit_in_bytes", limit
	if v2 {
		file, swap, swapValue = "memory.max", "memory.swap.max", "0"
	}
	if err := os.WriteFile(filepath.Join(dir, file), []byte(limit), 0o644); err != nil {
		return fmt.Errorf("sandbox memory cgroup: %w", err)
	}
	if exists(filepath.Join(dir, swap)) {
		// Without it, swap would hold what the limit does not.
		_ = os.WriteFile(filepath.Join(dir, swap), []byte(swapValue), 0o644)
	}
	return nil
}

// procs is the file a process writes its pid to in order to join.
func (g *cgroup) procs() string { return filepath.Join(g.dir, "cgroup.procs") }

// refused is how many forks pids.max refused ("max N" of pids.events).
func (g *cgroup) refused() int64 {
	return cgroupCount(filepath.Join(g.dir, "pids.events"), "max")
}

// oomKills is how many processes of the cgroup the kernel's OOM killer
// killed at its limit ("oom_kill N" of v2 memory.events, of v1
// memory.oom_control).
func (g *cgroup) oomKills() int64 {
	name := "memory.oom_control"
	if g.v2 {
		name = "memory.events"
	}
	return cgroupCount(filepath.Join(g.dir, name), "oom_kill")
}

// cgroupCount is the number on the line "key N" of a cgroup's flat keyed
// file (memory.events, pids.events); 0 when there is none.
func cgroupCount(file, key string) int64 {
	b, _ := os.ReadFile(file)
	for l := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(l, " "); ok && k == key {
			n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			return n
		}
	}
	return 0
}

// remove removes the cgroup (empty once the sandbox is gone); a shared
// one goes with its pids group.
func (g *cgroup) remove() {
	if g != nil && !g.shared {
		removeCgroup(g.dir)
	}
}

// MemoryLimitNote is the one line the worker says at start when
// tools.sandbox.memoryMB is set: which limit it is, a memory cgroup per
// command or the RLIMIT_AS fallback and why ("" when memoryMB is 0).
func (r *Runner) MemoryLimitNote() string {
	if r.cfg.MemoryMB <= 0 {
		return ""
	}
	if r.mem != "" {
		v := "v1"
		if r.memV2 {
			v = "v2"
		}
		return fmt.Sprintf("sandbox: tools.sandbox.memoryMB %d is a memory cgroup (%s) of each command under %s: its processes together, swap included; no RLIMIT_AS", r.cfg.MemoryMB, v, r.mem)
	}
	return fmt.Sprintf("sandbox: tools.sandbox.memoryMB %d falls back to RLIMIT_AS, the address space of each process, not the command's memory as a whole: no memory cgroup can be made (%s)", r.cfg.MemoryMB, r.noMem)
}

// StartNote is what the worker says at start about the runner's limits
// in one line ("" when there is nothing to say): that
// tools.sandbox.maxProcesses falls back to RLIMIT_NPROC when no pids
// cgroup can be made, and MemoryLimitNote.
func (r *Runner) StartNote() string {
	var notes []string
	if r.cfg.MaxProcesses > 0 && r.pids == "" {
		notes = append(notes, fmt.Sprintf("sandbox: tools.sandbox.maxProcesses %d falls back to RLIMIT_NPROC (%s), which counts all of the worker user's processes and does not bind root", r.cfg.MaxProcesses, r.noPids))
	}
	return strings.Join(slices.DeleteFunc(append(notes, r.MemoryLimitNote()), func(n string) bool { return n == "" }), "; ")
}

// removeCgroup removes a cgroup directory whose processes are gone. The
// kernel may still count a process that has just exited (EBUSY) for a
// moment: it tries again for up to a second.
func removeCgroup(dir string) {
	for i := 0; ; i++ {
		err := os.Remove(dir)
		if err == nil || os.IsNotExist(err) || !errors.Is(err, syscall.EBUSY) || i == 100 {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// sweepCgroups removes the cgroups under root that a worker made and
// left when it died before its sandboxes ended (their names carry its
// pid: durable-agent-[mem-]PID-N), once that worker is gone: only an
// empty cgroup can be removed, so one still in use stays.
func sweepCgroups(root string) {
	dirs, _ := filepath.Glob(filepath.Join(root, "durable-agent-*"))
	for _, d := range dirs {
		f := strings.Split(filepath.Base(d), "-")
		pid, err := strconv.Atoi(f[len(f)-2])
		if err != nil || pid <= 0 || pid == os.Getpid() {
			continue
		}
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			_ = os.Remove(d)
		}
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
