package devserver

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"time"

	enumspb "go.temporal.io/api/enums/v1"
	"go.temporal.io/api/operatorservice/v1"
	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
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
	if err := registerSearchAttributes(ctx, c, namespace, attrs); err != nil {
		return err
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

// registerSearchAttributes adds the attributes the namespace lacks. It runs
// on every start, so attributes added to Options later reach an existing
// data dir too.
func registerSearchAttributes(ctx context.Context, c client.Client, namespace string, want map[string]enumspb.IndexedValueType) error {
	if len(want) == 0 {
		return nil
	}
	have, err := c.OperatorService().ListSearchAttributes(ctx,
		&operatorservice.ListSearchAttributesRequest{Namespace: namespace})
	if err != nil {
		return fmt.Errorf("devserver: list search attributes of %q: %w", namespace, err)
	}
	missing := make(map[string]enumspb.IndexedValueType)
	for name, typ := range want {
		if _, ok := have.GetSystemAttributes()[name]; ok {
			return fmt.Errorf("devserver: search attribute %q is a system attribute", name)
		}
		got, ok := have.GetCustomAttributes()[name]
		if !ok {
			missing[name] = typ
			continue
		}
		if got != typ {
			return fmt.Errorf("devserver: search attribute %q exists with type %s, not %s", name, got, typ)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if _, err := c.OperatorService().AddSearchAttributes(ctx, &operatorservice.AddSearchAttributesRequest{
		Namespace:        namespace,
		SearchAttributes: missing,
	}); err != nil {
		return fmt.Errorf("devserver: add search attributes to %q: %w", namespace, err)
	}
	return nil
}
