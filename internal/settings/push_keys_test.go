package settings

import (
	"strings"
	"testing"
)

// stream.push is off by default (worker --dev too), a worker
// key, takes host:port or off, and a bad value is a one-line error
// naming the key.
func TestStreamPush(t *testing.T) {
	if d := Defaults(); d.Stream.Push != "" {
		t.Fatalf("default stream.push = %q", d.Stream.Push)
	}
	for _, k := range Keys() {
		if k.Key == "stream.push" && k.Scope != ScopeWorker {
			t.Fatalf("stream.push scope %q", k.Scope)
		}
	}
	load := func(v string) (Settings, error) {
		env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "DURABLE_AGENT_STREAM_PUSH": v}
		return loadEnv(t, env)
	}
	for _, ok := range []string{"127.0.0.1:0", "0.0.0.0:7300", "off"} {
		if s, err := load(ok); err != nil || s.Stream.Push != ok {
			t.Errorf("%q: %q, %v", ok, s.Stream.Push, err)
		}
	}
	for _, bad := range []string{"7300", "host:port", "127.0.0.1:99999"} {
		_, err := load(bad)
		if err == nil || !strings.Contains(err.Error(), "stream.push") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}
