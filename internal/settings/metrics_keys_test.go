package settings

import (
	"strings"
	"testing"
)

// metrics.listen is off by default, takes host:port or off, and a bad
// value is a one-line error naming the key.
func TestMetricsListen(t *testing.T) {
	if d := Defaults(); d.Metrics.Listen != "" {
		t.Fatalf("default metrics.listen = %q", d.Metrics.Listen)
	}
	for _, ok := range []string{"127.0.0.1:9464", ":9464", "off", "127.0.0.1:0"} {
		s, err := loadMetrics(t, ok)
		if err != nil || s.Metrics.Listen != ok {
			t.Errorf("%q: %q, %v", ok, s.Metrics.Listen, err)
		}
	}
	for _, bad := range []string{"9464", "localhost:http", "127.0.0.1:70000"} {
		_, err := loadMetrics(t, bad)
		if err == nil || !strings.Contains(err.Error(), "metrics.listen") || strings.Contains(err.Error(), "\n") {
			t.Errorf("%q: error %v", bad, err)
		}
	}
}

func loadMetrics(t *testing.T, listen string) (Settings, error) {
	env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "DURABLE_AGENT_METRICS_LISTEN": listen}
	return Load(LoadOptions{Env: func(k string) (string, bool) { v, ok := env[k]; return v, ok }})
}
