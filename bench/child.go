package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"

	"github.com/durableagent/durableagent/internal/settings"
)

// envChildSettings turns this binary into a worker process: its value is
// the worker's settings as JSON. The bench runs every worker in a child
// process, as production would, so the worker's memory can be read from
// /proc and the embedded server does not share its heap.
const envChildSettings = "DURABLE_AGENT_BENCH_CHILD_SETTINGS"

// childArgs are the arguments a child is started with (the test binary
// needs -test.run=^$ so it runs no test).
var childArgs []string

// readyLine is what a child prints once its worker polls.
const readyLine = "bench-worker-ready"

// runChildIfAsked runs the worker when this process is a child and reports
// whether it was one.
func runChildIfAsked() (bool, int) {
	if starter, code := runStarterIfAsked(); starter {
		return true, code
	}
	if os.Getenv(envMCPServer) != "" {
		return true, serveMCP()
	}
	js := os.Getenv(envChildSettings)
	if js == "" {
		return false, 0
	}
	return true, runChild(js)
}

// runChild is the worker process: the product's worker (app.NewWorker) plus
// the benchmark baseline. It stops on SIGTERM or when its stdin closes (the
// bench died).
func runChild(js string) int {
	var s settings.Settings
	if err := json.Unmarshal([]byte(js), &s); err != nil {
		fmt.Fprintf(os.Stderr, "bench worker: settings: %v\n", err)
		return 2
	}
	c, err := dialChild(s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench worker: %v\n", err)
		return 2
	}
	defer c.Close()
	w, err := newChildWorker(c, s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "bench worker: %v\n", err)
		return 2
	}
	registerBare(w)
	if err := w.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "bench worker: start: %v\n", err)
		return 2
	}
	fmt.Println(readyLine)
	done := make(chan os.Signal, 1)
	signal.Notify(done, syscall.SIGTERM, os.Interrupt)
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		done <- syscall.SIGTERM
	}()
	<-done
	w.Stop()
	return 0
}

// registerBare adds the benchmark baseline: Bare and a no-op
// activity that returns its input.
func registerBare(w worker.Registry) {
	w.RegisterWorkflowWithOptions(Bare, workflow.RegisterOptions{Name: BareWorkflowName})
	w.RegisterActivityWithOptions(func(_ context.Context, payload string) (string, error) { return payload, nil },
		activity.RegisterOptions{Name: BareActivityName})
}

// child is a running worker process.
type child struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan error
}

// startChild starts a worker process with settings s and returns once it
// polls its task queue.
func startChild(ctx context.Context, s settings.Settings) (*child, error) {
	js, err := json.Marshal(s)
	if err != nil {
		return nil, err
	}
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start bench worker: %w", err)
	}
	cmd := exec.Command(exe, childArgs...)
	cmd.Env = append(os.Environ(), envChildSettings+"="+string(js))
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start bench worker: %w", err)
	}
	ch := &child{cmd: cmd, stdin: stdin, done: make(chan error, 1)}
	ready := make(chan bool, 2)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == readyLine {
				ready <- true
			}
		}
		ready <- false
	}()
	go func() { ch.done <- cmd.Wait() }()
	select {
	case ok := <-ready:
		if ok {
			return ch, nil
		}
		ch.stop()
		return nil, errors.New("start bench worker: it exited before polling")
	case <-time.After(2 * time.Minute):
	case <-ctx.Done():
	}
	ch.stop()
	return nil, errors.New("start bench worker: not ready in time")
}

// mem is the child's resident set size (VmRSS) and its anonymous part
// (RssAnon: heap and stacks, without the mapped binary), in MB; zero off
// Linux.
func (c *child) mem() (rss, anon float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", c.cmd.Process.Pid))
	if err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		var kb int64
		if _, err := fmt.Sscanf(line, "VmRSS: %d kB", &kb); err == nil {
			rss = float64(kb) / 1024
		}
		if _, err := fmt.Sscanf(line, "RssAnon: %d kB", &kb); err == nil {
			anon = float64(kb) / 1024
		}
	}
	return rss, anon
}

// stop ends the child: stdin closes (it stops its worker), then SIGTERM,
// then SIGKILL.
func (c *child) stop() {
	_ = c.stdin.Close()
	select {
	case <-c.done:
		return
	case <-time.After(10 * time.Second):
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-c.done:
		return
	case <-time.After(5 * time.Second):
	}
	_ = c.cmd.Process.Kill()
	<-c.done
}
