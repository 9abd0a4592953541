//go:build linux

package faults

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/durableagent/durableagent/agent"
)

// storeFaultEnv is a prompt in session id that has written its user
// message and its first (503) error, run by a worker child, and now waits
// on its backoff timer: the moment to break the session store under it.
type storeFaultEnv struct {
	*env
	worker  *child
	id      string
	path    string
	before  []byte
	waiting func() (status, errText string)
}

func startStoreFault(t *testing.T, id string, asNobody bool) *storeFaultEnv {
	t.Helper()
	e := newEnv(t, sharedAddress(t))
	e.s.Retry.BaseDelayMs = 3000
	sessions := filepath.Join(e.s.DataDir, "sessions")
	if err := os.MkdirAll(sessions, 0o700); err != nil {
		t.Fatal(err)
	}
	var extra []string
	if asNobody && os.Geteuid() == 0 {
		// File modes do not stop root: the worker drops to nobody, which
		// owns the data and session directories and must reach them.
		for _, dir := range []string{filepath.Dir(e.s.DataDir), e.s.DataDir} {
			if err := os.Chmod(dir, 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// The data dir too: the worker also locks its auth store there.
		for _, dir := range []string{e.s.DataDir, sessions} {
			if err := os.Chown(dir, nobody, nobody); err != nil {
				t.Fatal(err)
			}
		}
		extra = append(extra, envNobody+"=1")
	}
	f := &storeFaultEnv{env: e, id: id}
	f.worker = e.spawnWorker(0, extra...)
	run := e.prompt(id, e503)
	e.waitFor(id, time.Minute, func(ev agent.Event) bool { return ev.Type == agent.EventAutoRetryStart })
	f.path = filepath.Join(sessions, id+".jsonl")
	var err error
	if f.before, err = os.ReadFile(f.path); err != nil {
		t.Fatal(err)
	}
	f.waiting = func() (string, string) {
		res, err := e.result(run, time.Minute)
		if err == nil {
			return res.Status, ""
		}
		return res.Status, err.Error()
	}
	return f
}

// checkFailedClearlyAndKept: the prompt failed with an error that names
// the session file and the cause, and the file still holds exactly what
// was written before the store broke (the user message and the first
// error).
func (f *storeFaultEnv) checkFailedClearlyAndKept(t *testing.T, cause string) {
	t.Helper()
	status, errText := f.waiting()
	t.Logf("prompt %s: %s", status, errText)
	if status != agent.StatusFailed {
		t.Fatalf("prompt status %q (error %q), want failed", status, errText)
	}
	if !strings.Contains(errText, f.path) || !strings.Contains(errText, cause) {
		t.Errorf("prompt error %q does not name the session file %s and the cause %q", errText, f.path, cause)
	}
	evs := f.events(f.id)
	if end := evs[len(evs)-1]; end.Type != agent.EventPromptEnd || end.Status != agent.StatusFailed || end.ErrorMessage == "" {
		t.Errorf("last event %+v, want prompt_end failed with its error", end)
	}
	after, err := os.ReadFile(f.path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(after, f.before) {
		t.Fatalf("session file changed:\n%s\nwant\n%s", after, f.before)
	}
	file := readSession(t, f.s.DataDir, f.id)
	if len(file.entries) != 2 || file.entries[1].Message == nil || file.entries[1].Message.ErrorMessage != e503 || len(file.warnings) > 0 {
		t.Fatalf("session entries %+v warnings %q, want the user message and the 503", file.entries, file.warnings)
	}
}

// issue 7: the data directory of the session store becomes read-only
// while a prompt waits to retry. The retried model call cannot record its
// answer: the prompt fails with a clear error naming the session file,
// and nothing already written is lost.
func TestFaults_ReadOnlySessionStoreFailsThePromptClearlyAndKeepsData(t *testing.T) {
	skipShort(t)
	f := startStoreFault(t, "readonly", true)
	if err := os.Chmod(f.path, 0o444); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Dir(f.path), 0o555); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Chmod(filepath.Dir(f.path), 0o700) })
	f.checkFailedClearlyAndKept(t, "permission denied")
}

// issue 7: the disk fills up while a prompt waits to retry. A file-size
// limit (RLIMIT_FSIZE, set on the worker process from outside) stands in
// for a full disk: the kernel writes part of the next line and refuses
// the rest (EFBIG), a real torn write. The prompt fails with a clear
// error naming the session file; the partial line is rolled back and
// nothing already written is lost.
func TestFaults_FullDiskFailsThePromptClearlyAndKeepsData(t *testing.T) {
	skipShort(t)
	f := startStoreFault(t, "fulldisk", false)
	var lim unix.Rlimit
	if err := unix.Prlimit(f.worker.cmd.Process.Pid, unix.RLIMIT_FSIZE, nil, &lim); err != nil {
		t.Fatal(err)
	}
	lim.Cur = uint64(len(f.before)) + 40 // room for a fragment of the next line only
	if err := unix.Prlimit(f.worker.cmd.Process.Pid, unix.RLIMIT_FSIZE, &lim, nil); err != nil {
		t.Fatal(err)
	}
	f.checkFailedClearlyAndKept(t, "file too large")
}
