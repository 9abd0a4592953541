package devserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

const readyPollInterval = 100 * time.Millisecond

// awaitFrontend polls the frontend through the SDK, the way a worker will use
// it, until it serves the namespace. Polling covers the window in which the
// services are up but the namespace registry has not loaded yet.
func awaitFrontend(ctx context.Context, addr, namespace string, tlsConf *tls.Config) error {
	opts := client.Options{
		HostPort:          addr,
		Namespace:         namespace,
		ConnectionOptions: client.ConnectionOptions{TLS: tlsConf},
		// Failed attempts are expected while the server warms up; the last
		// one is reported in the error instead.
		Logger: sdklog.NewStructuredLogger(slog.New(slog.DiscardHandler)),
	}
	tick := time.NewTicker(readyPollInterval)
	defer tick.Stop()
	var lastErr error
	for {
		c, err := client.DialContext(ctx, opts)
		if err == nil {
			_, err = c.WorkflowService().DescribeNamespace(ctx,
				&workflowservice.DescribeNamespaceRequest{Namespace: namespace})
			c.Close()
			if err == nil {
				return nil
			}
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: frontend %s namespace %q %w (last error: %v)",
				addr, namespace, context.Cause(ctx), lastErr)
		case <-tick.C:
		}
	}
}
