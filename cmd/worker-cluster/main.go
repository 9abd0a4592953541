// Command worker-cluster is the durable agent's worker for a real Temporal
// cluster: the Prompt workflow and its activities on the configured task
// queue, nothing else. Unlike ./worker it cannot start an embedded server
// (no --dev), so it links neither the Temporal server nor the Web UI: the
// binary is a fraction of the size and starts in a fraction of the
// memory (docs/cluster.md has the figures). The Dockerfile builds it.
//
// It connects the way every Temporal program does (temporal.toml and the
// TEMPORAL_* variables: address, namespace, API key, TLS; see
// internal/app.ClientOptions) and refuses to start without a configured
// model provider (model.provider: scripted is the explicit opt-in to the
// offline fake). Sessions go to session.store: postgres for workers on
// several machines.
package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/settings"
)

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	codecServer := fs.String("codec-server", "", "serve the payload codec for a Temporal Web UI at this loopback `ADDR` (e.g. 127.0.0.1:8234)")
	codecOrigins := fs.StringSlice("codec-origin", nil, "browser `ORIGIN`s allowed to call the codec server (the Web UI's)")
	settings.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, pflag.ErrHelp) {
			return 0
		}
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "worker: unexpected argument %q (this worker has no --dev: run ./worker --dev for the embedded server)\n", fs.Arg(0))
		return 2
	}
	opts := settings.LoadOptions{Flags: fs}
	s, err := settings.Load(opts)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	// A setting this worker does not read (one each prompt carries, such
	// as tools.requireApproval, or a dev.* key: it has no --dev) is named
	// once, not ignored in silence.
	if err := app.WarnUnread(os.Stderr, opts, clusterReads); err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	src, err := settings.Source(opts, "model.provider")
	if err == nil {
		err = app.CheckModelProvider(s, src)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	c, err := app.Dial(ctx, s, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	defer c.Close()
	w, err := app.NewWorker(c, s)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if err := w.Start(); err != nil {
		fmt.Fprintf(os.Stderr, "worker: start worker on task queue %s: %v\n", s.Temporal.TaskQueue, err)
		return 2
	}
	defer w.Stop()
	srv, err := app.ServeCodec(s, *codecServer, false, *codecOrigins, nil)
	if err != nil {
		fmt.Fprintf(os.Stderr, "worker: %v\n", err)
		return 2
	}
	if srv != nil {
		defer srv.Close()
		fmt.Printf("codec server: %s\n", srv.URL())
	}
	opt, _ := app.ClientOptions(s, nil)
	fmt.Printf("temporal: %s (namespace %s)  task queue: %s  sessions: %s  model: %s\n",
		opt.HostPort, opt.Namespace, s.Temporal.TaskQueue, sessionsWhere(s), s.Model.Provider)
	fmt.Println("worker running; Ctrl-C to stop")
	<-ctx.Done()
	fmt.Println("worker: stopping")
	return 0
}

// sessionsWhere names the session store for the start banner, without
// the database password.
func sessionsWhere(s settings.Settings) string {
	if s.Session.Store == settings.SessionStorePostgres {
		if s.Session.PostgresURL == "" {
			return "postgres (PG* environment)"
		}
		return "postgres " + settings.RedactURL(s.Session.PostgresURL)
	}
	return s.Session.Store + " " + s.DataDir
}

// clusterReads says whether this worker reads k: a worker's keys but the
// embedded server's (dev.*), which only ./worker --dev and the demo read.
func clusterReads(k settings.KeyInfo) bool {
	return settings.WorkerReads(k) && !strings.HasPrefix(k.Key, "dev.")
}
