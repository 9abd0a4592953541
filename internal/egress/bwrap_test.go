package egress

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// End to end as the sandbox runner uses it: a real bwrap --unshare-net
// sandbox with the bridge binary and the proxy's socket bound in; curl
// inside reaches allowed hosts (plain HTTP and HTTPS through CONNECT) and
// is refused others, while the host's loopback and any direct address
// stay out of reach.
func TestBwrap_SandboxReachesOnlyAllowedHostsThroughBridge(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a bubblewrap sandbox")
	}
	bwrap, err := exec.LookPath("bwrap")
	if err != nil {
		t.Skip("bwrap not installed")
	}
	for _, tool := range []string{"curl", "bash"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skip(tool + " not installed")
		}
	}
	plain := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "plain "+r.Host)
	}))
	defer plain.Close()
	secure := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "secure "+r.Host)
	}))
	defer secure.Close()
	w := &world{
		names: map[string][]string{"allowed.test": {"203.0.113.7"}, "tls.test": {"203.0.113.8"}, "sneaky.test": {"127.0.0.1"}},
		dials: map[string]string{
			"203.0.113.7:80":  plain.Listener.Addr().String(),
			"203.0.113.8:443": secure.Listener.Addr().String(),
		},
	}
	p, log := startProxy(t, []string{"allowed.test", "tls.test", "sneaky.test"}, w, nil)
	_, hostPort, _ := net.SplitHostPort(plain.Listener.Addr().String())

	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		`curl -sS --max-time 10 http://allowed.test/; echo`,
		`curl -sS --max-time 10 -k https://tls.test/; echo`,
		`curl -sS --max-time 10 http://denied.test/`,
		`curl -sS --max-time 10 http://sneaky.test:` + hostPort + `/`,
		`curl -s --noproxy '*' --max-time 3 http://203.0.113.7/ || echo direct: no route`,
		`(exec 3<>/dev/tcp/127.0.0.1/` + hostPort + `) 2>/dev/null && echo host loopback: reached || echo host loopback: refused`,
		`ls -A ` + SandboxDir + `; ls -A /tmp | wc -l`,
	}, "\n")
	args := []string{"--unshare-net", "--unshare-pid", "--die-with-parent",
		"--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp", "--tmpfs", "/run"}
	args = append(args, SandboxArgs(exe, p.Path())...)
	args = append(append(args, "--"), BridgeArgv("bash", "-c", script)...)
	cmd := exec.Command(bwrap, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("bwrap: %v\n%s", err, out)
	}
	got := string(out)
	for _, want := range []string{
		"plain allowed.test\n",
		"secure tls.test\n",
		"egress proxy: host denied.test:80 is not in tools.sandbox.allowHosts\n",
		"egress proxy: host sneaky.test resolves only to internal addresses (127.0.0.1)",
		"direct: no route\n",
		"host loopback: refused\n",
		"bridge\nproxy.sock\n0\n", // the socket alone, not the worker's temp dir
	} {
		if !strings.Contains(got, want) {
			t.Errorf("sandbox output lacks %q:\n%s", want, got)
		}
	}
	if len(log.lines("method=CONNECT", "host=tls.test", "allowed=true")) != 1 || len(log.lines("host=denied.test", "allowed=false")) != 1 {
		t.Errorf("log:\n%s", log)
	}
}
