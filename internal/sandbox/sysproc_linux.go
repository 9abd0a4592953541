package sandbox

import (
	"errors"
	"fmt"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/durableagent/durableagent/internal/tools"
)

// sysProcAttr puts bwrap in a process group of its own (Kill signals the
// group) and kills it if the worker's thread that started it dies.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// sandboxGone waits, at most limit, until the process pid (the sandbox's
// PID 1 as the host sees it) has exited. The kernel ends a PID
// namespace's init only after every other process of the namespace is
// gone, so after this no process of the command is left. bwrap's own exit
// is not that moment: it reports the command's status as soon as the
// command's shell exits, while the namespace is still being torn down.
func sandboxGone(pid int, limit time.Duration) error {
	fd, err := unix.PidfdOpen(pid, 0)
	if errors.Is(err, unix.ESRCH) {
		return nil // already exited and reaped
	}
	if err != nil {
		return fmt.Errorf("watch sandbox init %d: %w", pid, err)
	}
	defer unix.Close(fd)
	exited, err := tools.AwaitPidfds([]int{fd}, limit)
	switch {
	case err != nil:
		return fmt.Errorf("watch sandbox init %d: %w", pid, err)
	case !exited:
		return fmt.Errorf("sandbox init %d still running %s after bubblewrap exited", pid, limit)
	}
	return nil
}

// killInit sends SIGKILL to the sandbox's init pid through a pidfd (not
// to whatever process may have its pid once it is gone).
func killInit(pid int) {
	fd, err := unix.PidfdOpen(pid, 0)
	if err != nil {
		return
	}
	defer unix.Close(fd)
	_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
}
