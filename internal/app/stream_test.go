package app

import (
	"testing"
	"time"

	"github.com/durableagent/durableagent/internal/settings"
)

// Live output's cadence comes from stream.intervalMs everywhere: the
// worker's heartbeat throttle (default and max: one heartbeat RPC per
// interval per running call) and the activities' liveness interval.
func TestStreamInterval_WorkerAndActivities(t *testing.T) {
	cases := []struct {
		name       string
		intervalMs int64
		want       time.Duration
	}{
		{"default", settings.Defaults().Stream.IntervalMs, 200 * time.Millisecond},
		{"150 ms", 150, 150 * time.Millisecond},
		{"unset falls back on the heartbeat bound", 0, time.Second},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := settings.Defaults()
			s.DataDir = t.TempDir()
			s.Stream.IntervalMs = c.intervalMs
			o := WorkerOptions(s)
			if o.MaxHeartbeatThrottleInterval != c.want || o.DefaultHeartbeatThrottleInterval != c.want {
				t.Fatalf("throttle default %s max %s, want %s", o.DefaultHeartbeatThrottleInterval, o.MaxHeartbeatThrottleInterval, c.want)
			}
			acts, err := NewActivities(s)
			if err != nil {
				t.Fatal(err)
			}
			if acts.HeartbeatInterval != c.want {
				t.Fatalf("activities heartbeat interval %s, want %s", acts.HeartbeatInterval, c.want)
			}
		})
	}
}
