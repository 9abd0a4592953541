package main

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// runCaptured calls run with stdout and stderr sent to files and returns
// the exit code and what run wrote to stderr.
func runCaptured(t *testing.T, args ...string) (int, string) {
	t.Helper()
	dir := t.TempDir()
	// Settings come from the process environment: keep them off the real
	// data dir and away from any DURABLE_AGENT_ variables of the caller.
	for _, kv := range os.Environ() {
		if name, _, _ := strings.Cut(kv, "="); strings.HasPrefix(name, "DURABLE_AGENT_") {
			t.Setenv(name, "")
			os.Unsetenv(name)
		}
	}
	t.Setenv("DURABLE_AGENT_HOME", filepath.Join(dir, "home"))
	stdout, err := os.Create(filepath.Join(dir, "stdout"))
	if err != nil {
		t.Fatal(err)
	}
	defer stdout.Close()
	stderr, err := os.Create(filepath.Join(dir, "stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer stderr.Close()
	oldOut, oldErr := os.Stdout, os.Stderr
	os.Stdout, os.Stderr = stdout, stderr
	code := run(args)
	os.Stdout, os.Stderr = oldOut, oldErr
	b, err := os.ReadFile(stderr.Name())
	if err != nil {
		t.Fatal(err)
	}
	return code, string(b)
}

func TestRun_DevWithExtraArgumentExitsTwoSayingItTakesNoArguments(t *testing.T) {
	code, stderr := runCaptured(t, "--dev", "extra-arg")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
	}
	if want := `worker: unexpected argument "extra-arg": worker takes no arguments`; !strings.HasPrefix(stderr, want) ||
		strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr = %q, want one line starting %q", stderr, want)
	}
}

func TestRun_DevIPNotOfThisMachineSaysCannotAssignAddress(t *testing.T) {
	const ip = "8.8.8.8"
	if l, err := net.Listen("tcp", net.JoinHostPort(ip, "0")); err == nil {
		l.Close()
		t.Skipf("this host can bind %s", ip)
	}
	code, stderr := runCaptured(t, "--dev", "--dev.ip", ip, "--dev.ui=false")
	if code != 2 {
		t.Fatalf("exit %d, want 2; stderr %q", code, stderr)
	}
	if strings.Contains(stderr, "in use") || !strings.Contains(stderr, syscall.EADDRNOTAVAIL.Error()) ||
		!strings.Contains(stderr, ip) || strings.Count(stderr, "\n") != 1 {
		t.Fatalf("stderr = %q, want one line naming %s and saying %q, not \"in use\"", stderr, ip, syscall.EADDRNOTAVAIL.Error())
	}
}

// Issue 20 item 11: a worker given a prompt setting (tools.requireApproval
// is carried by each prompt, the worker never reads it) says so at start
// in one line naming the key, where it was set, and the worker's own
// floor, tools.workerRequireApproval, instead of ignoring it in silence.
// (The run then stops on the unset model.provider: no server is needed.)
// Spec 15.2.1.
func TestRun_PromptSettingGivenToTheWorkerIsNamed(t *testing.T) {
	code, stderr := runCaptured(t, "--tools.requireApproval", "bash")
	lines := strings.Split(strings.TrimSuffix(stderr, "\n"), "\n")
	if code != 2 || len(lines) != 3 {
		t.Fatalf("exit %d, stderr %q; want exit 2, the warning, that it is said once, and the model.provider refusal", code, stderr)
	}
	want := "worker: warning: tools.requireApproval (flag --tools.requireApproval) is not read by the worker"
	if !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "tools.workerRequireApproval") {
		t.Fatalf("first line %q, want %q… naming tools.workerRequireApproval", lines[0], want)
	}
	if !strings.Contains(lines[1], "said once") || !strings.Contains(lines[2], "no model provider configured") {
		t.Fatalf("second and third lines %q", lines[1:])
	}
}

// Issue 39 item 5: a prompt setting in the worker's settings file is
// explained at the first start, not on every start (the worker remembers
// what it explained in its data dir); a changed file explains it again.
// (Each run stops on the unset model.provider: no server is needed.)
func TestRun_UnreadSettingInTheFileIsExplainedOnce(t *testing.T) {
	data := t.TempDir()
	file := filepath.Join(data, "settings.yaml")
	want := "worker: warning: tools.requireApproval (file " + file + ":2) is not read by the worker"
	for i, step := range []struct {
		yaml     string // "": the file as it was
		explains bool
	}{
		{"tools:\n  requireApproval: [bash]\n", true},
		{"", false},
		{"tools:\n  requireApproval: [bash, edit]\n", true},
		{"", false},
	} {
		if step.yaml != "" {
			if err := os.WriteFile(file, []byte(step.yaml), 0o600); err != nil {
				t.Fatal(err)
			}
		}
		code, stderr := runCaptured(t, "--data-dir", data)
		if code != 2 || !strings.Contains(stderr, "no model provider configured") {
			t.Fatalf("start %d: exit %d, stderr %q; want the model.provider refusal", i+1, code, stderr)
		}
		if got := strings.Contains(stderr, want); got != step.explains || strings.Count(stderr, "warning:") != strings.Count(stderr, want) {
			t.Fatalf("start %d: stderr %q; want the explanation %t", i+1, stderr, step.explains)
		}
	}
}
