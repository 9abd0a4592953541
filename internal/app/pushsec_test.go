package app

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/live"
	"github.com/durableagent/durableagent/internal/settings"
)

// writePushCert writes a certificate and its key as PEM files.
func writePushCert(t *testing.T) (string, string) {
	t.Helper()
	cert, err := live.SelfSignedCert("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalECPrivateKey(cert.PrivateKey.(*ecdsa.PrivateKey))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "push.crt"), filepath.Join(dir, "push.key")
	if err := os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: cert.Certificate[0]}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certFile, keyFile
}

// Spec 13.10.9: the worker's push hub serves HTTPS by stream.pushTLS
// (auto: not on loopback, or with a certificate), pins the configured
// certificate, seals its lines with the payload codec, and a certificate
// or key it cannot read is a one-line error naming the key.
func TestServePush_Security(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "codec.key")
	if err := os.WriteFile(keyFile, bytes.Repeat([]byte{7}, 32), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(settings.EnvCodecKey, "")
	certFile, certKey := writePushCert(t)
	with := func(f func(*settings.Stream)) settings.Settings {
		s := settings.Defaults()
		s.Stream.Push = "127.0.0.1:0"
		f(&s.Stream)
		return s
	}
	withCodec := with(func(*settings.Stream) {})
	withCodec.Codec.KeyFile = keyFile
	cases := []struct {
		name   string
		s      settings.Settings
		scheme string
		sealed bool
		errKey string
	}{
		{name: "auto on loopback", s: with(func(*settings.Stream) {}), scheme: "http://"},
		{name: "on", s: with(func(st *settings.Stream) { st.PushTLS = settings.PushTLSOn }), scheme: "https://"},
		{name: "auto on every address", s: with(func(st *settings.Stream) { st.Push = "0.0.0.0:0" }), scheme: "https://"},
		{name: "off on every address", s: with(func(st *settings.Stream) { st.Push, st.PushTLS = "0.0.0.0:0", settings.PushTLSOff }), scheme: "http://"},
		{name: "auto with a certificate", s: with(func(st *settings.Stream) { st.PushCertFile, st.PushKeyFile = certFile, certKey }), scheme: "https://"},
		{name: "codec key", s: withCodec, scheme: "http://", sealed: true},
		{name: "missing certificate", s: with(func(st *settings.Stream) { st.PushCertFile, st.PushKeyFile = certFile+".gone", certKey }), errKey: "stream.pushCertFile"},
		{name: "missing key", s: with(func(st *settings.Stream) { st.PushCertFile, st.PushKeyFile = certFile, certKey+".gone" }), errKey: "stream.pushKeyFile"},
		{name: "key of another file", s: with(func(st *settings.Stream) { st.PushCertFile, st.PushKeyFile = certFile, certFile }), errKey: "stream.pushCertFile"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h, err := ServePush(tc.s)
			if tc.errKey != "" {
				if err == nil || !strings.HasPrefix(err.Error(), tc.errKey) || strings.Contains(err.Error(), "\n") {
					t.Fatalf("error %v, want one line naming %s", err, tc.errKey)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer h.Close()
			p, unpublish := h.Publish(live.NewModel("e1", 0))
			defer unpublish()
			if !strings.HasPrefix(p.URL, tc.scheme) || p.Sealed != tc.sealed || (tc.scheme == "https://") != (p.CertSHA256 != "") {
				t.Fatalf("push %+v, want %s, sealed %v", p, tc.scheme, tc.sealed)
			}
			if tc.s.Stream.PushCertFile != "" {
				pemBytes, _ := os.ReadFile(certFile)
				b, _ := pem.Decode(pemBytes)
				if p.CertSHA256 != live.CertFingerprint(b.Bytes) {
					t.Fatal("the push does not pin the configured certificate")
				}
			}
		})
	}
}

// Spec 13.10.9: worker --dev pushes on loopback unless stream.push says
// otherwise; any other worker pushes only where stream.push says.
func TestServePush_DevDefault(t *testing.T) {
	for _, tc := range []struct {
		name   string
		push   string
		dev    bool
		pushes bool
	}{
		{"dev, unset: loopback", "", true, true},
		{"dev, off", "off", true, false},
		{"not dev, unset", "", false, false},
		{"not dev, set", "127.0.0.1:0", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var s settings.Settings
			s.Stream.Push = tc.push
			h, err := servePush(s, tc.dev)
			if err != nil {
				t.Fatal(err)
			}
			if (h != nil) != tc.pushes {
				t.Fatalf("hub %v, want pushing %t", h, tc.pushes)
			}
			if h == nil {
				return
			}
			defer h.Close()
			if !strings.HasPrefix(h.URL(), "http://127.0.0.1:") {
				t.Fatalf("hub at %s, want plain HTTP on loopback", h.URL())
			}
		})
	}
}
