package sandbox

import "syscall"

// sysProcAttr puts bwrap in a process group of its own (Kill signals the
// group) and kills it if the worker's thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}
