// Command worker runs the durable agent's Temporal worker: the Prompt
// workflow and its activities on the configured task queue. With --dev it
// first starts an embedded Temporal server (SQLite under the data dir) and
// the Temporal Web UI, all in this process. With a codec key configured
// (codec.keyFile or DURABLE_AGENT_CODEC_KEY) workflow payloads are
// encrypted, and --codec-server (automatic with --dev) serves the codec on
// loopback so the Web UI can show them. `worker demo` is `starter demo`:
// the demo runs here, in the binary that links the embedded server, and
// the starter execs it (starter/demo.go).
package main

import (
	"context"
	"fmt"
	"os"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/metrics"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
)

func main() {
	egress.MaybeRunBridge(os.Args[1:]) // the sandbox runner starts this binary as its egress bridge
	if len(os.Args) > 1 && os.Args[1] == "demo" {
		os.Exit(cli.Main(os.Args[1:], cli.Env{}, demoCommand))
	}
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	dev := fs.Bool("dev", false, "start an embedded Temporal server and Web UI in this process")
	codecServer := fs.String("codec-server", "", "serve the payload codec for the Temporal Web UI at this loopback `ADDR` "+
		"(e.g. 127.0.0.1:8234; \"off\" disables it; default: 127.0.0.1:8234 with --dev when a codec key is configured)")
	fs.Usage = func() {
		fmt.Fprintln(os.Stderr, "usage: worker [flags]\n       worker demo [flags]   the demo (what starter demo runs; see starter demo --help)\n\nflags:")
		fs.PrintDefaults()
	}
	codecOrigins := fs.StringSlice("codec-origin", nil, "further browser `ORIGIN`s allowed to call the codec server (the Web UI's are always allowed)")
	return app.WorkerMain(args, fs, ": worker takes no arguments, only flags (see worker --help)", settings.WorkerReads,
		func() bool { return !*dev },
		func(ctx context.Context, s settings.Settings) (func() error, error) {
			if *dev && s.Metrics.Listen == "" {
				s.Metrics.Listen = metrics.DevAddress // off with metrics.listen: off
			}
			st, err := stack.Start(ctx, s, stack.Options{Dev: *dev, Out: os.Stdout, CodecServer: *codecServer, CodecOrigins: *codecOrigins})
			if err != nil {
				return nil, err
			}
			return st.Close, nil
		})
}
