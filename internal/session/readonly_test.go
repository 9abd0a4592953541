package session

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/durableagent/durableagent/agent"
)

// readOnlyEnv makes the test binary act as the unprivileged child of
// TestAppend_ReadOnlyDirectoryFailsClearlyAndKeepsData instead of running
// tests: file modes do not stop root, so the checks run in a process that
// has dropped root.
const readOnlyEnv = "SESSION_TEST_READONLY_DIR"

func TestMain(m *testing.M) {
	if dir := os.Getenv(readOnlyEnv); dir != "" {
		os.Exit(readOnlyChild(dir))
	}
	if dir := os.Getenv(fileSizeLimitEnv); dir != "" {
		os.Exit(fileSizeLimitChild(dir))
	}
	os.Exit(m.Run())
}

// runChild runs this test binary as a child in the given mode and decodes
// the JSON report it prints into report.
func runChild(t *testing.T, env, dir string, report any) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env+"="+dir)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("child: %v\n%s", err, stderr)
	}
	if err := json.Unmarshal(out, report); err != nil {
		t.Fatalf("child output %q: %v", out, err)
	}
}

// readOnlyReport is what the child found, printed as JSON.
type readOnlyReport struct {
	NewErr, ExistingErr, OpenErr, LoadErr string
	NewPerm, ExistingPerm                 bool
	Loaded                                int
}

func readOnlyChild(dir string) int {
	if os.Geteuid() == 0 {
		const nobody = 65534
		if err := syscall.Setgroups(nil); err != nil {
			fmt.Fprintln(os.Stderr, "setgroups:", err)
			return 2
		}
		if err := syscall.Setgid(nobody); err != nil {
			fmt.Fprintln(os.Stderr, "setgid:", err)
			return 2
		}
		if err := syscall.Setuid(nobody); err != nil {
			fmt.Fprintln(os.Stderr, "setuid:", err)
			return 2
		}
	}
	var r readOnlyReport
	errText := func(err error) string {
		if err == nil {
			return ""
		}
		return err.Error()
	}
	st, err := Open(dir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		return 2
	}
	_, err = st.Append("new", msgEntry("a", "", agent.RoleUser, "hi"))
	r.NewErr, r.NewPerm = errText(err), errors.Is(err, fs.ErrPermission)
	_, err = st.Append("kept", msgEntry("c", "b", agent.RoleUser, "lost?"))
	r.ExistingErr, r.ExistingPerm = errText(err), errors.Is(err, fs.ErrPermission)
	_, err = Open(filepath.Join(dir, "sub"))
	r.OpenErr = errText(err)
	s, err := st.Load("kept")
	r.LoadErr = errText(err)
	if s != nil {
		r.Loaded = len(s.Entries)
	}
	if err := json.NewEncoder(os.Stdout).Encode(r); err != nil {
		return 2
	}
	return 0
}

func TestAppend_ReadOnlyDirectoryFailsClearlyAndKeepsData(t *testing.T) {
	root := t.TempDir()
	dir := filepath.Join(root, "sessions")
	st := mustOpen(t, dir)
	mustAppend(t, st, "kept", msgEntry("a", "", agent.RoleUser, "hi"), msgEntry("b", "a", agent.RoleAssistant, "hello"))
	before := readFile(t, st.Path("kept"))

	// Read-only for everyone; the temp dirs above must let the child through.
	for path, mode := range map[string]os.FileMode{
		filepath.Dir(root): 0o755, root: 0o755, dir: 0o555, st.Path("kept"): 0o444,
	} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() { _ = os.Chmod(dir, 0o700) }) // let the temp dir be removed

	var r readOnlyReport
	runChild(t, readOnlyEnv, dir, &r)

	tests := []struct {
		name    string
		err     string
		perm    bool
		mention string
	}{
		{"new session in a read-only directory", r.NewErr, r.NewPerm, `append to session "new": open ` + filepath.Join(dir, "new.jsonl")},
		{"existing read-only session", r.ExistingErr, r.ExistingPerm, `append to session "kept": open ` + filepath.Join(dir, "kept.jsonl")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if !tt.perm || !strings.HasPrefix(tt.err, tt.mention) || !strings.HasSuffix(tt.err, "permission denied") {
				t.Fatalf("error = %q (permission: %v), want %q ... permission denied", tt.err, tt.perm, tt.mention)
			}
		})
	}
	if !strings.Contains(r.OpenErr, "open session store") || !strings.Contains(r.OpenErr, "permission denied") {
		t.Errorf("Open under a read-only directory: %q, want a permission error", r.OpenErr)
	}
	if r.LoadErr != "" || r.Loaded != 2 {
		t.Errorf("Load in the read-only directory: %d entries, error %q; want 2 and no error", r.Loaded, r.LoadErr)
	}
	if after := readFile(t, st.Path("kept")); string(after) != string(before) {
		t.Errorf("session file changed:\n%q\nwant\n%q", after, before)
	}
	if _, err := os.Stat(st.Path("new")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("new session file exists after a failed append: %v", err)
	}
}
