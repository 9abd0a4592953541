package integration

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

// (f) tools.sandbox.network allowlist on a worker on the embedded
// server: the model's bash reaches the one listed host:port through the
// worker's egress proxy (a loopback server, listed as an IP so no
// internet is needed), gets 403 for a host not listed and for the
// Temporal frontend asked through the proxy, and reaches nothing
// directly.
func TestSandbox_NetworkAllowlistReachesOnlyListedHosts(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		t.Skip("curl not installed")
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "ALLOWED-BODY")
	}))
	defer srv.Close()
	addr := srv.Listener.Addr().String()
	_, port, _ := net.SplitHostPort(addr)
	e := sandboxEnv(t)
	e.s.Tools.Sandbox.Network = settings.SandboxNetworkAllowlist
	e.s.Tools.Sandbox.AllowHosts = []string{addr}
	e.startWorker()
	// NO_PROXY names 127.0.0.1 (the sandbox's own loopback); --noproxy ''
	// sends even that through the proxy.
	cmd := strings.Join([]string{
		fmt.Sprintf(`curl -sS --max-time 10 --noproxy '' http://%s/; echo`, addr),
		`curl -sS --max-time 10 -o /dev/null -w 'denied: %{http_code}\n' http://denied.invalid/`,
		fmt.Sprintf(`curl -sS --max-time 10 --noproxy '' -o /dev/null -w 'frontend: %%{http_code}\n' http://%s/`, e.s.Temporal.Address),
		fmt.Sprintf(`(exec 3<>/dev/tcp/127.0.0.1/%s) 2>/dev/null && echo DIRECT-REACHED`, port),
		`echo END-OF-CALL`,
	}, "\n")
	out, _, _ := hostileBash(t, e, "sbx-allowlist", cmd)
	for _, want := range []string{"ALLOWED-BODY", "denied: 403", "frontend: 403"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%.1500s", want, out)
		}
	}
	if strings.Contains(out, "DIRECT-REACHED") {
		t.Errorf("the command reached the host's loopback directly:\n%.1500s", out)
	}
}
