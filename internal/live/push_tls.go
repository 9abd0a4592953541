package live

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"

	"go.temporal.io/sdk/converter"
)

// TLS on the push path (spec 13.10.9, docs/live.md "Security"): a hub may
// serve HTTPS with a configured or self-signed certificate; its SHA-256
// fingerprint travels in the heartbeat details (Push.CertSHA256), which
// come through Temporal, and the follower accepts that certificate and no
// other.

// HubOptions are a hub's security options. The zero value serves plain
// HTTP and sends each line in clear JSON.
type HubOptions struct {
	// Converter seals each line as a Temporal payload: the worker's data
	// converter with its payload codec (push_codec.go), so that the
	// stream carries nothing in clear that the heartbeats carry
	// encrypted. Nil: lines in clear JSON.
	Converter converter.DataConverter
	// TLS serves HTTPS.
	TLS bool
	// Cert is the certificate HTTPS serves (nil with TLS: a self-signed
	// one made at start for the advertised host).
	Cert *tls.Certificate
}

// ErrPushCertMismatch: the push hub's TLS certificate is not the one the
// call's heartbeat details name.
var ErrPushCertMismatch = errors.New("the push hub's TLS certificate does not match the fingerprint in the heartbeat details")

// secure wraps ln in TLS when o asks for it, for a hub advertised as
// host; it returns the URL scheme and the certificate's fingerprint
// ("" for plain HTTP).
func (o HubOptions) secure(ln net.Listener, host string) (net.Listener, string, string, error) {
	if !o.TLS {
		return ln, "http", "", nil
	}
	cert := o.Cert
	if cert == nil {
		c, err := SelfSignedCert(host)
		if err != nil {
			return nil, "", "", err
		}
		cert = &c
	}
	if len(cert.Certificate) == 0 {
		return nil, "", "", errors.New("live push: the TLS certificate is empty")
	}
	cfg := &tls.Config{
		Certificates: []tls.Certificate{*cert},
		MinVersion:   tls.VersionTLS12,
		// HTTP/1.1: one streaming response per connection, the write
		// deadlines and flushes the hub relies on.
		NextProtos: []string{"http/1.1"},
	}
	return tls.NewListener(ln, cfg), "https", CertFingerprint(cert.Certificate[0]), nil
}

// CertFingerprint is the lower-case hex SHA-256 of a DER certificate.
func CertFingerprint(der []byte) string {
	sum := sha256.Sum256(der)
	return hex.EncodeToString(sum[:])
}

// SelfSignedCert makes an ECDSA P-256 certificate for host (a name or an
// IP address), valid for a year: followers pin its fingerprint, so no CA
// signs it and it lives as long as the hub.
func SelfSignedCert(host string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("live push: self-signed certificate key: %w", err)
	}
	now := time.Now()
	tmpl := &x509.Certificate{ // no SerialNumber: CreateCertificate draws one
		Subject:     pkix.Name{CommonName: "durable-agent live push " + host},
		NotBefore:   now.Add(-time.Hour),
		NotAfter:    now.Add(365 * 24 * time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else if host != "" {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("live push: self-signed certificate: %w", err)
	}
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, nil
}

// pinned holds the followers' HTTP clients of pinned certificates, one
// per fingerprint (each keeps its own idle connections).
var pinned struct {
	sync.Mutex
	clients map[string]*http.Client
}

// maxPinnedClients bounds pinned: a process follows few hubs at once,
// and each worker restart makes a new certificate.
const maxPinnedClients = 64

// clientFor is the HTTP client of p's stream: PushClient, or for an
// https URL with a fingerprint, a client that accepts only that
// certificate.
func clientFor(p Push) *http.Client {
	if p.CertSHA256 == "" || len(p.URL) < 8 || p.URL[:8] != "https://" {
		return PushClient
	}
	pinned.Lock()
	defer pinned.Unlock()
	if c := pinned.clients[p.CertSHA256]; c != nil {
		return c
	}
	if pinned.clients == nil || len(pinned.clients) >= maxPinnedClients {
		for _, c := range pinned.clients {
			c.CloseIdleConnections()
		}
		pinned.clients = map[string]*http.Client{}
	}
	tr := pushTransport.Clone()
	want := p.CertSHA256
	tr.TLSClientConfig = &tls.Config{
		MinVersion: tls.VersionTLS12,
		// The chain is not verified against a CA: the certificate is
		// authenticated by its fingerprint, which came through Temporal
		// (VerifyConnection runs on every handshake, resumed ones too).
		InsecureSkipVerify: true,
		VerifyConnection: func(cs tls.ConnectionState) error {
			if len(cs.PeerCertificates) == 0 {
				return fmt.Errorf("%w: it sent none", ErrPushCertMismatch)
			}
			if got := CertFingerprint(cs.PeerCertificates[0].Raw); got != want {
				return fmt.Errorf("%w: got sha256 %.16s…, want %.16s…", ErrPushCertMismatch, got, want)
			}
			return nil
		},
	}
	c := &http.Client{Transport: tr}
	pinned.clients[want] = c
	return c
}
