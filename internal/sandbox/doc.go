// Package sandbox is the tool runner (tools.Runner) that runs every bash
// command of a tool call in a fresh bubblewrap (bwrap) sandbox on Linux.
// docs/security.md lists exactly what a sandbox binds, hides and limits;
// args.go builds that command line.
//
// Contract: each Start runs one command in new PID, IPC and UTS namespaces
// and, unless network is host, a new network namespace; it sees the
// system's programs and a short list of /etc files read-only, its
// workspace read-write, a private /tmp, its own /proc and a minimal /dev,
// never the worker's home, data dir, credentials or other sessions' files.
// It runs without capabilities, under the limits of Config; a command a
// limit ended gets Exit.Limit naming it where that can be told, and one
// that exited 0 though its cgroups ended or refused a process of it gets
// Exit.Hit. When the command's shell exits, or Kill is called, the PID
// namespace ends and with it every process the command started. The file
// tools keep the worker-side file access of tools.Local (FS).
//
// With network allowlist the command's one way out is an egress proxy
// (internal/egress) started for that Start alone and closed when the
// sandbox ends.
package sandbox
