package devserver

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/sdk/client"
	sdklog "go.temporal.io/sdk/log"
)

const readyPollInterval = 100 * time.Millisecond

// poll calls try every readyPollInterval until it returns nil. It fails
// with what (the listener waited for) and try's last error when ctx ends,
// or at once when stopped (nil: never) yields the listener's end.
func poll(ctx context.Context, what string, stopped <-chan error, try func() error) error {
	tick := time.NewTicker(readyPollInterval)
	defer tick.Stop()
	for {
		lastErr := try()
		if lastErr == nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: %s %w (last error: %v)", what, context.Cause(ctx), lastErr)
		case err := <-stopped:
			if err == nil {
				err = errors.New("server closed")
			}
			return fmt.Errorf("devserver: %s stopped while starting: %w", what, err)
		case <-tick.C:
		}
	}
}

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
	return poll(ctx, fmt.Sprintf("frontend %s namespace %q", addr, namespace), nil, func() error {
		c, err := client.DialContext(ctx, opts)
		if err != nil {
			return err
		}
		defer c.Close()
		_, err = c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: namespace})
		return err
	})
}

// waitHTTP polls url until it answers with a status below 500, so that
// UIAddress is usable as soon as Start returns.
func waitHTTP(ctx context.Context, url string, uiDone <-chan error) error {
	hc := &http.Client{Timeout: 2 * time.Second}
	return poll(ctx, "UI "+url, uiDone, func() error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return err
		}
		resp, err := hc.Do(req)
		if err != nil {
			return err
		}
		_ = resp.Body.Close()
		if resp.StatusCode >= http.StatusInternalServerError {
			return fmt.Errorf("status %s", resp.Status)
		}
		return nil
	})
}
