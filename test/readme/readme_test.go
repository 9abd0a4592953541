package readme

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Timeouts of one block. The binaries are built before the first block,
// so no block compiles anything.
const (
	blockTimeout = 4 * time.Minute
	readyTimeout = 3 * time.Minute
	stopTimeout  = 30 * time.Second
)

// goShim is the `go` the blocks find first on PATH (see the package doc).
const goShim = `#!/bin/sh
# readme-test: go run ./starter|./worker from the repository runs the
# binaries built from it; go test is recorded, not run.
if [ "$1" = run ] && [ "$(pwd -P)" = "$README_TEST_ROOT" ]; then
  case "$2" in
  ./starter|./worker) prog=${2#./}; shift 2; exec "$README_TEST_BIN/$prog" "$@" ;;
  esac
fi
if [ "$1" = test ]; then
  echo "go $*" >> "$README_TEST_GOTEST"
  exit 0
fi
exec "$README_TEST_REAL_GO" "$@"
`

// The README's commands run as written, in order, and show what it says
// they show (package doc). A block that fails names its README line.
func TestREADME_CommandsRunAsWritten(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the README's commands against the embedded Temporal server")
	}
	root := repoRoot(t)
	if real, err := filepath.EvalSymlinks(root); err == nil {
		root = real
	}
	blocks := readmeBlocks(t, root)
	h := newHarness(t, root)

	var last *result // of the latest command block that ran
	var skipped []string
	for _, b := range blocks {
		switch {
		case b.dir.output:
			if last == nil {
				t.Fatalf("%s: an output block that follows no command block that ran", b)
			}
			if missing, ok := matchOutput(b.text, last.out); !ok {
				t.Errorf("%s: the output of %s lacks the line %q the README shows; it was:\n%s", b, last.block, missing, last.out)
			}
			continue
		case !b.runnable():
			continue
		case b.dir.skip != "":
			skipped = append(skipped, fmt.Sprintf("%s: %s", b, b.dir.skip))
			last = nil
			continue
		case b.dir.needs != "":
			if _, err := exec.LookPath(b.dir.needs); err != nil && !h.standIn[b.dir.needs] {
				skipped = append(skipped, fmt.Sprintf("%s: needs %s on PATH", b, b.dir.needs))
				last = nil
				continue
			}
		}
		if b.dir.background != "" {
			h.background(b)
			last = nil
			continue
		}
		res := h.run(b)
		last = &res
		if res.code != b.dir.exit {
			t.Fatalf("%s exited %d, want %d; output:\n%s", b, res.code, b.dir.exit, res.out)
		}
		for _, want := range b.dir.expect {
			if !strings.Contains(res.out, want) {
				t.Errorf("%s: output lacks %q; it was:\n%s", b, want, res.out)
			}
		}
	}
	for _, s := range skipped {
		t.Logf("skipped %s", s)
	}
	h.stopBackground()

	// go test ran through the shim: recorded, and it is what CI runs.
	recorded, err := os.ReadFile(h.goTestLog)
	if err != nil {
		t.Fatalf("the README's go test command did not run: %v", err)
	}
	for _, cmd := range strings.Split(strings.TrimSpace(string(recorded)), "\n") {
		checkTestCommand(t, root, cmd)
	}
}

// result is what a command block did.
type result struct {
	block block
	code  int
	out   string
}

// harness runs blocks in one scratch environment.
type harness struct {
	t         *testing.T
	root      string
	env       []string
	goTestLog string
	bg        []*bgProc
	// standIn names the programs the blocks find as stand-ins (temporal).
	standIn map[string]bool
}

type bgProc struct {
	block block
	cmd   *exec.Cmd
	out   *syncBuffer
	done  chan struct{}
	err   error
}

