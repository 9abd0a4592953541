// Command worker runs the durable agent's Temporal worker: the Prompt
// workflow and its activities on the configured task queue. With --dev it
// first starts an embedded Temporal server (SQLite under the data dir) and
// the Temporal Web UI, all in this process. With a codec key configured
// (codec.keyFile or DURABLE_AGENT_CODEC_KEY) workflow payloads are
// encrypted, and --codec-server (automatic with --dev) serves the codec on
// loopback so the Web UI can show them.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/settings"
	"github.com/durableagent/durableagent/internal/stack"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	dev := fs.Bool("dev", false, "start an embedded Temporal server and Web UI in this process")
	codecServer := fs.String("codec-server", "", "serve the payload codec for the Temporal Web UI at this loopback `ADDR` "+
		"(e.g. 127.0.0.1:8234; \"off\" disables it; default: 127.0.0.1:8234 with --dev when a codec key is configured)")
	codecOrigins := fs.StringSlice("codec-origin", nil, "further browser `ORIGIN`s allowed to call the codec server (the Web UI's are always allowed)")
	settings.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected argument %q: worker takes no arguments, only flags (see worker --help)\n", fs.Arg(0))
		return 2
	}
	opts := settings.LoadOptions{Flags: fs}
	s, err := settings.Load(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	// A setting the worker does not read (one each prompt carries, such
	// as tools.requireApproval) is named once, not ignored in silence.
	if err := app.WarnUnread(os.Stderr, opts, settings.WorkerReads); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if !*dev {
		// Outside --dev the scripted fake must be asked for by name.
		src, err := settings.Source(opts, "model.provider")
		if err == nil {
			err = app.CheckModelProvider(s, src)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "worker: %v\n", err)
			return 2
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	st, err := stack.Start(ctx, s, stack.Options{
		Dev: *dev, Out: os.Stdout, CodecServer: *codecServer, CodecOrigins: *codecOrigins,
	})
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	fmt.Println("worker running; Ctrl-C to stop")
	<-ctx.Done()
	fmt.Println("worker: stopping")
	if err := st.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "worker: stop: %v\n", err)
		return 1
	}
	return 0
}
