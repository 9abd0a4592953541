// Package procsec hardens the worker's own process.
//
// Contract: DisableDumps makes the calling process non-dumpable
// (prctl(PR_SET_DUMPABLE, 0) on Linux): other processes of the same user
// can then no longer read its /proc/<pid>/environ, /proc/<pid>/mem and
// the other /proc files only the owner may read (they become root's), nor
// ptrace it, and it writes no core dump. Root (CAP_SYS_PTRACE) still can. The setting is
// per process and is reset by execve, so the commands the worker starts
// (bash) run as ordinary, dumpable processes. On other systems it does
// nothing.
package procsec
