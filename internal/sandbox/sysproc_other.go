//go:build !linux

package sandbox

import (
	"syscall"
	"time"
)

// sysProcAttr puts bwrap in a process group of its own. (Bubblewrap is
// Linux only: elsewhere Probe fails and the worker says so.)
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true}
}

// sandboxGone is never reached off Linux (no sandbox starts).
func sandboxGone(int, time.Duration) error { return nil }

// killInit is never reached off Linux.
func killInit(int) {}
