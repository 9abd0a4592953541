package main

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/debug"
	"syscall"

	"golang.org/x/term"

	"github.com/durableagent/durableagent/internal/cli"
)

// workerPkg is the package, relative to the module root, of the binary
// that hosts the demo: the worker links the embedded Temporal server, its
// Web UI and the worker, so the starter does not have to.
const workerPkg = "./worker"

// demoCmd is `starter demo`, which the starter adds to cli's commands.
var demoCmd = cli.Command{
	Name:    "demo",
	Summary: "one command: embedded Temporal + Web UI + worker, a small tool-using job with a retry, live (runs `worker demo`)",
	Run:     runDemo,
}

// runDemo finds or builds the worker binary and replaces this process
// with `worker demo ARGS...`: the demo runs inside the binary that links
// the embedded server.
func runDemo(ctx context.Context, env cli.Env, args []string) int {
	self := thisBuild()
	bin, err := demoBinary(ctx, self, env.Stderr, term.IsTerminal(int(os.Stderr.Fd())))
	if err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: %v\n", err)
		return cli.ExitUsage
	}
	argv := append([]string{"worker", "demo"}, args...)
	if err := syscall.Exec(bin, argv, os.Environ()); err != nil {
		fmt.Fprintf(env.Stderr, "starter demo: run %s: %v\n", bin, err)
		return cli.ExitUsage
	}
	return cli.ExitOK // not reached: Exec replaced this process
}

// build describes the running starter: its module, version and, when the
// binary was built from a source tree still on disk (go run, go build, go
// install from the module cache), that tree's root.
type build struct {
	modPath  string // e.g. github.com/durableagent/durableagent
	version  string // "(devel)", a tag, or a pseudo-version
	sum      string // the module's go.sum hash when installed with @version
	revision string // vcs.revision when stamped
	root     string // module source root, "" when not on disk
}

func thisBuild() build {
	var b build
	if bi, ok := debug.ReadBuildInfo(); ok {
		b = buildOf(bi)
	}
	if _, file, _, ok := runtime.Caller(0); ok {
		b.root = moduleRoot(file, b.modPath)
	}
	return b
}

// buildOf is the module, version, sum and VCS revision a binary records.
func buildOf(bi *debug.BuildInfo) build {
	b := build{modPath: bi.Main.Path, version: bi.Main.Version, sum: bi.Main.Sum}
	for _, s := range bi.Settings {
		if s.Key == "vcs.revision" {
			b.revision = s.Value
		}
	}
	return b
}
