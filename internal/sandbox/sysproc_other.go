//go:build !linux

package sandbox

import "syscall"

// sysProcAttr puts bwrap in a process group of its own. (Bubblewrap is
// Linux only: elsewhere Probe fails and the worker says so.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// initGone is never reached off Linux (no sandbox starts).
func initGone(int, bool) error { return nil }
