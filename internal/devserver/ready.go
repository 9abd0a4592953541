package devserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"

	"github.com/durableagent/durableagent/internal/visibility"
)

const readyPollInterval = 100 * time.Millisecond

// awaitFrontend polls the frontend through the SDK, the way a worker will use
// it, until it serves the namespace; then it registers missing search
// attributes. Polling covers the window in which the services are up but the
// namespace registry has not loaded yet.
func awaitFrontend(ctx context.Context, addr, namespace string, attrs map[string]enumspb.IndexedValueType, tlsConf *tls.Config) error {
	c, err := dialWhenReady(ctx, addr, namespace, tlsConf)
	if err != nil {
		return err
	}
	defer c.Close()
	if err := visibility.Ensure(ctx, c, namespace, attrs); err != nil {
		return fmt.Errorf("devserver: %w", err)
	}
	return nil
}

func dialWhenReady(ctx context.Context, addr, namespace string, tlsConf *tls.Config) (client.Client, error) {
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
			if err == nil {
				return c, nil
			}
			c.Close()
		}
		lastErr = err
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("devserver: frontend %s namespace %q %w (last error: %v)",
				addr, namespace, context.Cause(ctx), lastErr)
		case <-tick.C:
		}
	}
}
