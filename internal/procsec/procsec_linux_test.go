//go:build linux

package procsec

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

const (
	childEnv  = "PROCSEC_TEST_CHILD"
	secretEnv = "PROCSEC_TEST_SECRET"
	nobody    = 65534
)

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		child()
		return
	}
	os.Exit(m.Run())
}

// child is the re-executed test binary: it disables dumps as the worker
// does, reports its attribute and whether a command it starts afterwards
// can read its own environment, and waits for stdin to close.
func child() {
	if err := DisableDumps(); err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	d, err := Dumpable()
	fmt.Printf("dumpable %v %v\n", d, err)
	out, err := exec.Command("/bin/sh", "-c", `cat /proc/self/environ | tr '\0' '\n' | grep -c `+secretEnv).CombinedOutput()
	fmt.Printf("command reads its environ: %s %v\n", strings.TrimSpace(string(out)), err)
	fmt.Println("ready")
	_, _ = io.Copy(io.Discard, os.Stdin)
}

// Issue 20 item 4: a process that called DisableDumps is non-dumpable:
// its /proc files become root's, so another process of its user cannot
// read its environment (root still can: as root the test runs the child
// as nobody and checks the owner of its /proc/<pid>/environ); a command
// it starts afterwards (bash) is dumpable again and reads its own.
// Spec 14.4.4.
func TestDisableDumps_HidesTheEnvironmentFromTheUsersOtherProcesses(t *testing.T) {
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin)
	cmd.Env = append(os.Environ(), childEnv+"=1", secretEnv+"=sk-procsec-test-0123456789")
	root := os.Getuid() == 0
	if root {
		// nobody must be able to run the binary: a copy in a 0755 directory.
		dir, err := os.MkdirTemp("", "procsec-")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		if err := os.Chmod(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(bin)
		if err != nil {
			t.Fatal(err)
		}
		cmd.Path = filepath.Join(dir, "procsec.test")
		if err := os.WriteFile(cmd.Path, b, 0o755); err != nil {
			t.Fatal(err)
		}
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: nobody, Gid: nobody}}
	}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		stdin.Close()
		_ = cmd.Wait()
	}()
	var lines []string
	sc := bufio.NewScanner(stdout)
	for sc.Scan() && sc.Text() != "ready" {
		lines = append(lines, sc.Text())
	}
	report := strings.Join(lines, "\n")
	if !strings.Contains(report, "dumpable false <nil>") {
		t.Fatalf("the child is still dumpable after DisableDumps:\n%s", report)
	}
	if !strings.Contains(report, "command reads its environ: 1 <nil>") {
		t.Fatalf("a command started after DisableDumps cannot read its own environment (it should be dumpable again):\n%s", report)
	}
	environ := fmt.Sprintf("/proc/%d/environ", cmd.Process.Pid)
	info, err := os.Stat(environ)
	if err != nil {
		t.Fatal(err)
	}
	if owner := info.Sys().(*syscall.Stat_t).Uid; owner != 0 {
		t.Fatalf("%s is owned by uid %d, want root's (0): the child's user can read it", environ, owner)
	}
	if root {
		t.Logf("running as root, which reads any process's environment; the child runs as nobody and its %s is root's", environ)
		return
	}
	if _, err := os.ReadFile(environ); !errors.Is(err, fs.ErrPermission) {
		t.Fatalf("read %s from another process of the same user: %v, want a permission error", environ, err)
	}
}

// Dumpable reports the process's dumpable attribute (PR_GET_DUMPABLE).
func Dumpable() (bool, error) {
	v, err := unix.PrctlRetInt(unix.PR_GET_DUMPABLE, 0, 0, 0, 0)
	if err != nil {
		return false, fmt.Errorf("prctl PR_GET_DUMPABLE: %w", err)
	}
	return v != 0, nil
}
