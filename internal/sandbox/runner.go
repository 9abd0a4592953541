package sandbox

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/tools"
)

// Runner is the bubblewrap tools.Runner of a Config.
type Runner struct {
	cfg Config
	bin string
	// pids is the pids cgroup under which each sandbox gets its own
	// (MaxProcesses set and the worker may make cgroups); noPids says
	// why not.
	pids, noPids string
	// mem is the memory cgroup (v2 when memV2) under which each sandbox
	// gets its own (MemoryMB set and the worker may make cgroups); noMem
	// says why not.
	mem, noMem string
	memV2      bool
}

// New checks c and finds bwrap. It does not run it: Probe does.
func New(c Config) (*Runner, error) {
	if err := c.check(); err != nil {
		return nil, err
	}
	bin, err := c.binary()
	if err != nil {
		return nil, err
	}
	r := &Runner{cfg: c, bin: bin}
	if c.MaxProcesses > 0 {
		r.pids, _, r.noPids = cgroupRoot("pids", "pids.max", "/proc/self/cgroup", "/proc/self/mountinfo")
		r.cfg.pidsCgroup = r.pids != ""
		if r.pids != "" {
			sweepCgroups(r.pids)
		}
	}
	if c.MemoryMB > 0 {
		r.mem, r.memV2, r.noMem = cgroupRoot("memory", "memory.limit_in_bytes", "/proc/self/cgroup", "/proc/self/mountinfo")
		r.cfg.memCgroup = r.mem != ""
		if r.mem != "" {
			sweepCgroups(r.mem)
		}
	}
	return r, nil
}

// Binary is the bwrap program the runner starts.
func (r *Runner) Binary() string { return r.bin }

// Config is the runner's configuration.
func (r *Runner) Config() Config { return r.cfg }

// FS is the worker-side file access of tools.Local: the file tools
// resolve paths on the worker, refusing what tools.confine refuses.
func (r *Runner) FS() tools.FS { return tools.Local.FS() }

// Probe runs `true` in a sandbox of r in a fresh temporary workspace:
// nil when bubblewrap works here (it can fail in a container without
// user namespaces, or where the kernel forbids them), else why not, in
// one line.
func (r *Runner) Probe() error {
	dir, err := os.MkdirTemp("", "sandbox-probe-")
	if err != nil {
		return fmt.Errorf("sandbox probe: %w", err)
	}
	defer os.RemoveAll(dir)
	var out strings.Builder
	p, err := r.Start(tools.Command{Dir: dir, Env: []string{"PATH=/usr/bin:/bin"}, Script: "true", Output: &out})
	if err != nil {
		return err
	}
	timeout := time.AfterFunc(10*time.Second, p.Kill)
	exit, err := p.Wait()
	if !timeout.Stop() {
		return errors.New("bubblewrap did not run `true` within 10 s")
	}
	if err != nil {
		return fmt.Errorf("bubblewrap: %w", err)
	}
	if exit.Code != 0 {
		msg := line.First(strings.TrimSpace(out.String()))
		return fmt.Errorf("bubblewrap does not work here (exit %d): %s", exit.Code, msg)
	}
	return nil
}

type process struct {
	cfg      Config
	pids     *cgroup       // nil without a pids cgroup
	refused  int64         // forks pids.max refused
	mem      *cgroup       // nil without a memory cgroup
	oomKills int64         // processes the memory cgroup's OOM killer killed
	watch    *outputWatch  // nil without limits its output can show
	status   *limitStatus  // nil without the limit shell (limitScript)
	egress   *egress.Proxy // nil but for network allowlist
	cmd      *exec.Cmd
	out      *os.File
	readDone chan struct{}
	waited   chan struct{}
	waitErr  error
	killed   atomic.Bool // Kill was called: the init is killed too
}

