// Command worker-cluster is the durable agent's worker for a real Temporal
// cluster: the Prompt workflow and its activities on the configured task
// queue, nothing else. Unlike ./worker it cannot start an embedded server
// (no --dev), so it links neither the Temporal server nor the Web UI: the
// binary is a fraction of the size and starts in a fraction of the
// memory (docs/cluster.md has the figures). The Dockerfile builds it.
//
// It connects the way every Temporal program does (temporal.toml and the
// TEMPORAL_* variables: address, namespace, API key, TLS; see
// internal/client.ClientOptions) and refuses to start without a configured
// model provider (model.provider: scripted is the explicit opt-in to the
// offline fake). Sessions go to session.store: postgres for workers on
// several machines.
package main

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/pflag"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/settings"
)

func main() {
	egress.MaybeRunBridge(os.Args[1:]) // the sandbox runner starts this binary as its egress bridge
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	fs := pflag.NewFlagSet("worker", pflag.ContinueOnError)
	codecServer := fs.String("codec-server", "", "serve the payload codec for a Temporal Web UI at this loopback `ADDR` (e.g. 127.0.0.1:8234)")
	codecOrigins := fs.StringSlice("codec-origin", nil, "browser `ORIGIN`s allowed to call the codec server (the Web UI's)")
	// Its reads leave out the dev.* keys: it has no --dev.
	return app.WorkerMain(args, fs, " (this worker has no --dev: run ./worker --dev for the embedded server)", clusterReads,
		func() bool { return true },
		func(ctx context.Context, s settings.Settings) (func() error, error) {
			c, err := client.Dial(ctx, s, nil)
			if err != nil {
				return nil, err
			}
			r, err := app.StartWorker(c, s, app.Extensions{}, *codecServer, *codecOrigins, nil)
			if err != nil {
				return nil, err
			}
			if r.Codec != nil {
				fmt.Printf("codec server: %s\n", r.Codec.URL())
			}
			opt, _ := client.ClientOptions(s, nil)
			fmt.Printf("temporal: %s (namespace %s)  task queue: %s  sessions: %s  model: %s\n",
				opt.HostPort, opt.Namespace, s.Temporal.TaskQueue, sessionsWhere(s), s.Model.Provider)
			return func() error { r.Close(); return nil }, nil
		})
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