func newHarness(t *testing.T, root string) *harness {
	scratch := t.TempDir()
	bin := filepath.Join(scratch, "bin")
	shimDir := filepath.Join(scratch, "shim")
	home := filepath.Join(scratch, "home")
	for _, d := range []string{bin, shimDir, home} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	realGo, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("go not on PATH: %v", err)
	}
	build := exec.Command(realGo, "build", "-o", bin+string(filepath.Separator), "./starter", "./worker")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build the starter and the worker: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(shimDir, "go"), []byte(goShim), 0o755); err != nil {
		t.Fatal(err)
	}
	port, uiPort := freePort(t), freePort(t)
	h := &harness{t: t, root: root, goTestLog: filepath.Join(scratch, "go-test.log"), standIn: map[string]bool{}}
	path := shimDir + string(os.PathListSeparator) + os.Getenv("PATH")
	if _, err := exec.LookPath("temporal"); err != nil {
		// No temporal CLI here: the blocks get the SDK stand-in.
		dir := filepath.Join(scratch, "temporal")
		self, err := os.Executable()
		if err != nil {
			t.Fatal(err)
		}
		standIn := fmt.Sprintf("#!/bin/sh\nexec env %s=1 %q \"$@\"\n", envTemporalStandIn, self)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "temporal"), []byte(standIn), 0o755); err != nil {
			t.Fatal(err)
		}
		path = dir + string(os.PathListSeparator) + path
		h.standIn["temporal"] = true
		t.Log("temporal is not on PATH: the blocks that need it run the SDK stand-in (temporalcli_test.go)")
	}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(k, "DURABLE_AGENT_") || strings.HasPrefix(k, "TEMPORAL_") ||
			k == "TMPDIR" || k == "PATH" || k == "ANTHROPIC_API_KEY" || k == "OPENAI_API_KEY" {
			continue
		}
		h.env = append(h.env, kv)
	}
	h.env = append(h.env,
		"PATH="+path,
		"README_TEST_ROOT="+root,
		"README_TEST_BIN="+bin,
		"README_TEST_REAL_GO="+realGo,
		"README_TEST_GOTEST="+h.goTestLog,
		"DURABLE_AGENT_HOME="+home,
		// starter demo runs the worker built above, as it would run an
		// installed one: the compile it does otherwise is starter's own test.
		"DURABLE_AGENT_WORKER_BIN="+filepath.Join(bin, "worker"),
		"DURABLE_AGENT_DEV_PORT="+strconv.Itoa(port),
		"DURABLE_AGENT_DEV_UIPORT="+strconv.Itoa(uiPort),
		"TEMPORAL_ADDRESS=127.0.0.1:"+strconv.Itoa(port),
		"ANTHROPIC_API_KEY=sk-ant-readme-test-0000000000000000",
	)
	t.Cleanup(h.stopBackground)
	return h
}

// script is a block as bash runs it: stop at the first failing command
// and say which one it was.
func script(b block) string {
	return "set -e -o pipefail\n" +
		`trap 'echo "readme-test: exit $? from: $BASH_COMMAND" >&2' ERR` + "\n" +
		b.text + "\n"
}

func (h *harness) command(ctx context.Context, b block, out *syncBuffer) *exec.Cmd {
	cmd := exec.CommandContext(ctx, "bash", "-c", script(b))
	cmd.Dir = h.root
	cmd.Env = h.env
	cmd.Stdout, cmd.Stderr = out, out
	// Its own process group, so a stop reaches the programs it started.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 10 * time.Second
	return cmd
}

// run runs a block in the foreground.
func (h *harness) run(b block) result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), blockTimeout)
	defer cancel()
	var out syncBuffer
	start := time.Now()
	err := h.command(ctx, b, &out).Run()
	res := result{block: b, out: out.String()}
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		h.t.Fatalf("%s did not end within %s; output:\n%s", b, blockTimeout, res.out)
	case errors.As(err, &exit):
		res.code = exit.ExitCode()
	case err != nil:
		h.t.Fatalf("%s: %v", b, err)
	}
	h.t.Logf("ran %s in %s: exit %d", b, time.Since(start).Round(time.Millisecond), res.code)
	return res
}

// background starts a block that keeps running (a second terminal) and
// waits for its ready text.
func (h *harness) background(b block) {
	h.t.Helper()
	p := &bgProc{block: b, out: &syncBuffer{}, done: make(chan struct{})}
	p.cmd = h.command(context.Background(), b, p.out)
	if err := p.cmd.Start(); err != nil {
		h.t.Fatalf("%s: %v", b, err)
	}
	h.bg = append(h.bg, p)
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	deadline := time.After(readyTimeout)
	for !strings.Contains(p.out.String(), b.dir.background) {
		select {
		case <-p.done:
			h.t.Fatalf("%s ended (%v) before it printed %q; output:\n%s", b, p.err, b.dir.background, p.out)
		case <-deadline:
			h.t.Fatalf("%s did not print %q within %s; output:\n%s", b, b.dir.background, readyTimeout, p.out)
		case <-time.After(50 * time.Millisecond):
		}
	}
	h.t.Logf("started %s in the background", b)
}

// stopBackground interrupts the background blocks (Ctrl-C) and checks
// that each stops cleanly.
func (h *harness) stopBackground() {
	for _, p := range h.bg {
		_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGINT)
		select {
		case <-p.done:
			if p.err != nil {
				h.t.Errorf("%s: after Ctrl-C: %v; output:\n%s", p.block, p.err, p.out)
			}
		case <-time.After(stopTimeout):
			_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
			<-p.done
			h.t.Errorf("%s did not stop within %s of Ctrl-C; output:\n%s", p.block, stopTimeout, p.out)
		}
	}
	h.bg = nil
}

// syncBuffer is a bytes.Buffer written by a process and read by the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// freePort is a loopback port nothing listens on now.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}
