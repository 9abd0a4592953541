package sandbox

import (
	"errors"
	"fmt"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/durableagent/durableagent/internal/tools"
)

// sysProcAttr puts bwrap in a process group of its own (Kill signals the
// group) and kills it if the worker's thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// initGone waits until the sandbox's init (its PID 1 as the host sees
// it) has exited, at most initGrace; with kill it first sends it SIGKILL,
// and an init still there after the wait is sent one and waited for as
// long again. The signal goes through a pidfd, never to whatever process
// may have the pid once the init is gone. The kernel ends a PID
// namespace's init only after every other process of the namespace is
// gone, so after this no process of the command is left. bwrap's own exit
// is not that moment: it reports the command's status as soon as the
// command's shell exits, while the namespace is still being torn down.
func initGone(pid int, kill bool) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil // already exited and reaped
	}
	if err != nil {
		return fmt.Errorf("watch sandbox init %d: %w", pid, err)
	}
	defer unix.Close(fd)
	for round := 0; ; round, kill = round+1, true {
		if kill {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
		exited, err := tools.AwaitPidfds([]int{fd}, initGrace)
		switch {
		case err != nil:
			return fmt.Errorf("watch sandbox init %d: %w", pid, err)
		case exited:
			return nil
		case round == 1:
			return fmt.Errorf("sandbox init %d still running %s after bubblewrap exited", pid, initGrace)
		}
	}
}
