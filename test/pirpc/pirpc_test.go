package pirpc

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
)

// starterEnv makes the test binary run as `starter` (cli.Main with its
// arguments): the one-line shim cli.mjs execs $STARTER, so the published
// RpcClient starts the real `starter rpc` without a separate build.
const starterEnv = "PIRPC_STARTER"

// nodeModulesEnv points at an installed node_modules holding the package
// (CI may install it once with `npm ci` in this directory); unset, the
// test installs package-lock.json into the user cache with `npm ci` the
// first time.
const nodeModulesEnv = "PIRPC_NODE_MODULES"

func TestMain(m *testing.M) {
	if os.Getenv(starterEnv) != "" {
		os.Exit(cli.Main(os.Args[1:], cli.Env{}))
	}
	os.Exit(m.Run())
}

// Issue 12: the terminal agent's own RpcClient (@mariozechner/pi-coding-agent
// 0.73.1, from npm), pointed at `starter rpc` through a one-line cliPath
// shim, works unchanged: driver.mjs calls every method it has (and sends
// streamingBehavior and approve_tool, which it has no method for), asserts
// each answer and the events of a prompt with a tool call and a retry,
// and loads a session file with the package's own SessionManager.
func TestPiRpcClient_DrivesStarterRPC(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: this test runs the published RpcClient of @mariozechner/pi-coding-agent under Node.js (install Node 20 or later)")
	}
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	modules := nodeModules(t)

	// The embedded server and a worker, as rpc/e2e starts them.
	dataDir := t.TempDir()
	lookup := map[string]string{settings.EnvHome: dataDir, "HOME": dataDir}
	s, err := settings.Load(settings.LoadOptions{Env: func(k string) (string, bool) { v, ok := lookup[k]; return v, ok }})
	if err != nil {
		t.Fatal(err)
	}
	s.Dev.Port, s.Dev.UI = 0, false
	s.Temporal.TaskQueue = "pirpc"
	s.Scripted.StreamDelayMs = 25 // a streamed answer gives message_update events
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	st, err := stack.Start(ctx, s, stack.Options{Dev: true})
	if err != nil {
		t.Fatalf("start server and worker: %v", err)
	}
	t.Cleanup(func() { _ = st.Close() })
	s = st.Settings

	// A run directory with the driver, the shim and the package.
	run := t.TempDir()
	for _, f := range []string{"driver.mjs", "cli.mjs"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(run, f), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(modules, filepath.Join(run, "node_modules")); err != nil {
		t.Fatal(err)
	}
	workspace, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(map[string]any{
		"starter":     exe,
		"shim":        filepath.Join(run, "cli.mjs"),
		"workspace":   workspace,
		"sessionsDir": filepath.Join(s.DataDir, "sessions"),
		"args": []string{
			"--data-dir", s.DataDir,
			"--temporal.address", s.Temporal.Address,
			"--temporal.namespace", s.Temporal.Namespace,
			"--temporal.taskQueue", s.Temporal.TaskQueue,
		},
	})
	dctx, dcancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer dcancel()
	cmd := exec.CommandContext(dctx, node, filepath.Join(run, "driver.mjs"))
	cmd.Dir = run
	cmd.Env = append(os.Environ(), "PIRPC_CONFIG="+string(cfg), "HOME="+t.TempDir())
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	began := time.Now()
	err = cmd.Run()
	t.Logf("driver ran %s:\n%s", time.Since(began).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	if !strings.Contains(out.String(), "ok: every RpcClient method against starter rpc") {
		t.Fatal("the driver did not finish")
	}
}

// nodeModules returns a node_modules directory holding the package of
// package-lock.json: $PIRPC_NODE_MODULES, or one `npm ci` installs into
// the user cache, keyed by the lock file's hash (once per lock).
func nodeModules(t *testing.T) string {
	t.Helper()
	if dir := os.Getenv(nodeModulesEnv); dir != "" {
		if !hasPackage(dir) {
			t.Fatalf("%s=%s holds no @mariozechner/pi-coding-agent: run `npm ci` in test/pirpc and point it at test/pirpc/node_modules", nodeModulesEnv, dir)
		}
		return dir
	}
	if hasPackage("node_modules") {
		abs, _ := filepath.Abs("node_modules")
		return abs
	}
	lock, err := os.ReadFile("package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile("package.json")
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	dir := filepath.Join(cache, "durable-agent", "pirpc-"+hex.EncodeToString(sum[:8]))
	if hasPackage(filepath.Join(dir, "node_modules")) {
		return filepath.Join(dir, "node_modules")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatal("node is installed but npm is not: npm installs @mariozechner/pi-coding-agent for this test")
	}
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	// Install into a fresh directory, then move it into place: a
	// concurrent run never sees half an install.
	tmp, err := os.MkdirTemp(filepath.Dir(dir), "install-")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	for name, b := range map[string][]byte{"package.json": pkg, "package-lock.json": lock} {
		if err := os.WriteFile(filepath.Join(tmp, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--ignore-scripts", "--no-audit", "--no-fund")
	cmd.Dir = tmp
	var log bytes.Buffer
	cmd.Stdout, cmd.Stderr = &log, &log
	began := time.Now()
	if err := cmd.Run(); err != nil {
		t.Fatalf("npm ci of test/pirpc/package-lock.json (needs the npm registry once; or set %s): %v\n%s", nodeModulesEnv, err, tail(log.Bytes()))
	}
	t.Logf("npm ci installed the package in %s", time.Since(began).Round(time.Second))
	if err := os.Rename(tmp, dir); err != nil && !hasPackage(filepath.Join(dir, "node_modules")) {
		t.Fatal(err)
	}
	return filepath.Join(dir, "node_modules")
}

func hasPackage(modules string) bool {
	_, err := os.Stat(filepath.Join(modules, "@mariozechner", "pi-coding-agent", "package.json"))
	return err == nil
}

// tail is the end of a command's output.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}
