package checkpoint

import "syscall"

// procAttr kills a git the worker started when the worker dies, so a git
// left running can never race the next Take that finds its lock stale.
func procAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL} }
