package client

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/durableagent/durableagent/internal/settings"
)

type mapEnv map[string]string

func (m mapEnv) LookupEnv(k string) (string, bool) { v, ok := m[k]; return v, ok }
func (m mapEnv) Environ() []string {
	var out []string
	for k, v := range m {
		out = append(out, k+"="+v)
	}
	return out
}

// The client profile (temporal.toml, TEMPORAL_*) is the base; settings
// that differ from their defaults win over it.
func TestClientOptions_ProfileUnderSettings(t *testing.T) {
	toml := filepath.Join(t.TempDir(), "temporal.toml")
	if err := os.WriteFile(toml, []byte(`
[profile.default]
address = "file.example:7233"
namespace = "from-file"
[profile.cloud]
address = "ns.acct.tmprl.cloud:7233"
namespace = "ns.acct"
api_key = "k-123"
`), 0o600); err != nil {
		t.Fatal(err)
	}
	def := settings.Defaults()
	set := def
	set.Temporal.Address, set.Temporal.Namespace = "mine.example:7233", "mine"
	for _, c := range []struct {
		name           string
		s              settings.Settings
		env            mapEnv
		addr, ns       string
		tls, apiKey    bool
		wantErrContain string
	}{
		{name: "nothing configured", s: def, env: mapEnv{}, addr: "127.0.0.1:7233", ns: "default"},
		{name: "default profile of the file", s: def, env: mapEnv{"TEMPORAL_CONFIG_FILE": toml}, addr: "file.example:7233", ns: "from-file"},
		{name: "variables over the file", s: def, env: mapEnv{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_ADDRESS": "env.example:7233"},
			addr: "env.example:7233", ns: "from-file"},
		{name: "settings over the profile", s: set, env: mapEnv{"TEMPORAL_CONFIG_FILE": toml}, addr: "mine.example:7233", ns: "mine"},
		{name: "API key turns TLS on", s: def, env: mapEnv{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_PROFILE": "cloud"},
			addr: "ns.acct.tmprl.cloud:7233", ns: "ns.acct", tls: true, apiKey: true},
		{name: "API key by variable", s: def, env: mapEnv{"TEMPORAL_ADDRESS": "x:7233", "TEMPORAL_API_KEY": "k"},
			addr: "x:7233", ns: "default", tls: true, apiKey: true},
		{name: "TLS on by variable", s: def, env: mapEnv{"TEMPORAL_TLS": "true"}, addr: "127.0.0.1:7233", ns: "default", tls: true},
		{name: "missing profile", s: def, env: mapEnv{"TEMPORAL_CONFIG_FILE": toml, "TEMPORAL_PROFILE": "nope"},
			wantErrContain: "temporal client profile: unable to find profile nope"},
		{name: "unreadable CA", s: def, env: mapEnv{"TEMPORAL_TLS_SERVER_CA_CERT_PATH": "/nonexistent/ca.pem"},
			wantErrContain: "temporal client profile for 127.0.0.1:7233: invalid TLS config"},
	} {
		t.Run(c.name, func(t *testing.T) {
			opts, err := ClientOptions(c.s, c.env)
			if c.wantErrContain != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErrContain) {
					t.Fatalf("err = %v, want %q", err, c.wantErrContain)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if opts.HostPort != c.addr || opts.Namespace != c.ns {
				t.Errorf("address %s namespace %s, want %s %s", opts.HostPort, opts.Namespace, c.addr, c.ns)
			}
			if (opts.ConnectionOptions.TLS != nil) != c.tls || (opts.Credentials != nil) != c.apiKey {
				t.Errorf("TLS %v API key %v, want %v %v", opts.ConnectionOptions.TLS != nil, opts.Credentials != nil, c.tls, c.apiKey)
			}
		})
	}
}
