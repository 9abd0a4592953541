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
	return loadEnv(t, env)
}

// otel.captureContent is false by default and a bool; anything else is a
// one-line error naming the key.
func TestOtelCaptureContent(t *testing.T) {
	if Defaults().Otel.CaptureContent {
		t.Fatal("otel.captureContent is on by default")
	}
	env := map[string]string{"DURABLE_AGENT_HOME": t.TempDir(), "DURABLE_AGENT_OTEL_CAPTURECONTENT": "true"}
	load := func() (Settings, error) {
		return loadEnv(t, env)
	}
	if s, err := load(); err != nil || !s.Otel.CaptureContent {
		t.Fatalf("true: %v %v", s.Otel.CaptureContent, err)
	}
	env["DURABLE_AGENT_OTEL_CAPTURECONTENT"] = "maybe"
	if _, err := load(); err == nil || !strings.Contains(err.Error(), "otel.captureContent") || strings.Contains(err.Error(), "\n") {
		t.Errorf("maybe: error %v", err)
	}
}
