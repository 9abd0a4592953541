package tools

import (
	"errors"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// TestBashReapsOrphansOfAReaperWorker: a worker that inherits its
// commands' orphans (PID 1 of a container, or a subreaper) reaps the
// processes of a call it ended, and only those: the exit status of
// another child of the worker stays its own exec.Cmd's.
// Spec 14.4.1.
func TestBashReapsOrphansOfAReaperWorker(t *testing.T) {
	if err := unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0); err != nil {
		t.Skipf("cannot become a subreaper: %v", err)
	}
	defer unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)

	other := exec.Command("sh", "-c", "sleep 0.5; exit 7")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	ws := t.TempDir()
	r := call(t, Options{Workspace: ws}, "bash", obj{"command": "sleep 300 & echo $! > pid1; " +
		"setsid -f sh -c 'echo $$ > pid2; exec sleep 300'; while [ ! -s pid2 ]; do sleep 0.01; done; echo started"})
	mustOK(t, r)
	for _, f := range []string{"pid1", "pid2"} {
		pid := readPid(t, filepath.Join(ws, f))
		if err := syscall.Kill(pid, 0); !errors.Is(err, syscall.ESRCH) {
			syscall.Kill(pid, syscall.SIGKILL)
			t.Errorf("orphan %d of the call is not reaped (kill 0: %v; gone: %v)", pid, err, processGone(pid))
		}
	}
	err := other.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 7 {
		t.Fatalf("another child's Wait = %v, want exit status 7", err)
	}
}
