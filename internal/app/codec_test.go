package app

import (
	"bytes"
	"encoding/base64"
	"errors"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/codec"
	"github.com/durableagent/durableagent/internal/settings"
)

// The codec server (worker --dev, worker-cluster) runs when asked (or
// with --dev and a key), only on
// loopback, never without a key when asked explicitly, and never with
// "off".
func TestServeCodec(t *testing.T) {
	keyFile := filepath.Join(t.TempDir(), "codec.key")
	if err := os.WriteFile(keyFile, []byte(base64.StdEncoding.EncodeToString(bytes.Repeat([]byte{1}, 32))), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv(settings.EnvCodecKey, "") // only the key file counts here
	withKey := settings.Defaults()
	withKey.Codec.KeyFile = keyFile
	noKey := settings.Defaults()
	cases := []struct {
		name    string
		s       settings.Settings
		addr    string
		dev     bool
		serves  bool
		wantErr error
		errText string
	}{
		{name: "explicit address with a key", s: withKey, addr: "127.0.0.1:0", serves: true},
		{name: "off with dev and a key", s: withKey, dev: true, addr: CodecServerOff},
		{name: "no flag without dev", s: withKey},
		{name: "dev without a key", s: noKey, dev: true},
		{name: "explicit address without a key", s: noKey, addr: "127.0.0.1:0", errText: "no codec key is configured"},
		{name: "explicit address not loopback", s: withKey, addr: "0.0.0.0:0", wantErr: codec.ErrNotLoopback},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv, err := ServeCodec(tc.s, tc.addr, tc.dev, nil, nil)
			if srv != nil {
				defer srv.Close()
			}
			switch {
			case tc.wantErr != nil:
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("error %v, want %v", err, tc.wantErr)
				}
				return
			case tc.errText != "":
				if err == nil || !strings.Contains(err.Error(), tc.errText) {
					t.Fatalf("error %v, want one containing %q", err, tc.errText)
				}
				return
			case err != nil:
				t.Fatal(err)
			}
			if (srv != nil) != tc.serves {
				t.Fatalf("codec server running: %v, want %v", srv != nil, tc.serves)
			}
			if !tc.serves {
				return
			}
			resp, err := http.Post(srv.URL()+"/decode", "application/json", strings.NewReader(`{"payloads":[]}`))
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusOK {
				t.Fatalf("codec server answered %d", resp.StatusCode)
			}
		})
	}
}
