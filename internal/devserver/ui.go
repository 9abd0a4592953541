package devserver

import (
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