// Start runs c.Script in a new sandbox (see Config.args) in c.Dir with
// environment c.Env, its stdin c.Stdin, its output passed on to c.Output
// and its stderr c.Stderr (nil: with stdout); with network allowlist,
// behind an egress proxy of its own that closes when the sandbox ends.
func (r *Runner) Start(c tools.Command) (_ tools.Process, err error) {
	// What the launch made so far, undone in reverse if it fails.
	var undo []func()
	defer func() {
		if err != nil {
			for i := len(undo) - 1; i >= 0; i-- {
				undo[i]()
			}
		}
	}()
	var eg *egress.Proxy
	exe, socket := "", ""
	if r.cfg.Network == NetworkAllowlist {
		// The bridge is this program: its main calls egress.MaybeRunBridge.
		if exe, err = os.Executable(); err != nil {
			return nil, fmt.Errorf("sandbox egress bridge: %w", err)
		}
		if eg, err = egress.Listen(r.cfg.Egress); err != nil {
			return nil, fmt.Errorf("sandbox: %w", err)
		}
		undo = append(undo, func() { eg.Close() })
		socket = eg.Path()
	}
	args, err := r.cfg.args(c.Dir, c.Script, exe, socket)
	if err != nil {
		return nil, err
	}
	pr, pw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { pr.Close(); pw.Close() })
	// bwrap tells the host pid of the sandbox's init on fd 3 (--info-fd):
	// Wait waits for that init, whose end is the namespace's.
	ir, iw, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	undo = append(undo, func() { ir.Close(); iw.Close() })
	argv := append([]string{r.bin, "--info-fd", "3"}, args...)
	extra := []*os.File{iw}
	var st *limitStatus
	if r.cfg.limitScript(shell()) != "" {
		// The limit shell reports on fd 4 (statusFd).
		if st, err = newLimitStatus(); err != nil {
			return nil, err
		}
		undo = append(undo, st.close)
		extra = append(extra, st.w)
	}
	var join []string // the cgroup.procs files bwrap is started in
	var pg *cgroup
	if r.pids != "" {
		// pids.max counts bwrap and its init too (the limit shell, the
		// egress bridge's threads).
		max := r.cfg.MaxProcesses + bwrapProcesses
		if st != nil {
			max++
		}
		if eg != nil {
			max += bridgeTasks
		}
		if pg, err = newPidsGroup(r.pids, max); err != nil {
			return nil, err
		}
		undo = append(undo, pg.remove)
		join = append(join, pg.procs())
	}
	var mg *cgroup
	if r.mem != "" {
		var shared *cgroup
		if r.memV2 && pg != nil && filepath.Clean(r.pids) == filepath.Clean(r.mem) {
			shared = pg // cgroup v2: one cgroup for both limits
		}
		if mg, err = newMemGroup(r.mem, r.memV2, r.cfg.MemoryMB, shared); err != nil {
			return nil, err
		}
		undo = append(undo, mg.remove)
		if shared == nil {
			join = append(join, mg.procs())
		}
	}
	if len(join) > 0 {
		// A shell that joins the cgroups, then becomes bwrap: every
		// process of the sandbox is born in them.
		argv = append(append([]string{"/bin/sh", "-c", joinScript, "sh"}, join...), append([]string{"--"}, argv...)...)
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.ExtraFiles = extra
	// bwrap passes its environment to the command: the call's, nothing
	// of the worker's (not even for a nil c.Env).
	cmd.Env = append([]string{}, c.Env...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = c.Stdin, pw, pw
	if c.Stderr != nil {
		cmd.Stderr = c.Stderr
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bubblewrap: %w", err)
	}
	pw.Close()
	iw.Close()
	st.started()
	initPid := make(chan int, 1)
	go func() {
		defer ir.Close()
		var info struct {
			ChildPid int `json:"child-pid"`
		}
		// One JSON object; bwrap may keep the pipe open after it.
		_ = json.NewDecoder(ir).Decode(&info)
		initPid <- info.ChildPid
	}()
	p := &process{cfg: r.cfg, pids: pg, mem: mg, status: st, egress: eg, cmd: cmd, out: pr,
		readDone: make(chan struct{}), waited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		if err := awaitInit(initPid, p.killed.Load()); err != nil && p.waitErr == nil {
			p.waitErr = err
		}
		// The sandbox is gone, and with it every user of the proxy and
		// every member of the cgroup.
		if p.egress != nil {
			p.egress.Close()
		}
		p.status.finish()
		if p.pids != nil {
			p.refused = p.pids.refused()
			p.pids.remove()
		}
		if p.mem != nil {
			p.oomKills = p.mem.oomKills()
			p.mem.remove()
		}
		close(p.waited)
	}()
	// The output goes on to c.Output through the watch of its limits' signs.
	var out io.Writer = c.Output
	if p.watch = newOutputWatch(c.Output, p.cfg); p.watch != nil {
		out = p.watch
	}
	go func() {
		defer close(p.readDone)
		_, _ = io.Copy(out, p.out)
	}()
	return p, nil
}

// Wait waits for bwrap, which exits when the command's shell does, and
// then for the sandbox's init, which ends only when every process of its
// PID namespace (so of the command) is gone.
func (p *process) Wait() (tools.Exit, error) {
	<-p.waited
	// Every writer of the pipe was in the namespace, now gone; the grace
	// only guards against a bwrap that left one behind.
	tools.FinishRead(p.out, p.readDone)
	exit, err := tools.ExitOf(p.waitErr)
	switch {
	case err != nil:
	case exit.Signal == 0:
		p.limit(&exit)
	case p.oomKills > 0 && !p.killed.Load():
		// bwrap itself died of a signal it was not sent by Kill: the OOM
		// killer picks the largest process of the cgroup, which is bwrap
		// (or its init) when the memory is held by none of them (files in
		// the sandbox's /tmp, a tmpfs).
		exit.Limit = fmt.Sprintf("%s, exit code %d", p.oomHit(), exit.Code)
	}
	return exit, err
}

// limit names the limit that ended the command where its evidence tells
// (docs/security.md: the shell's signal, the CPU time the limit shell
// reports, the cgroups' counts, the output's signs); a command that
// exited 0 whose cgroups ended or refused a process of it gets Exit.Hit.
// A failed command with no such sign gets maybeLimit's guess, or nothing:
// a failed command under limits is most often just a failed command.
func (p *process) limit(exit *tools.Exit) {
	cpu := fmt.Sprintf("CPU time limit of %d s (tools.sandbox.cpuSeconds)", p.cfg.CPUSeconds)
	switch sig := syscall.Signal(exit.Code - 128); {
	case exit.Code == 0:
		exit.Hit = p.hit()
	case p.cfg.CPUSeconds > 0 && sig == syscall.SIGXCPU:
		exit.Signal = sig
		exit.Limit = cpu
	case p.cfg.CPUSeconds > 0 && sig == syscall.SIGKILL && p.status.cpu() >= time.Duration(p.cfg.CPUSeconds)*time.Second:
		exit.Signal = sig
		exit.Limit = fmt.Sprintf("%s: killed (SIGKILL) after %.1f s of CPU time", cpu, p.status.cpu().Seconds())
	case p.watch.seen(signCPU):
		exit.Limit = fmt.Sprintf("%s: a process it ended made the command fail, exit code %d", cpu, exit.Code)
	case p.oomKills > 0:
		exit.Limit = fmt.Sprintf("%s, exit code %d", p.oomHit(), exit.Code)
	case p.refused > 0:
		exit.Limit = fmt.Sprintf("%s, exit code %d", p.pidsLimit(), exit.Code)
	case p.watch.seen(signFork):
		exit.Limit = fmt.Sprintf("process limit of %d (tools.sandbox.maxProcesses, RLIMIT_NPROC of the worker's user): a new process was refused, exit code %d",
			p.cfg.MaxProcesses, exit.Code)
	case !p.cfg.memCgroup && p.watch.seen(signAlloc):
		exit.Limit = fmt.Sprintf("memory limit of %d MiB per process (tools.sandbox.memoryMB): an allocation failed, exit code %d",
			p.cfg.MemoryMB, exit.Code)
	default:
		exit.MaybeLimit = p.maybeLimit(sig)
	}
}

// oomHit is what the memory cgroup's OOM killer did.
func (p *process) oomHit() string {
	return fmt.Sprintf("memory limit of %d MiB (tools.sandbox.memoryMB): the kernel's OOM killer ended %d %s of the command at the limit",
		p.cfg.MemoryMB, p.oomKills, plural(p.oomKills, "process", "processes"))
}

// pidsLimit is what the pids cgroup did.
func (p *process) pidsLimit() string {
	return fmt.Sprintf("process limit of %d (tools.sandbox.maxProcesses): it refused %d new %s",
		p.cfg.MaxProcesses, p.refused, plural(p.refused, "process", "processes"))
}

// hit is what the cgroups of a command that exited 0 did to it all the
// same (tools.Exit.Hit): processes its OOM killer ended (a background
// job, a child whose end the program shrugged off, a test runner's
// worker), forks pids.max refused (that the program retried or did
// without); "" for neither.
func (p *process) hit() string {
	var hits []string
	if p.oomKills > 0 {
		hits = append(hits, p.oomHit())
	}
	if p.refused > 0 {
		hits = append(hits, p.pidsLimit())
	}
	return strings.Join(hits, "; and the sandbox's ")
}

// crashSignals are the signals by which a program ends that the memory
// limit may have crashed, by name.
var crashSignals = map[syscall.Signal]string{syscall.SIGSEGV: "SIGSEGV", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS"}

// maybeLimit is the limit a failed command with no certain sign of one
// may have hit silently, with the evidence, or "": the CPU limit when its
// processes used four fifths of it (RLIMIT_CPU is per process), the
// RLIMIT_AS fallback when the shell died of SIGSEGV, SIGABRT or SIGBUS or
// said a job crashed. A quiet failed allocation leaves no trace: not named.
func (p *process) maybeLimit(sig syscall.Signal) string {
	// RLIMIT_CPU's check and the times of reaped processes differ (a
	// process the limit ended showed 0.92 to 1.0 of it in tests): four
	// fifths of the limit is as good.
	nearCPU := time.Duration(p.cfg.CPUSeconds) * time.Second * 4 / 5
	switch {
	case p.cfg.CPUSeconds > 0 && p.status.cpu() >= nearCPU:
		return fmt.Sprintf("CPU time limit of %d s per process (tools.sandbox.cpuSeconds): its processes used %.1f s of CPU time",
			p.cfg.CPUSeconds, p.status.cpu().Seconds())
	case p.cfg.MemoryMB > 0 && !p.cfg.memCgroup && crashSignals[sig] != "":
		return fmt.Sprintf("memory limit of %d MiB per process (tools.sandbox.memoryMB): it ended by %s, as a program does whose stack or allocation the limit refuses",
			p.cfg.MemoryMB, crashSignals[sig])
	case p.cfg.MemoryMB > 0 && !p.cfg.memCgroup && p.watch.seen(signCrash):
		return fmt.Sprintf("memory limit of %d MiB per process (tools.sandbox.memoryMB): a process of it crashed, as a program does whose stack or allocation the limit refuses",
			p.cfg.MemoryMB)
	}
	return ""
}

// Kill kills bwrap; its namespace's init dies with it (--die-with-parent)
// and with the init every process of the command. A bwrap killed while
// it sets the sandbox up can leave its init behind in a session of its
// own, before --die-with-parent applies (seen in about one start in
// three killed within 15 ms): so the init is killed too, once bwrap has
// told its pid (awaitInit).
func (p *process) Kill() {
	select {
	case <-p.waited:
		return
	default:
	}
	p.killed.Store(true)
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Process.Kill()
}

// initGrace bounds the wait for a sandbox's init after bwrap exits; an
// init still there then is killed, and waited for as long again.
const initGrace = 5 * time.Second

// awaitInit waits until the sandbox's init (its host pid arrives on
// initPid; 0 when bwrap exited before it started one) has exited
// (initGone); with kill (the sandbox was killed), it kills the init first.
func awaitInit(initPid <-chan int, kill bool) error {
	select {
	case pid := <-initPid:
		if pid <= 0 {
			return nil
		}
		return initGone(pid, kill)
	case <-time.After(initGrace):
		return errors.New("bubblewrap exited without telling its sandbox's init")
	}
}

// plural is one when n is 1, else many.
func plural(n int64, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
