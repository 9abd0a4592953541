package devserver

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.temporal.io/api/workflowservice/v1"
	"go.temporal.io/server/common/config"

	"github.com/durableagent/durableagent/agent"
	"github.com/durableagent/durableagent/internal/app"
	"github.com/durableagent/durableagent/internal/cli"
	"github.com/durableagent/durableagent/internal/client"
	"github.com/durableagent/durableagent/internal/session"
	"github.com/durableagent/durableagent/internal/settings"
)

// pki is a CA with a server certificate for 127.0.0.1 and a client
// certificate, as PEM files.
type pki struct {
	dir                                        string
	caFile, certFile, keyFile, cliCert, cliKey string
}

func newPKI(t *testing.T, name string) pki {
	t.Helper()
	dir := filepath.Join(t.TempDir(), name)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	p := pki{dir: dir}
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	ca := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	p.caFile = p.write(t, "ca.pem", "CERTIFICATE", caDER)
	leaf := func(file string, serial int64, usage x509.ExtKeyUsage, ips []net.IP) (string, string) {
		key, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		tmpl := &x509.Certificate{
			SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: file},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage},
			IPAddresses: ips, DNSNames: []string{"localhost"},
		}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kb, _ := x509.MarshalECPrivateKey(key)
		return p.write(t, file+".pem", "CERTIFICATE", der), p.write(t, file+"-key.pem", "EC PRIVATE KEY", kb)
	}
	p.certFile, p.keyFile = leaf("server", 2, x509.ExtKeyUsageServerAuth, []net.IP{net.ParseIP("127.0.0.1")})
	p.cliCert, p.cliKey = leaf("client", 3, x509.ExtKeyUsageClientAuth, nil)
	return p
}

