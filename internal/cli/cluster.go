package cli

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"go.temporal.io/api/serviceerror"
	"go.temporal.io/api/workflowservice/v1"
	sdkclient "go.temporal.io/sdk/client"
	"google.golang.org/protobuf/types/known/durationpb"

	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/line"
	"github.com/durableagent/durableagent/internal/settings"
)

const clusterUsage = `starter cluster wait [--timeout 2m]
       starter cluster init [--retention 168h] [--timeout 2m]`

// clusterRetry is how often wait and init try again.
const clusterRetry = time.Second

// runCluster does the two things a new cluster needs before its workers
// start, through the SDK and the same connection settings as every
// command (TEMPORAL_ADDRESS, TLS, API key): wait until the server serves,
// and create (or check) the namespace with the search attributes the
// product registers. The temporal CLI can do the same; it is not needed.
func runCluster(ctx context.Context, env Env, args []string) int {
	if len(args) == 0 || (args[0] != "wait" && args[0] != "init") {
		fmt.Fprintf(env.Stderr, "starter cluster: want a subcommand: wait or init\nusage: %s\n", clusterUsage)
		return ExitUsage
	}
	sub, args := args[0], args[1:]
	name := "cluster " + sub
	c := newFlags(name, env)
	timeout := c.fs.Duration("timeout", 2*time.Minute, "give up after this long")
	var retention *time.Duration
	if sub == "init" {
		retention = c.fs.Duration("retention", 7*24*time.Hour, "how long Temporal keeps a finished prompt's history (a new namespace's retention)")
	}
	if !c.parseArgs(env, args, 0, "starter "+name+" [flags]") {
		return ExitUsage
	}
	s, ok := c.settings(env)
	if !ok {
		return ExitUsage
	}
	opts, err := client.ClientOptions(s, nil)
	if err != nil {
		return fail(env, name, err)
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	cl, err := waitServing(ctx, env, s, opts.HostPort)
	if err != nil {
		return fail(env, name, err)
	}
	defer cl.Close()
	if sub == "wait" {
		fmt.Fprintf(env.Stdout, "temporal at %s is serving\n", opts.HostPort)
		return 0
	}
	if err := initNamespace(ctx, env, cl, opts.HostPort, opts.Namespace, *retention); err != nil {
		return fail(env, name, err)
	}
	return 0
}

// waitServing dials until the server answers its health check, saying on
// stderr what it waits for (at once, then every 10 s), so a wait that
// never ends is never silent.
func waitServing(ctx context.Context, env Env, s settings.Settings, addr string) (sdkclient.Client, error) {
	var said time.Time
	var last error
	quiet := slog.New(slog.DiscardHandler)
	for {
		cl, err := client.Dial(ctx, s, quiet)
		if err == nil {
			_, err = cl.CheckHealth(ctx, &sdkclient.CheckHealthRequest{})
			if err == nil {
				return cl, nil
			}
			cl.Close()
		}
		if ctx.Err() != nil { // the error before the deadline's says why
			return nil, fmt.Errorf("temporal at %s is not serving: %s", addr, line.First(cmp.Or(last, err).Error()))
		}
		last = err
		if time.Since(said) >= 10*time.Second {
			fmt.Fprintf(env.Stderr, "starter: waiting for temporal at %s: %s\n", addr, line.First(err.Error()))
			said = time.Now()
		}
		select {
		case <-ctx.Done():
		case <-time.After(clusterRetry):
		}
	}
}

// initNamespace registers namespace with retention unless it exists, waits
// until the server serves it, and adds the product's search attributes it
// lacks (app.EnsureJobSearch, which a worker also runs on start).
func initNamespace(ctx context.Context, env Env, cl sdkclient.Client, addr, namespace string, retention time.Duration) error {
	_, err := cl.WorkflowService().RegisterNamespace(ctx, &workflowservice.RegisterNamespaceRequest{
		Namespace: namespace, WorkflowExecutionRetentionPeriod: durationpb.New(retention)})
	var exists *serviceerror.NamespaceAlreadyExists
	created := err == nil
	if err != nil && !errors.As(err, &exists) {
		return fmt.Errorf("create namespace %q at %s: %s", namespace, addr, line.First(err.Error()))
	}
	// A new namespace reaches every frontend's cache within seconds; the
	// search attributes can only be added once it has.
	for {
		var desc *workflowservice.DescribeNamespaceResponse
		desc, err = cl.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		if err == nil {
			if err = app.EnsureJobSearch(ctx, cl, namespace); err == nil {
				kept := desc.GetConfig().GetWorkflowExecutionRetentionTtl().AsDuration()
				verb := "exists"
				if created {
					verb = "created"
				}
				fmt.Fprintf(env.Stdout, "namespace %s %s at %s (retention %s; search attributes %s)\n",
					namespace, verb, addr, kept, strings.Join(app.JobSearchAttributes(), ", "))
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("namespace %q at %s is not ready: %s", namespace, addr, line.First(err.Error()))
		case <-time.After(clusterRetry):
		}
	}
}
