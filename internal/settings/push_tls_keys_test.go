package settings

import (
	"path/filepath"
	"strings"
	"testing"
)

// Spec 13.10.9: stream.pushTLS is auto by default and takes auto, on or
// off; a certificate and its key come as a pair and not with TLS off;
// each bad combination is a one-line error naming the key to fix.
func TestStreamPushTLS(t *testing.T) {
	if d := Defaults(); d.Stream.PushTLS != PushTLSAuto || d.Stream.PushCertFile != "" {
		t.Fatalf("defaults %+v", d.Stream)
	}
	for _, k := range Keys() {
		if strings.HasPrefix(k.Key, "stream.push") && k.Scope != ScopeWorker {
			t.Fatalf("%s scope %q", k.Key, k.Scope)
		}
	}
	home := t.TempDir()
	load := func(vars map[string]string) (Settings, error) {
		env := map[string]string{"DURABLE_AGENT_HOME": home}
		for k, v := range vars {
			env["DURABLE_AGENT_STREAM_"+k] = v
		}
		return loadEnv(t, env)
	}
	for _, ok := range []map[string]string{
		{"PUSHTLS": "on"}, {"PUSHTLS": "off"}, {"PUSHTLS": "auto"},
		{"PUSHCERTFILE": "/etc/push/cert.pem", "PUSHKEYFILE": "/etc/push/key.pem"},
		{"PUSHCERTFILE": "/c.pem", "PUSHKEYFILE": "/k.pem", "PUSHTLS": "on"},
	} {
		if _, err := load(ok); err != nil {
			t.Errorf("%v: %v", ok, err)
		}
	}
	s, err := load(map[string]string{"PUSHCERTFILE": "cert.pem", "PUSHKEYFILE": "key.pem"})
	if err != nil || !filepath.IsAbs(s.Stream.PushCertFile) || !filepath.IsAbs(s.Stream.PushKeyFile) {
		t.Errorf("relative files: %q %q, %v", s.Stream.PushCertFile, s.Stream.PushKeyFile, err)
	}
	for _, bad := range []struct {
		vars map[string]string
		key  string
	}{
		{map[string]string{"PUSHTLS": "yes"}, "stream.pushTLS"},
		{map[string]string{"PUSHCERTFILE": "/c.pem"}, "stream.pushKeyFile"},
		{map[string]string{"PUSHKEYFILE": "/k.pem"}, "stream.pushCertFile"},
		{map[string]string{"PUSHCERTFILE": "/c.pem", "PUSHKEYFILE": "/k.pem", "PUSHTLS": "off"}, "stream.pushTLS"},
	} {
		_, err := load(bad.vars)
		if err == nil || !strings.Contains(err.Error(), bad.key+":") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%v: error %v, want one line naming %s", bad.vars, err, bad.key)
		}
	}
}
