package devserver

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	uiserver "github.com/temporalio/ui-server/v2/server"
	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	uioptions "github.com/temporalio/ui-server/v2/server/server_options"
)

// newUI builds the Web UI server for the frontend at frontendAddr. It is
// served from the assets embedded in the ui-server module, so it works
// offline.
func newUI(ip string, port int, frontendAddr, namespace string) *uiserver.Server {
	return uiserver.NewServer(uioptions.WithConfigProvider(&uiconfig.Config{
		Host:                ip,
		Port:                port,
		TemporalGRPCAddress: frontendAddr,
		EnableUI:            true,
		DefaultNamespace:    namespace,
		// Plain HTTP on a local port: a Secure CSRF cookie would never be
		// sent back and every write action in the UI would fail.
		CORS: uiconfig.CORS{CookieInsecure: true},
		// Request logs from the UI would drown the host program's output.
		HideLogs: true,
	}))
}

// runUI serves the UI in the background; the ui-server's Start blocks until
// Stop. Its listen error is fatal to the process inside the ui-server
// library, which is why Start checks that the port is free beforehand.
func runUI(ui *uiserver.Server) <-chan error {
	done := make(chan error, 1)
	go func() { done <- ui.Start() }()
	return done
}

// waitHTTP polls url until it answers with a status below 500, so that
// UIAddress is usable as soon as Start returns.
func waitHTTP(ctx context.Context, url string, uiDone <-chan error) error {
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	var lastErr error
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
		if err != nil {
			return fmt.Errorf("devserver: build UI request %s: %w", url, err)
		}
		resp, err := client.Do(req)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode < http.StatusInternalServerError {
				return nil
			}
			lastErr = fmt.Errorf("status %s", resp.Status)
		} else {
			lastErr = err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("devserver: UI %s not ready: %w (last error: %v)", url, context.Cause(ctx), lastErr)
		case err := <-uiDone:
			if err == nil {
				err = errors.New("server closed")
			}
			return fmt.Errorf("devserver: UI %s stopped while starting: %w", url, err)
		case <-tick.C:
		}
	}
}
