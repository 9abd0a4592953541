package app

import (
	"crypto/tls"
	"fmt"
	"net"
	"os"
	"strings"

	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/egress"
	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/settings"
)

// pushHubOptions are the security options of the push hub on addr (spec
// 13.10.9): its lines sealed with the payload codec of the settings, if
// any; HTTPS by stream.pushTLS (auto: when addr is not loopback or a
// certificate is configured), with stream.pushCertFile/pushKeyFile or a
// self-signed certificate. It also says what it chose, for the worker's
// start line.
func pushHubOptions(s settings.Settings, addr string) (live.HubOptions, string, error) {
	var o live.HubOptions
	var says []string
	cdc, err := codec.FromSettings(s)
	if err != nil {
		return o, "", err
	}
	if cdc != nil {
		o.Converter = cdc.DataConverter()
		says = append(says, "lines sealed with the payload codec, key id "+cdc.KeyID())
	}
	st := s.Stream
	switch st.PushTLS {
	case settings.PushTLSOn:
		o.TLS = true
	case settings.PushTLSOff:
	default: // auto: unless it listens on loopback only
		host, _, err := net.SplitHostPort(addr)
		o.TLS = st.PushCertFile != "" || err != nil || !egress.LoopbackHost(host)
	}
	switch {
	case !o.TLS:
		says = append(says, "plain HTTP")
	case st.PushCertFile != "":
		cert, err := loadPushCert(st)
		if err != nil {
			return o, "", err
		}
		o.Cert = &cert
		says = append(says, "HTTPS with "+st.PushCertFile)
	default:
		says = append(says, "HTTPS with a self-signed certificate")
	}
	return o, strings.Join(says, ", "), nil
}

// loadPushCert reads the push hub's certificate and key; an error names
// the key of the file at fault.
func loadPushCert(st settings.Stream) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(st.PushCertFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("stream.pushCertFile: %w", err)
	}
	keyPEM, err := os.ReadFile(st.PushKeyFile)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("stream.pushKeyFile: %w", err)
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return tls.Certificate{}, fmt.Errorf("stream.pushCertFile %s with stream.pushKeyFile %s: %w", st.PushCertFile, st.PushKeyFile, err)
	}
	return cert, nil
}
