package devserver

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"

	uiconfig "github.com/temporalio/ui-server/v2/server/config"
	"go.temporal.io/server/common/config"
)

// TLS makes the frontend serve TLS, as a production cluster does; with
// ClientCAFile set, mutual TLS. The dev server itself stays unauthenticated
// otherwise (no authorizer): this exists so that clients' TLS settings can
// be tested against a real frontend.
type TLS struct {
	// CertFile and KeyFile are the frontend's certificate and key (PEM).
	// The certificate must name the address clients dial (an IP SAN for
	// 127.0.0.1).
	CertFile, KeyFile string
	// CAFile is the CA that signed CertFile. The server's own clients (its
	// system worker, the readiness check, the Web UI) verify the frontend
	// with it.
	CAFile string
	// ClientCAFile, when set, makes the frontend require a client
	// certificate signed by this CA (mutual TLS).
	ClientCAFile string
	// ClientCertFile and ClientKeyFile are what the server's own clients
	// present under mutual TLS; required with ClientCAFile.
	ClientCertFile, ClientKeyFile string
}

func (t *TLS) check() error {
	if t.CertFile == "" || t.KeyFile == "" || t.CAFile == "" {
		return errors.New("devserver: TLS needs CertFile, KeyFile and CAFile")
	}
	if t.ClientCAFile != "" && (t.ClientCertFile == "" || t.ClientKeyFile == "") {
		return errors.New("devserver: mutual TLS (ClientCAFile) needs ClientCertFile and ClientKeyFile for the server's own clients")
	}
	return nil
}

// apply puts the frontend's TLS into the server configuration.
func (t *TLS) apply(c *config.Config) {
	if t == nil {
		return
	}
	server := config.ServerTLS{CertFile: t.CertFile, KeyFile: t.KeyFile}
	if t.ClientCAFile != "" {
		server.RequireClientAuth = true
		server.ClientCAFiles = []string{t.ClientCAFile}
	}
	client := config.ClientTLS{RootCAFiles: []string{t.CAFile}}
	c.Global.TLS.Frontend = config.GroupTLS{Server: server, Client: client}
	c.Global.TLS.SystemWorker = config.WorkerTLS{CertFile: t.ClientCertFile, KeyFile: t.ClientKeyFile, Client: client}
}

// clientConfig is the TLS of the server's own SDK clients (nil: none).
func (t *TLS) clientConfig() (*tls.Config, error) {
	if t == nil {
		return nil, nil
	}
	pem, err := os.ReadFile(t.CAFile)
	if err != nil {
		return nil, fmt.Errorf("devserver: TLS CA: %w", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("devserver: TLS CA %s holds no PEM certificate", t.CAFile)
	}
	c := &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	if t.ClientCertFile != "" {
		cert, err := tls.LoadX509KeyPair(t.ClientCertFile, t.ClientKeyFile)
		if err != nil {
			return nil, fmt.Errorf("devserver: TLS client certificate: %w", err)
		}
		c.Certificates = []tls.Certificate{cert}
	}
	return c, nil
}

// uiConfig is the Web UI's TLS towards the frontend.
func (t *TLS) uiConfig() uiconfig.TLS {
	if t == nil {
		return uiconfig.TLS{}
	}
	return uiconfig.TLS{CaFile: t.CAFile, CertFile: t.ClientCertFile, KeyFile: t.ClientKeyFile, EnableHostVerification: true}
}
