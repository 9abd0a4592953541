package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

// Issue 23/24: the client is a normal-sized binary; it must not link the
// Temporal server or its Web UI (the worker binary does).
func TestStarter_DoesNotLinkTheServerOrUI(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", ".").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	for _, l := range strings.Fields(string(out)) {
		if strings.HasPrefix(l, "go.temporal.io/server") || strings.HasPrefix(l, "github.com/temporalio/ui-server") {
			t.Fatalf("starter links %s: the embedded server and UI belong in the worker binary", l)
		}
	}
}

// writeModule writes a small module whose ./worker prints its arguments.
func writeModule(t *testing.T, greeting string) string {
	t.Helper()
	root := t.TempDir()
	files := map[string]string{
		"go.mod":           "module example.com/m\n\ngo 1.22\n",
		"worker/main.go":   "package main\n\nimport (\"fmt\"; \"os\")\n\nfunc main() { fmt.Println(\"" + greeting + "\", os.Args[1:]) }\n",
		"worker/x_test.go": "package main\n",
	}
	for name, text := range files {
		p := filepath.Join(root, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return root
}

// The first `starter demo` from a source tree says what it compiles and
// how long that takes before compiling; the next one starts at once with
// the same binary; a changed source builds anew and the old build goes.
func TestCachedWorker_SaysFirstBuildsOnceThenReuses(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root := writeModule(t, "hello")
	cache := t.TempDir()
	self := build{modPath: "example.com/m", version: "(devel)", root: root}
	var out bytes.Buffer
	bin, err := cachedWorker(context.Background(), goBin, self, cache, &out, false)
	if err != nil {
		t.Fatal(err)
	}
	first := out.String()
	if !strings.HasPrefix(first, compileNote+"\n") || !strings.Contains(first, "built: ") {
		t.Fatalf("first build printed %q, want the compile note first and a closing built: line", first)
	}
	run, err := exec.Command(bin, "demo", "--keep=false").Output()
	if err != nil || strings.TrimSpace(string(run)) != "hello [demo --keep=false]" {
		t.Fatalf("built binary ran: %q, %v", run, err)
	}

	out.Reset()
	again, err := cachedWorker(context.Background(), goBin, self, cache, &out, false)
	if err != nil || again != bin || out.Len() != 0 {
		t.Fatalf("second run: %q, %v, printed %q; want %q at once and silently", again, err, out.String(), bin)
	}

	// A test file does not go into the binary: same key.
	if err := os.WriteFile(filepath.Join(root, "worker", "x_test.go"), []byte("package main\n// changed\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if k, err := cachedWorker(context.Background(), goBin, self, cache, &out, false); err != nil || k != bin {
		t.Fatalf("after a test-file change: %q, %v; want the cached %q", k, err, bin)
	}

	if err := os.WriteFile(filepath.Join(root, "worker", "main.go"),
		[]byte("package main\n\nimport \"fmt\"\n\nfunc main() { fmt.Println(\"changed\") }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	next, err := cachedWorker(context.Background(), goBin, self, cache, &out, false)
	if err != nil || next == bin || !strings.HasPrefix(out.String(), compileNote) {
		t.Fatalf("after a source change: %q, %v, printed %q; want a new build", next, err, out.String())
	}
	if run, _ := exec.Command(next).Output(); strings.TrimSpace(string(run)) != "changed" {
		t.Fatalf("new build ran: %q", run)
	}
	if _, err := os.Stat(bin); !os.IsNotExist(err) {
		t.Fatalf("the old build %s is still in the cache (err %v)", bin, err)
	}
}

// A build that fails says so in one error that carries the compiler's words.
func TestCachedWorker_BuildErrorIsShown(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go on PATH")
	}
	root := writeModule(t, "hello")
	if err := os.WriteFile(filepath.Join(root, "worker", "main.go"), []byte("package main\n\nfunc main() { undefinedThing() }\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = cachedWorker(context.Background(), goBin, build{modPath: "example.com/m", root: root}, t.TempDir(), &bytes.Buffer{}, false)
	if err == nil || !strings.Contains(err.Error(), "go build ./worker failed") || !strings.Contains(err.Error(), "undefinedThing") {
		t.Fatalf("err = %v, want the failed build with the compiler's message", err)
	}
}

// An installed starter (no source tree, no worker of its version around)
// prints the exact command that installs the worker of its version.
func TestDemoBinary_InstalledWithoutSourceNamesTheInstallCommand(t *testing.T) {
	t.Setenv("PATH", t.TempDir())
	self := build{modPath: "github.com/durableagent/durableagent", version: "v1.2.3"}
	_, err := demoBinary(context.Background(), self, &bytes.Buffer{}, false)
	if err == nil || !strings.HasSuffix(err.Error(), "go install github.com/durableagent/durableagent/worker@v1.2.3") {
		t.Fatalf("err = %v, want it to end with the go install command of v1.2.3", err)
	}
	self.version = "(devel)"
	if _, err := demoBinary(context.Background(), self, &bytes.Buffer{}, false); err == nil || !strings.HasSuffix(err.Error(), "/worker@latest") {
		t.Fatalf("devel build: err = %v, want @latest", err)
	}
}

// The source tree is found only for this module and only on disk.
func TestModuleRoot(t *testing.T) {
	root := writeModule(t, "x")
	file := filepath.Join(root, "worker", "main.go")
	if got := moduleRoot(file, "example.com/m"); got != root {
		t.Errorf("moduleRoot = %q, want %q", got, root)
	}
	if got := moduleRoot(file, "example.com/other"); got != "" {
		t.Errorf("another module's tree: %q, want none", got)
	}
	if got := moduleRoot("example.com/m/worker/main.go", "example.com/m"); got != "" {
		t.Errorf("a -trimpath file name: %q, want none", got)
	}
}

// A worker named by DURABLE_AGENT_WORKER_BIN is run as it is; a name that
// does not exist is a one-line error naming the variable.
func TestDemoBinary_WorkerBinEnvWins(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "worker")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	t.Setenv(settings.EnvWorkerBin, bin)
	got, err := demoBinary(context.Background(), build{root: "/nonexistent"}, io.Discard, false)
	if err != nil || got != bin {
		t.Fatalf("demoBinary = %q, %v; want %q", got, err, bin)
	}
	t.Setenv(settings.EnvWorkerBin, bin+"-missing")
	_, err = demoBinary(context.Background(), build{root: "/nonexistent"}, io.Discard, false)
	if err == nil || !strings.Contains(err.Error(), settings.EnvWorkerBin) || strings.Contains(err.Error(), "\n") {
		t.Fatalf("a missing binary: err = %v, want one line naming %s", err, settings.EnvWorkerBin)
	}
}
