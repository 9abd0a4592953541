// Package sandbox is the tool runner (tools.Runner) that runs every bash
// command of a tool call in a fresh bubblewrap (bwrap) sandbox on Linux.
//
// Contract: each Start runs one command in new PID, IPC and UTS
// namespaces and, with network off, a new network namespace (loopback
// only, down); it sees the system's program and library directories and
// a short list of /etc files read-only, the call's working directory (its
// workspace) read-write, a private /tmp, a /proc of its own PID namespace
// and a minimal /dev — never the worker's home, data dir, settings,
// credentials or other sessions' files. It runs with no capabilities,
// in a new session, under an rlimit for CPU seconds, a memory cgroup of
// its own for memory (RLIMIT_AS per process where the worker may not
// make one) and a pids cgroup of its own for processes (RLIMIT_NPROC
// where the worker may not make cgroups); a command those limits ended
// gets Exit.Limit naming the limit where that can be told, and one that
// exited 0 though its cgroups ended or refused a process of it gets
// Exit.Hit (Config, Runner.Start). When the command's shell exits, or Kill is called,
// the PID namespace ends and with it every process the command started
// (background jobs and setsid children included). The file tools keep
// the worker-side file access of tools.Local (FS), which refuses
// symbolic links out of the workspace when tools.confine is set.
//
// With network allowlist the command also gets a network namespace of
// its own, and its one way out is an egress proxy (internal/egress)
// started for that Start alone: its socket, in a fresh directory only
// the worker's user can enter, and the bridge program (the worker
// binary, whose main calls egress.MaybeRunBridge) are bound under
// /run/egress; the command runs behind the bridge with HTTP(S)_PROXY set
// and reaches only Config.Egress.Allow. The proxy is closed and its
// directory removed when the sandbox ends.
//
// args.go builds the exact bwrap command line; docs/security.md explains it.
package sandbox
