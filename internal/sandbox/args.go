package sandbox

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/durableagent/durableagent/internal/egress"
)

// systemDirs are the program and library directories bound read-only
// (a symbolic link among them, as /bin -> usr/bin on merged-/usr
// systems, is made the same link in the sandbox).
var systemDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}

// etcFiles are the only entries of /etc bound (read-only, when they
// exist): users and groups by name, name resolution, the dynamic
// linker's cache, TLS roots, time zone, shell start-up files and the
// alternatives links that programs in /usr/bin point through. Nothing
// else of /etc (no /etc/shadow, no service configuration) is visible.
var etcFiles = []string{
	"/etc/passwd", "/etc/group", "/etc/nsswitch.conf", "/etc/hosts", "/etc/host.conf",
	"/etc/resolv.conf", "/etc/gai.conf", "/etc/protocols", "/etc/services",
	"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d",
	"/etc/ssl", "/etc/ca-certificates", "/etc/pki",
	"/etc/localtime", "/etc/timezone", "/etc/os-release", "/etc/debian_version",
	"/etc/alternatives", "/etc/bash.bashrc", "/etc/profile", "/etc/inputrc",
	"/etc/mime.types", "/etc/gitconfig", "/etc/magic",
}

// shell is the shell that runs commands in the sandbox (found on the
// host, where the sandbox's /usr comes from).
func shell() string {
	for _, s := range []string{"/bin/bash", "/usr/bin/bash"} {
		if _, err := os.Stat(s); err == nil {
			return s
		}
	}
	return "/bin/sh"
}

// args is the bwrap command line (without the program) that runs script
// with working directory dir under c. The workspace dir is bound
// read-write (with, for a worktree the worker made, its repository's
// git directory: worktreeGitDir); it must be absolute and not the root
// directory. For network allowlist the bridge program exe and the
// egress proxy's socket are bound in and the command runs behind the
// bridge (Runner.Start makes the proxy); otherwise they are "".
func (c Config) args(dir, script, exe, socket string) ([]string, error) {
	if !filepath.IsAbs(dir) {
		return nil, fmt.Errorf("sandbox workspace %q is not an absolute path", dir)
	}
	dir = filepath.Clean(dir)
	if dir == "/" {
		return nil, fmt.Errorf("sandbox workspace / would expose the whole file system; choose a project directory")
	}
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox workspace: %w", err)
	}
	if real == "/" {
		return nil, fmt.Errorf("sandbox workspace %s is the root directory; choose a project directory", dir)
	}
	a := []string{
		"--die-with-parent", "--new-session",
		"--unshare-pid", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
		"--hostname", "sandbox",
		"--cap-drop", "ALL",
	}
	if c.Network != NetworkHost {
		a = append(a, "--unshare-net")
	}
	for _, d := range systemDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&os.ModeSymlink != 0:
			if t, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", t, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	for _, f := range etcFiles {
		a = append(a, "--ro-bind-try", f, f)
	}
	// /tmp before the workspace: a workspace under /tmp is bound on top
	// of the private tmpfs.
	a = append(a, "--tmpfs", "/tmp", "--proc", "/proc", "--dev", "/dev")
	if c.Network == NetworkAllowlist {
		a = append(a, "--tmpfs", "/run")
	}
	a = append(a, "--bind", real, dir)
	if gd := c.worktreeGitDir(real); gd != "" {
		a = append(a, "--bind", gd, gd)
	}
	if c.Network == NetworkAllowlist {
		a = append(a, egress.SandboxArgs(exe, socket)...)
	}
	for _, h := range c.Hide {
		h = filepath.Clean(h)
		if rel, err := filepath.Rel(dir, h); err == nil && rel != "." && !strings.HasPrefix(rel, "..") {
			if fi, err := os.Stat(h); err == nil && fi.IsDir() {
				a = append(a, "--tmpfs", h)
			}
		}
		if rel, err := filepath.Rel(real, h); err == nil && real != dir && rel != "." && !strings.HasPrefix(rel, "..") {
			if fi, err := os.Stat(h); err == nil && fi.IsDir() {
				a = append(a, "--tmpfs", filepath.Join(dir, rel))
			}
		}
	}
	a = append(a, "--chdir", dir, "--setenv", "TMPDIR", "/tmp")
	sh := shell()
	cmd := []string{sh, "-c", script}
	if l := c.limitScript(sh); l != "" {
		cmd = []string{sh, "-c", l, sh, script}
	}
	if c.Network == NetworkAllowlist {
		// The bridge listens on the sandbox's own loopback and gives the
		// command HTTP(S)_PROXY pointing at it.
		cmd = egress.BridgeArgv(cmd...)
	}
	return append(append(a, "--"), cmd...), nil
}

// statusFd is the descriptor on which the limit shell (limitScript)
// reports, after the command, `times`: its own and its children's CPU
// time. The command does not inherit it.
const statusFd = 4

// limitScript is the sandbox's first shell: it sets the rlimits, for
// itself and so for everything the command starts, then runs the
// command ($1) in a shell of its own, waits for it and writes the CPU
// time the command's processes it reaped used to statusFd (where open),
// so that a process that the CPU limit's SIGKILL ended can be told from
// one killed otherwise. It exits with the command's status (128+N for
// signal N) and prints no job message of its own. A limit it cannot set
// ends the call (exit 126) with the shell's reason, before the command
// runs. Without limits it is "" and the command's shell is the first.
func (c Config) limitScript(sh string) string {
	var lim []string
	if c.CPUSeconds > 0 {
		// SIGXCPU at the limit (the call's result names it), SIGKILL
		// one second later for a process that ignores it.
		lim = append(lim, "ulimit -S -t "+strconv.FormatInt(c.CPUSeconds, 10),
			"ulimit -H -t "+strconv.FormatInt(c.CPUSeconds+1, 10))
	}
	if c.MemoryMB > 0 && !c.memCgroup {
		lim = append(lim, "ulimit -v "+strconv.FormatInt(c.MemoryMB*1024, 10))
	}
	if c.MaxProcesses > 0 && !c.pidsCgroup {
		lim = append(lim, "ulimit -u "+strconv.FormatInt(c.MaxProcesses, 10))
	}
	if len(lim) == 0 {
		return ""
	}
	fd := strconv.Itoa(statusFd)
	// The shell's own stderr is /dev/null while it waits (no "Killed"
	// line of its own); the command's is the call's (fd 5, closed again
	// for the command).
	run := "{ " + sh + ` -c "$1" ` + fd + `>&- 2>&5 5>&-; } 5>&2 2>/dev/null; s=$?` + "\n" +
		"{ times >&" + fd + "; } 2>/dev/null; exit $s"
	return "{ " + strings.Join(lim, " && ") + `; } || { echo "sandbox: cannot set the tools.sandbox limits" >&2; exit 126; }` + "\n" + run
}
