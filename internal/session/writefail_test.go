package session

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"syscall"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// fileSizeLimitEnv makes the test binary act as the child of
// TestAppend_FailedWriteLeavesNothingBehind: RLIMIT_FSIZE is per process, so
// it is lowered in a child, never in the test process.
const fileSizeLimitEnv = "SESSION_TEST_FSIZE_DIR"

type writeFailReport struct {
	Err                   string
	SizeBefore, SizeAfter int64
	RetryWritten          int
	RetryErr              string
}

func fileSizeLimitChild(dir string) int {
	fail := func(what string, err error) int {
		fmt.Fprintln(os.Stderr, what+":", err)
		return 2
	}
	st, err := Open(dir)
	if err != nil {
		return fail("open", err)
	}
	fi, err := os.Stat(st.Path("s"))
	if err != nil {
		return fail("stat", err)
	}
	var r writeFailReport
	r.SizeBefore = fi.Size()
	var lim syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return fail("getrlimit", err)
	}
	// Room for part of the new line only: the kernel writes up to the limit
	// and refuses the rest (EFBIG; Go ignores SIGXFSZ), a real torn write.
	low := lim
	low.Cur = uint64(r.SizeBefore) + 100
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &low); err != nil {
		return fail("setrlimit", err)
	}
	big := msgEntry("c", "b", agent.RoleUser, strings.Repeat("y", 2048))
	if _, err := st.Append("s", big); err != nil {
		r.Err = err.Error()
	}
	if fi, err := os.Stat(st.Path("s")); err == nil {
		r.SizeAfter = fi.Size()
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &lim); err != nil {
		return fail("setrlimit", err)
	}
	// The caller (a Temporal activity) retries; the retry must succeed.
	r.RetryWritten, err = st.Append("s", big)
	if err != nil {
		r.RetryErr = err.Error()
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 2
	}
	return 0
}

func TestAppend_FailedWriteLeavesNothingBehind(t *testing.T) {
	st := openStore(t)
	mustAppend(t, st, "s", msgEntry("a", "", agent.RoleUser, "hi"), msgEntry("b", "a", agent.RoleAssistant, "hello"))
	before := readFile(t, st.Path("s"))

	var r writeFailReport
	runChild(t, fileSizeLimitEnv, st.dir, &r)

	if !strings.Contains(r.Err, `append to session "s": write `) || !strings.Contains(r.Err, "file too large") {
		t.Errorf("error = %q, want a write error naming the session", r.Err)
	}
	if n := strings.Count(r.Err, st.Path("s")); n != 1 {
		t.Errorf("error = %q names the file %d times, want once (issue 15 item 8)", r.Err, n)
	}
	if r.SizeAfter != r.SizeBefore {
		t.Errorf("size after the failed append = %d, want %d (partial line rolled back)", r.SizeAfter, r.SizeBefore)
	}
	if r.RetryErr != "" || r.RetryWritten != 1 {
		t.Errorf("retry wrote %d, error %q; want 1 and no error", r.RetryWritten, r.RetryErr)
	}
	after := readFile(t, st.Path("s"))
	if !strings.HasPrefix(string(after), string(before)) {
		t.Errorf("earlier lines changed")
	}
	s := mustLoad(t, mustOpen(t, st.dir), "s")
	if ids(s.Entries) != "a,b,c" || len(s.Warnings) != 0 {
		t.Errorf("entries %s warnings %q, want a,b,c and none", ids(s.Entries), s.Warnings)
	}
}
