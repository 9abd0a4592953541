package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	enumspb "go.temporal.io/api/enums/v1"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/testserver"
)

// envStarterArgs makes the test binary the starter (demo registered), so
// that a test runs `starter demo` as a process with the stdin it chooses.
const envStarterArgs = "DEMO_TEST_STARTER_ARGS"

func TestMain(m *testing.M) {
	if js := os.Getenv(envStarterArgs); js != "" {
		var args []string
		if err := json.Unmarshal([]byte(js), &args); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(100)
		}
		os.Exit(cli.Main(args, cli.Env{}, demoCommand))
	}
	os.Exit(testserver.Main(m))
}

func demoVars(t *testing.T, home string, port int) []string {
	return []string{
		settings.EnvHome + "=" + home,
		"DURABLE_AGENT_DEV_PORT=" + strconv.Itoa(port),
		"DURABLE_AGENT_DEV_UI=false",
		"TEMPORAL_ADDRESS=127.0.0.1:" + strconv.Itoa(port),
		fmt.Sprintf("DURABLE_AGENT_TEMPORAL_TASKQUEUE=demo-test-%d", os.Getpid()),
	}
}

// Issue 15 item 3: `starter demo` with stdin at /dev/null (a character
// device, not a terminal) or closed, --keep left at its default, runs the
// job and exits by itself instead of keeping the server up until Ctrl-C.
func TestDemo_ProcessWithStdinNotATerminalExits(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the embedded Temporal server")
	}
	for _, tc := range []struct {
		name  string
		stdin func(cmd *exec.Cmd) func()
	}{
		{"stdin /dev/null", func(cmd *exec.Cmd) func() {
			null, err := os.Open(os.DevNull)
			if err != nil {
				t.Fatal(err)
			}
			cmd.Stdin = null
			return func() { null.Close() }
		}},
		{"stdin closed", func(cmd *exec.Cmd) func() {
			// fd 0 closed in the child: exec a shell that closes it.
			cmd.Args = append([]string{"sh", "-c", `exec "$0" "$@" <&-`}, cmd.Args...)
			cmd.Path, _ = exec.LookPath("sh")
			return func() {}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			js, _ := json.Marshal([]string{"demo", "--retry.baseDelayMs", "200"})
			cmd := exec.Command(os.Args[0], "-test.run=^$")
			tmp, home := t.TempDir(), t.TempDir()
			cmd.Env = append(append(os.Environ(), envStarterArgs+"="+string(js), "TMPDIR="+tmp), demoVars(t, home, freePort(t))...)
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			defer tc.stdin(cmd)()
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil || !strings.Contains(out.String(), "sh test.sh passes now.") || strings.Contains(out.String(), "keep running; Ctrl-C to stop") {
					t.Fatalf("demo: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
				}
				// Issue 23: no demo workspace is left behind, and the
				// embedded server's log goes to a file named once, off the
				// terminal.
				if left, _ := filepath.Glob(filepath.Join(tmp, "durable-agent-demo-*")); len(left) > 0 {
					t.Fatalf("the demo left its workspace behind: %v\nstdout:\n%s", left, out.String())
				}
				logLine := "temporal server log: " + filepath.Join(home, "temporal", "server.log")
				if strings.Count(out.String(), logLine) != 1 {
					t.Fatalf("stdout does not name the server log %q once:\n%s", logLine, out.String())
				}
				if !strings.Contains(out.String(), "\nmodel: scripted (offline fake; set model.provider to use a real model)\n") {
					t.Fatalf("the banner does not say the model is an offline fake:\n%s", out.String())
				}
				if strings.Contains(errb.String(), "level=WARN") || strings.Contains(errb.String(), "level=ERROR") {
					t.Fatalf("server warnings on the terminal:\n%s", errb.String())
				}
			case <-time.After(90 * time.Second):
				_ = cmd.Process.Kill()
				<-done
				t.Fatalf("demo with %s still running after 90 s\nstdout:\n%s", tc.name, out.String())
			}
		})
	}
}

// Issue 15 item 9: a server already runs on the demo's port, and a worker
// with another data dir polls the demo's task queue there. The demo must
// not hand its job to that worker: its own worker runs it, the session
// file it prints exists, nothing lands in the other data dir, and it says
// why it moved to a task queue of its own.
func TestDemo_RunningServerWithAnotherWorkersDataDir(t *testing.T) {
	addr := testserver.Address(t)
	_, p, _ := net.SplitHostPort(addr)
	port, _ := strconv.Atoi(p)
	other, mine := t.TempDir(), t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	queue := fmt.Sprintf("demo-test-%d", os.Getpid())
	s := settings.Defaults()
	s.DataDir, s.Temporal.Address, s.Temporal.TaskQueue = other, addr, queue
	c, err := client.DialLocal(ctx, s, testserver.Quiet())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	w, err := app.NewWorker(c, s)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Start(); err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	// The other worker has been polling for a while, as a running one has.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		resp, err := c.DescribeTaskQueue(ctx, queue, enumspb.TASK_QUEUE_TYPE_ACTIVITY)
		if err == nil && len(resp.GetPollers()) > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the other worker never polled task queue %s: %v", queue, err)
		}
	}

	vars := map[string]string{}
	for _, kv := range demoVars(t, mine, port) {
		k, v, _ := strings.Cut(kv, "=")
		vars[k] = v
	}
	for k, v := range vars {
		t.Setenv(k, v) // the settings read the process environment (viper)
	}
	var out, errb bytes.Buffer
	code := runDemo(ctx, cli.Env{Stdout: &out, Stderr: &errb},
		[]string{"--keep=false", "--retry.baseDelayMs", "200", "--session", "demo-joined"})
	if code != cli.ExitOK {
		t.Fatalf("demo exit %d\nstdout:\n%s\nstderr:\n%s", code, out.String(), errb.String())
	}
	m := regexp.MustCompile(`session file: (\S+)`).FindStringSubmatch(out.String())
	if m == nil || !strings.HasPrefix(m[1], mine) {
		t.Fatalf("no session file under the demo's data dir %s printed:\n%s", mine, out.String())
	}
	if _, err := os.Stat(m[1]); err != nil {
		t.Fatalf("the session file the demo printed does not exist: %v\nstdout:\n%s\nstderr:\n%s", err, out.String(), errb.String())
	}
	if _, err := os.Stat(filepath.Join(other, "sessions", "demo-joined.jsonl")); err == nil {
		t.Fatalf("the other worker wrote the demo's session under its data dir %s", other)
	}
	if !strings.Contains(errb.String(), "a worker already polls task queue "+queue) || strings.Count(errb.String(), "\n") != 1 {
		t.Fatalf("the demo did not say (in one line) why it moved to its own task queue: %q", errb.String())
	}
}