func (p pki) write(t *testing.T, name, typ string, der []byte) string {
	path := filepath.Join(p.dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// mutualTLS is o with a frontend that serves TLS with p's server
// certificate and requires a client certificate of p's CA; the server's
// own clients (its system worker, the readiness check) present p's client
// certificate.
func (p pki) mutualTLS(t *testing.T, o Options) Options {
	t.Helper()
	client := config.ClientTLS{RootCAFiles: []string{p.caFile}}
	o.tlsServer = func(c *config.Config) {
		c.Global.TLS.Frontend = config.GroupTLS{Client: client, Server: config.ServerTLS{
			CertFile: p.certFile, KeyFile: p.keyFile, RequireClientAuth: true, ClientCAFiles: []string{p.caFile}}}
		c.Global.TLS.SystemWorker = config.WorkerTLS{CertFile: p.cliCert, KeyFile: p.cliKey, Client: client}
	}
	ca, err := os.ReadFile(p.caFile)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(ca)
	cert, err := tls.LoadX509KeyPair(p.cliCert, p.cliKey)
	if err != nil {
		t.Fatal(err)
	}
	o.tlsClient = &tls.Config{RootCAs: pool, Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	return o
}

// mapEnv is an environment for envconfig and the settings.
type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// The product connects to a TLS frontend that requires client
// certificates like every Temporal program: by the TEMPORAL_TLS_*
// variables or a temporal.toml profile (go.temporal.io/sdk/contrib/
// envconfig), with settings that are set winning over the profile.
func TestTLS_MutualTLSByEnvironmentAndProfile(t *testing.T) {
	skipShort(t)
	p := newPKI(t, "cluster")
	srv := startServer(t, p.mutualTLS(t, Options{DataDir: t.TempDir(), UIPort: NoUI}))
	addr := srv.FrontendAddress()
	base := settings.Defaults()
	base.DataDir = t.TempDir()

	toml := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(toml, []byte(`
[profile.cluster]
address = "`+addr+`"
namespace = "default"
[profile.cluster.tls]
client_cert_path = "`+p.cliCert+`"
client_key_path = "`+p.cliKey+`"
server_ca_cert_path = "`+p.caFile+`"

[profile.stale]
address = "127.0.0.1:1"
[profile.stale.tls]
client_cert_path = "`+p.cliCert+`"
client_key_path = "`+p.cliKey+`"
server_ca_cert_path = "`+p.caFile+`"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	mtls := mapEnv{"TEMPORAL_ADDRESS": addr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.caFile,
		"TEMPORAL_TLS_CLIENT_CERT_PATH": p.cliCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": p.cliKey}
	explicit := base
	explicit.Temporal.Address = addr
	for name, c := range map[string]struct {
		s   settings.Settings
		env mapEnv
	}{
		"TEMPORAL_TLS variables":                 {base, mtls},
		"temporal.toml profile":                  {base, mapEnv{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_PROFILE": "cluster"}},
		"settings address wins over the profile": {explicit, mapEnv{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_PROFILE": "stale"}},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			c, err := client.DialEnv(ctx, c.s, quietLogger(), c.env)
			if err != nil {
				t.Fatalf("DialEnv: %v", err)
			}
			defer c.Close()
			if _, err := c.WorkflowService().DescribeNamespace(ctx, &workflowservice.DescribeNamespaceRequest{Namespace: "default"}); err != nil {
				t.Fatalf("DescribeNamespace over mTLS: %v", err)
			}
		})
	}

	// End to end over mTLS: the product's worker (app.NewWorker, with the
	// tool worker of its host) polls through a client dialled by the
	// TEMPORAL_TLS_* variables, and the starter's own code (cli.Main)
	// sends a prompt through the same variables; the scripted model
	// calls bash, which runs on the host's tool queue, then answers.
	t.Run("worker polls and a prompt completes", func(t *testing.T) {
		ws := t.TempDir()
		s := base
		s.Temporal.TaskQueue = "tls-e2e"
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		c, err := client.DialEnv(ctx, s, quietLogger(), mtls)
		if err != nil {
			t.Fatalf("worker dial over mTLS: %v", err)
		}
		defer c.Close()
		w, err := app.NewWorker(c, s)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Start(); err != nil {
			t.Fatalf("worker start over mTLS: %v", err)
		}
		defer w.Stop()

		env := map[string]string{"DURABLE_AGENT_HOME": s.DataDir, "DURABLE_AGENT_TEMPORAL_TASKQUEUE": s.Temporal.TaskQueue}
		for k, v := range mtls {
			env[k] = v
		}
		for k, v := range env {
			t.Setenv(k, v) // the settings read the process environment (viper)
		}
		var stdout, stderr bytes.Buffer
		code := cli.Main([]string{"prompt", "--session", "over-mtls", "--workspace", ws,
			"--fault", `tool:bash {"command":"echo tool ran over mTLS"}`, "--fault", "text:answered over mTLS", "hello"},
			cli.Env{Stdout: &stdout, Stderr: &stderr, Stdin: strings.NewReader("")})
		if code != cli.ExitOK || !strings.Contains(stdout.String(), "answered over mTLS") {
			t.Fatalf("starter prompt over mTLS: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
		}
		store, err := session.Open(filepath.Join(s.DataDir, "sessions"))
		if err != nil {
			t.Fatal(err)
		}
		sess, err := store.Load("over-mtls")
		if err != nil {
			t.Fatal(err)
		}
		var tool string
		for _, e := range sess.Entries {
			if e.Message != nil && e.Message.Role == agent.RoleToolResult {
				tool = strings.TrimSpace(e.Message.Text())
			}
		}
		if tool != "tool ran over mTLS" || sess.Header.Host != app.ToolHost(s) {
			t.Errorf("bash result %q on host %q, want the command's output from the host's tool worker %q", tool, sess.Header.Host, app.ToolHost(s))
		}
	})

	wrong := newPKI(t, "other")
	for name, c := range map[string]struct {
		env  mapEnv
		want []string
	}{
		"a CA that did not sign the server": {
			mapEnv{"TEMPORAL_ADDRESS": addr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": wrong.caFile,
				"TEMPORAL_TLS_CLIENT_CERT_PATH": p.cliCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": p.cliKey},
			[]string{"TLS handshake failed", "x509: certificate signed by unknown authority", "TEMPORAL_TLS_SERVER_CA_CERT_PATH"}},
		"a client certificate of another CA": {
			mapEnv{"TEMPORAL_ADDRESS": addr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.caFile,
				"TEMPORAL_TLS_CLIENT_CERT_PATH": wrong.cliCert, "TEMPORAL_TLS_CLIENT_KEY_PATH": wrong.cliKey},
			// The server's alert ("tls: ...") or, when the client only
			// sees the closed socket, the same hint.
			[]string{"TLS handshake failed", "TEMPORAL_TLS_CLIENT_CERT_PATH"}},
		"no client certificate": {
			mapEnv{"TEMPORAL_ADDRESS": addr, "TEMPORAL_TLS_SERVER_CA_CERT_PATH": p.caFile},
			[]string{"TLS handshake failed", "TEMPORAL_TLS_CLIENT_CERT_PATH"}},
		"no TLS at all": {mapEnv{"TEMPORAL_ADDRESS": addr}, []string{"the server may require TLS"}},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := client.DialEnv(context.Background(), base, quietLogger(), c.env)
			if err == nil {
				t.Fatal("DialEnv succeeded")
			}
			msg := err.Error()
			t.Logf("error: %s", msg)
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, "cannot reach Temporal at "+addr+" ") {
				t.Errorf("error %q: want one line starting with the address", msg)
			}
			for _, w := range c.want {
				if !strings.Contains(msg, w) {
					t.Errorf("error %q lacks %q", msg, w)
				}
			}
		})
	}
}
